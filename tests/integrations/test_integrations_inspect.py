"""inspect_ai scorer and task factory, end to end with the real inspect_ai and
its built-in mock model (no network): the eval log holds our O-EVAL, status and
gate verdicts as score metadata, equal to what ``mmverify score`` reports."""
import json

from tests.helpers.integrations_util import cli_reward, cli_score, oracle_path, oracle_text, require

inspect_ai = require("inspect_ai")

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.log import read_eval_log  # noqa: E402
from inspect_ai.model import ModelOutput, ModelUsage, get_model  # noqa: E402

from mmverify.integrations.inspect import mmverify_task  # noqa: E402
from mmverify.tasks import load_task  # noqa: E402

DRAGON, LAMPREY, VEG = "cumcm-2024-a-dragon-dance", "mcm-2024-a-lamprey", "cumcm-2023-c-vegetable-pricing"


def infeasible_dragon() -> str:
    data = json.loads(oracle_text(DRAGON))
    data["experiment_result"]["q5"]["max_head_speed_mps"] = 1.5   # breaks the 2 m/s handle limit
    return json.dumps(data)


REPLIES = {
    DRAGON: "Reasoning first.\n```json\n" + infeasible_dragon() + "\n```",
    LAMPREY: "```json\n" + oracle_text(LAMPREY) + "\n```",
    VEG: "I could not finish the model.",
}


def mock_model():
    """mockllm answering each prompt by the task id the prompt names."""

    def reply(messages, tools, tool_choice, config):
        prompt = messages[-1].text
        (task_id,) = [t for t in REPLIES if f"Task id: `{t}`" in prompt]
        out = ModelOutput.from_content(model="mockllm", content=REPLIES[task_id])
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tokenizer needed
        return out

    return get_model("mockllm/model", custom_outputs=reply)


def test_eval_log_holds_oeval_status_and_gate_verdicts(tmp_path):
    task = mmverify_task(task_ids=list(REPLIES))
    sample = {s.id: s for s in task.dataset}[DRAGON]
    assert "## Problem statement" in sample.input and load_task(DRAGON).artifact_schema["title"] in sample.input
    (log,) = inspect_eval(task, model=mock_model(), log_dir=str(tmp_path), display="none")
    assert log.status == "success"
    log = read_eval_log(log.location)              # what was written to disk
    scores = {s.id: next(iter(s.scores.values())) for s in log.samples}
    assert set(scores) == set(REPLIES)

    bad_path = tmp_path / "dragon.json"
    bad_path.write_text(infeasible_dragon(), encoding="utf-8")
    dragon = scores[DRAGON]
    report = cli_score(DRAGON, str(bad_path))
    assert dragon.value == cli_reward(DRAGON, str(bad_path)) == 0
    assert dragon.metadata["status"] == report["status"] == "infeasible"
    assert dragon.metadata["oeval"] == report["oeval"] and dragon.metadata["error"]["code"] == "hard_gate_failed"
    assert dragon.metadata["gate_counts"] == report["gates"]["counts"]
    verdicts = {(g["gate"], g["index"]): g["verdict"] for g in dragon.metadata["gates"]}
    assert verdicts == {(i["gate"], i["index"]): i["verdict"] for i in report["gates"]["instances"]}
    assert verdicts[("q5.handle_speed_limit", None)] == "fail"

    lamprey = scores[LAMPREY]
    assert lamprey.value == cli_reward(LAMPREY, oracle_path(LAMPREY)) == 1.0
    assert lamprey.metadata["status"] == "scored" and lamprey.metadata["gate_counts"]["hard_failures"] == 0
    assert all(g["verdict"] == "pass" for g in lamprey.metadata["gates"] if g["severity"] == "hard")

    veg = scores[VEG]
    assert veg.value == 0 and veg.metadata["status"] == "error"
    assert veg.metadata["error"]["code"] == "no_artifact" and veg.metadata["gates"] == []

    mean = log.results.scores[0].metrics["mean"].value
    assert abs(mean - sum(s.value for s in scores.values()) / 3) < 1e-12
