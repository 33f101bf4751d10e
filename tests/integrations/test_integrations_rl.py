"""RL reward functions (TRL ``reward_funcs``, verl ``compute_score``) and the
artifact extractor: called exactly as each framework calls them, and always
equal to what ``mmverify score`` gives for the same artifact."""
import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.helpers.integrations_util import cli_reward, cli_score, oracle_path, oracle_text

from mmverify.reading.artifact import parse_bytes
from mmverify.integrations.extract import extract_artifact
from mmverify.integrations.rl import (
    SHAPED_WEIGHT, compute_score, compute_score_shaped, make_trl_reward, score_completion,
    score_completions, trl_reward_func, trl_shaped_reward_func)
from mmverify.tasks import TaskLoadError

DRAGON = "cumcm-2024-a-dragon-dance"
TASKS = [DRAGON, "mcm-2024-a-lamprey", "cumcm-2023-c-vegetable-pricing"]


def fenced(text: str, prose: str = "Here is the artifact.") -> str:
    return f"{prose}\n\n```json\n{text}\n```\n"


def dragon(**q5) -> dict:
    data = json.loads(oracle_text(DRAGON))
    data["experiment_result"]["q5"].update(q5)
    return data


def write(tmp_path, name: str, data) -> str:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return str(path)


def trl_call(func, completions, task_ids, **columns):
    """The call GRPOTrainer makes: prompts, completions, completion ids, the
    trainer state and every extra dataset column, one value per completion."""
    n = len(completions)
    return func(prompts=[[{"role": "user", "content": "solve"}]] * n, completions=completions,
                completion_ids=[[1, 2, 3]] * n, trainer_state=None, task_id=task_ids, **columns)


def verl_call(func, solution_str, task_id, **extra):
    """The call verl's reward manager makes (keywords, one response at a time)."""
    return func(data_source="mmverify", solution_str=solution_str, ground_truth=task_id,
                extra_info={"split": "train", "index": 0, **extra})


# ------------------------------------------------------------------ TRL / verl

def test_trl_oracles_score_one_as_text_and_as_chat_messages():
    texts = [fenced(oracle_text(t)) for t in TASKS]
    chats = [[{"role": "assistant", "content": fenced(oracle_text(t))}] for t in TASKS]
    assert [cli_reward(t, oracle_path(t)) for t in TASKS] == [1.0] * len(TASKS)
    assert trl_call(trl_reward_func, texts, TASKS, answer=["x"] * 3) == [1.0] * len(TASKS)
    assert trl_call(trl_reward_func, chats, TASKS) == [1.0] * len(TASKS)
    assert trl_call(trl_shaped_reward_func, chats[1:], TASKS[1:]) == [1.0] * (len(TASKS) - 1)


def test_trl_equals_mmverify_score_on_infeasible_partial_and_broken_answers(tmp_path):
    infeasible = dragon(max_head_speed_mps=1.5)           # 1.5 * ratio_max > 2 m/s: hard gate
    partial = dragon()
    del partial["experiment_result"]["q2"]["terminal_time_s"]  # feasible, one scored answer missing
    invalid = dragon(max_head_speed_mps="fast")           # breaks the schema
    cases = [infeasible, partial, invalid]
    files = [write(tmp_path, f"a{i}.json", c) for i, c in enumerate(cases)]
    expected = [cli_reward(DRAGON, f) for f in files]
    assert expected[0] == 0 and expected[2] == 0 and 0 < expected[1] < 1
    got = trl_call(trl_reward_func, [fenced(json.dumps(c)) for c in cases], [DRAGON] * 3)
    assert got == expected
    assert [verl_call(compute_score, json.dumps(c), DRAGON) for c in cases] == expected


