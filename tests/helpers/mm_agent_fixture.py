"""Run folders in MM-Agent's own layout, for the adapter tests.

``build_run`` writes ``MMAgent/output/MM-Agent/2024_C_<timestamp>/`` the way
MM-Agent does (``json/2024_C.json`` with ``tasks`` and the problem keys,
``code/main<k>.py``, ``markdown/``, an empty ``latex/``, ``usage/``), runs each
script with ``code/`` as its working folder, as MM-Agent does, and stores its
stdout as ``execution_result`` (cut to 2,000 characters). The content is ours:
three subtasks of MCM 2024 C (momentum in tennis) whose scripts print the
answer numbers in ordinary words and, when ``block`` is set, also save them
with the ``write_results`` function of ``mmverify adapt mm-agent --emit-prompt``.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

TASK = "mcm-2024-c-tennis-momentum"
STAMP = "2024_C_20260105-093000"

# the numbers each subtask computes (field path -> JSON text), by subtask number
NUMBERS = {
    1: {"experiment_result.data_source.points": "7284",
        "experiment_result.data_source.matches": "31",
        "experiment_result.momentum_model.final_momentum_range": "0.7895",
        # the witness the task's replay checks the statistics under
        "experiment_result.method": json.dumps({"series": "serve_adjusted_residual", "context_weight": 0.65,
                                                "ljung_box_lags": 8, "ewma_short_span": 6, "ewma_long_span": 22,
                                                "short_weight": 0.62})},
    2: {"experiment_result.randomness_tests.median_ljung_box_p": "0.712832",
        "experiment_result.randomness_tests.matches_rejecting_iid_at_5pct": "0",
        "experiment_result.randomness_tests.median_runs_p": "0.290172"},
    3: {"experiment_result.dual_temporal_bayes.strongest_transition.probability": "0.6726",
        "experiment_result.dual_temporal_bayes.swing_warning_rate": "0.0032",
        "experiment_result.dual_temporal_bayes.final_match_warning_rate": "0.006",
        "experiment_result.top_swing_features": json.dumps([
            {"feature": "p1_unf_err", "warning_correlation": 0.0302, "mean_when_warning": 0.3043,
             "mean_otherwise": 0.1257},
            {"feature": "p2_unf_err", "warning_correlation": -0.0223, "mean_when_warning": 0.0,
             "mean_otherwise": 0.1363},
            {"feature": "speed_mph", "warning_correlation": 0.0154, "mean_when_warning": 110.7391,
             "mean_otherwise": 100.773}])},
}

# how each script prints its numbers (what a real MM-Agent script prints: words, not paths)
PRINTED = {
    1: ["Loaded {points} points from {matches} matches",
        "Momentum range in the final: {final_momentum_range}"],
    2: ["Median Ljung-Box p-value: {median_ljung_box_p}",
        "Matches rejecting independence at 5%: {matches_rejecting_iid_at_5pct}",
        "Median runs-test p-value = {median_runs_p} \u00b1 0.05"],
    3: ["Strongest transition probability: {probability}",
        "Swing warning rate over all matches: {swing_warning_rate}",
        "Warning rate in the final: {final_match_warning_rate}",
        "Top feature: p1_unf_err (correlation 0.0302)"],
}

DESCRIPTIONS = {1: "Build the serve-corrected momentum score and measure its range in the final.",
                2: "Test the coach's claim that swings are random (Ljung-Box and runs tests).",
                3: "Fit the dual-temporal Bayesian transition model and rank swing features."}


def emitted_block(anchors_dir: str | None = None) -> str:
    from mmverify.plugin.mm_agent_prompt import emit_block
    from mmverify.tasks import load_task

    return emit_block(load_task(TASK, anchors_dir))


def script(k: int, block: str | None, fail: bool = False, extra: dict | None = None) -> str:
    """The text of code/main<k>.py."""
    values = {path.rsplit(".", 1)[1]: text for path, text in NUMBERS[k].items()}
    lines = ["# import necessary package", "import json", ""]
    if block:
        lines += block.rstrip("\n").split("\n") + [""]
    lines += [f"class Model{k}():", "    pass", "", "", f"def task{k}():"]
    lines += [f"    print({text.format(**values)!r})" for text in PRINTED[k]]
    if block:
        results = ", ".join(f"{p!r}: json.loads({t!r})" for p, t in {**NUMBERS[k], **(extra or {})}.items())
        lines.append(f"    write_results({{{results}}})")
    if fail:
        lines.append("    raise RuntimeError('singular matrix in the transition fit')")
    lines += ["    return", "", "", "if __name__ == '__main__':", f"    task{k}()", ""]
    return "\n".join(lines)


def build_run(base: str, *, block: bool = True, order=(2, 1, 3), fail=(), no_code: bool = False,
              stray: bool = False, anchors_dir: str | None = None) -> str:
    """Write and run an MM-Agent run folder under ``base``; returns its path."""
    root = os.path.join(base, "MMAgent", "output", "MM-Agent", STAMP)
    for sub in ("json", "markdown", "latex", "code", "usage"):
        os.makedirs(os.path.join(root, sub), exist_ok=True)
    text_block = emitted_block(anchors_dir) if block else None
    with open(os.path.join(root, "code", "2024_Wimbledon_featured_matches.csv"), "w") as fh:
        fh.write("match_id,player1,player2,set_no,game_no,point_no,point_victor\n"
                 "2023-wimbledon-1701,Carlos Alcaraz,Novak Djokovic,1,1,1,2\n")
    tasks = []
    for k in order:
        entry = {"task_description": DESCRIPTIONS[k], "task_analysis": "...",
                 "preliminary_formulas": "M_t = \\sum_i \\lambda^{t-i} r_i",
                 "mathematical_modeling_process": "..."}
        if not no_code:
            extra = {"experiment_result.momentum_model.cv_accuracy": "0.64", "accuracy": "0.64"} \
                if stray and k == 1 else None
            code = script(k, text_block, fail=k in fail, extra=extra)
            with open(os.path.join(root, "code", f"main{k}.py"), "w", encoding="utf-8") as fh:
                fh.write(code)
            proc = subprocess.run([sys.executable, "-u", f"main{k}.py"], cwd=os.path.join(root, "code"),
                                  capture_output=True, text=True, timeout=60)
            passed = proc.returncode == 0
            entry.update({"task_code": code, "is_pass": passed,
                          "execution_result": proc.stdout[:2000] if passed else None})
        values = {path.rsplit(".", 1)[1]: t for path, t in NUMBERS[k].items()}
        entry["solution_interpretation"] = " ".join(line.format(**values) for line in PRINTED[k]) + "."
        entry["subtask_outcome_analysis"] = "The results support the model."
        entry["charts"] = [f"Chart for task {k}"]
        tasks.append(entry)
    solution = {"tasks": tasks, "problem_background": "Wimbledon 2023 ...",
                "problem_requirement": "Develop a model that captures the flow of play ...",
                "problem_analysis": "..."}
    with open(os.path.join(root, "json", "2024_C.json"), "w", encoding="utf-8") as fh:
        fh.write(json.dumps(solution, indent=4, ensure_ascii=False))
    with open(os.path.join(root, "markdown", "2024_C.md"), "w", encoding="utf-8") as fh:
        fh.write("## Problem Background\nWimbledon 2023 ...\n")
    with open(os.path.join(root, "usage", "2024_C.json"), "w", encoding="utf-8") as fh:
        json.dump({"prompt_tokens": 1000, "completion_tokens": 500}, fh)
    if stray:
        with open(os.path.join(root, "code", "results.json"), "w", encoding="utf-8") as fh:
            json.dump({"accuracy": 0.64, "cv_accuracy": 0.62, "model_path": "model.pkl"}, fh)
    return root


def direct_artifact() -> dict:
    """The same numbers handed in directly, as one artifact."""
    art: dict = {"problem_id": "2024-C", "task_id": TASK}
    for k in NUMBERS:
        for path, text in NUMBERS[k].items():
            node = art
            *head, last = path.split(".")
            for seg in head:
                node = node.setdefault(seg, {})
            node[last] = json.loads(text)
    return art