def test_hard_gate_is_a_multiplier_and_the_reason_is_kept(tmp_path):
    s = score_completion(DRAGON, fenced(json.dumps(dragon(max_head_speed_mps=1.5))))
    report = cli_score(DRAGON, write(tmp_path, "x.json", dragon(max_head_speed_mps=1.5)))
    assert (s.reward, s.status, s.gate_multiplier) == (0.0, "infeasible", 0) == (report["oeval"], report["status"], 0)
    assert s.closeness > 0 and abs(s.closeness - report["closeness_oeval"]) < 1e-6   # close, but infeasible
    assert "q5.handle_speed_limit" in s.reason and s.reason.startswith("hard_gate_failed")
    ok = score_completion(DRAGON, fenced(oracle_text(DRAGON)))
    assert (ok.gate_multiplier, ok.reason, ok.reward) == (1, None, ok.gate_multiplier * ok.closeness)


def test_shaped_reward_is_partial_credit_for_feasibility_not_the_headline():
    infeasible = score_completion(DRAGON, json.dumps(dragon(max_head_speed_mps=1.5)))
    hard = [i for i in infeasible.report.gates.instances if i.hard]
    share = sum(i.verdict == "pass" for i in hard) / len(hard)
    assert 0 < infeasible.feasibility == share < 1
    assert infeasible.reward == 0 < infeasible.shaped() == SHAPED_WEIGHT * share < SHAPED_WEIGHT
    assert verl_call(compute_score_shaped, json.dumps(dragon(max_head_speed_mps=1.5)), DRAGON) == infeasible.shaped()
    assert infeasible.shaped(0.0) == infeasible.reward
    nothing = score_completion(DRAGON, "I could not solve it.")
    assert nothing.shaped() == nothing.feasibility == 0
    with pytest.raises(ValueError):
        infeasible.shaped(1.5)


def test_no_parseable_artifact_scores_zero_with_the_reason():
    cases = {"no JSON at all": "no_artifact",
             fenced('{"experiment_result": {"q1": '): "malformed_json",
             fenced('{"a": 1, "a": 2}'): "duplicate_key",
             fenced('{"a": NaN}'): "non_finite_number"}
    assert trl_call(trl_reward_func, list(cases), [DRAGON] * len(cases)) == [0.0] * len(cases)
    for text, code in cases.items():
        s = score_completion(DRAGON, text)
        assert (s.reward, s.status) == (0.0, "error") and s.reason.startswith(code + ":"), s.reason
        assert verl_call(compute_score, text, DRAGON) == 0.0


def test_task_id_column_and_errors_of_the_call():
    f = make_trl_reward(column="problem")
    assert f([fenced(oracle_text(DRAGON))], problem=[DRAGON]) == [1.0]
    assert f.__name__ == "mmverify_reward" and trl_shaped_reward_func.__name__ == "mmverify_shaped_reward"
    with pytest.raises(ValueError, match="task_id"):
        trl_reward_func(["{}"])
    with pytest.raises(ValueError, match="2 task ids for 1"):
        trl_reward_func(["{}"], task_id=[DRAGON, DRAGON])
    with pytest.raises(TaskLoadError):
        trl_reward_func(["{}"], task_id=["no-such-task"])
    assert compute_score("any", fenced(oracle_text(DRAGON)), None, {"task_id": DRAGON}) == 1.0
    with pytest.raises(ValueError, match="ground_truth"):
        compute_score("any", "{}", None)
    assert [s.reward for s in score_completions([fenced(oracle_text(DRAGON))] * 2, DRAGON)] == [1.0, 1.0]


def test_using_the_reward_functions_needs_no_trainer_package():
    tid = "mcm-2024-a-lamprey"
    code = ("import sys, json; from mmverify.integrations.rl import trl_reward_func, compute_score; "
            f"t = open({oracle_path(tid)!r}).read(); "
            f"assert trl_reward_func([t], task_id=[{tid!r}]) == [1.0]; "
            f"assert compute_score('mmverify', t, {tid!r}) == 1.0; "
            "heavy = [m for m in ('torch', 'trl', 'verl', 'transformers', 'inspect_ai') if m in sys.modules]; "
            "assert not heavy, heavy; print('ok')")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


# ------------------------------------------------------------------ extractor

def test_last_candidate_wins_fenced_or_bare():
    first, last = json.dumps(dragon(max_head_speed_mps=1.5)), oracle_text(DRAGON)
    assert score_completion(DRAGON, fenced(first) + fenced(last)).reward == 1.0
    assert score_completion(DRAGON, fenced(last) + fenced(first)).reward == 0.0
    assert score_completion(DRAGON, fenced(first) + "so finally: " + last + " done").reward == 1.0
    assert score_completion(DRAGON, last + "\nOops, a revision:\n" + fenced(first)).reward == 0.0
    # the last candidate wins even when it does not parse
    assert score_completion(DRAGON, fenced(last) + fenced('{"broken": ')).status == "error"


def test_other_code_blocks_and_non_assistant_messages_are_ignored():
    code = "```python\nresult = {\"experiment_result\": 1}\nprint(result)\n```\n"
    ex = extract_artifact(fenced(oracle_text(DRAGON)) + "\nThe script I used:\n" + code)
    assert ex.ok and ex.kind == "fenced" and ex.artifact.sha256 == parse_bytes(oracle_text(DRAGON).strip().encode()).sha256
    chat = [{"role": "user", "content": '{"user": "json"}'},
            {"role": "assistant", "content": [{"type": "text", "text": fenced(oracle_text(DRAGON))}]}]
    assert extract_artifact(chat).ok
    assert not extract_artifact([{"role": "user", "content": oracle_text(DRAGON)}]).ok
    bare = extract_artifact("answer: " + '{"a": [1, {"b": 2}]}' + " and a set {1, 2}")
    assert bare.kind == "bare" and bare.artifact.data == {"a": [1, {"b": 2}]}
    assert extract_artifact("```\n" + '{"u": 1}' + "\n```").kind == "fenced"
    with pytest.raises(TypeError):
        extract_artifact(42)


prose = st.text(alphabet=st.characters(blacklist_characters="{}`", blacklist_categories=("Cs",)), max_size=200)


@settings(max_examples=40, deadline=None)
@given(before=prose, after=prose, bare=st.booleans())
def test_prose_around_the_artifact_never_changes_what_is_extracted(before, after, bare):
    body = oracle_text("mcm-2024-a-lamprey").strip()
    text = before + ("\n" + body + "\n" if bare else "\n" + fenced(body) + "\n") + after
    ex = extract_artifact(text)
    assert ex.ok and ex.artifact.data == parse_bytes(body.encode()).data


@pytest.mark.parametrize("text, code", [
    ('{"a":' * 5000, "too_many_candidates"),                  # deep nesting: never a RecursionError
    ('{"x": 1, ' * 5000, "too_many_candidates"),              # more openings than are searched
    ("{" * 100000, "no_artifact"),                             # braces that open nothing
    ('{"a": "' + "x" * 100000, "no_artifact"),                 # an unterminated string
    ("```json\n" + '{"a": 1' * 2000, "too_deep"),             # unterminated fence: read to the end
    ("x" * (2 * 1024 * 1024), "too_large"),
])
def test_hostile_completions_give_a_reason_never_an_exception(text, code):
    ex = extract_artifact(text)
    assert not ex.ok and ex.artifact.code == code, ex.reason
    s = score_completion("mcm-2024-a-lamprey", text)
    assert s.reward == 0.0 and s.reason.startswith(code + ":")


def test_a_fenced_artifact_after_brace_heavy_prose_is_found():
    noise = '{"x": 1, ' * 5000           # would exhaust the bare-object search on its own
    assert score_completion(DRAGON, noise + fenced(oracle_text(DRAGON))).reward == 1.0


def test_a_completion_that_produced_nothing_is_one_zero_row_of_its_batch():
    scores = score_completions([fenced(oracle_text(DRAGON)), None, fenced(oracle_text(DRAGON))], DRAGON)
    assert [s.reward for s in scores] == [1.0, 0.0, 1.0]
    assert scores[1].status == "error" and scores[1].reason.startswith("no_artifact:")
    assert trl_call(trl_reward_func, [None], [DRAGON]) == [0.0]
