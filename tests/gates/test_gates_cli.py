"""End to end through the real CLI: ``mmverify gate`` (verdicts, exit codes, no
anchor value revealed) and ``mmverify score`` zeroing a task on a hard gate."""
from __future__ import annotations

import json
import re
from decimal import Decimal
from fractions import Fraction

import pytest
from tests.helpers.gatekit import TID, dragon_task, run_cli, write_json


@pytest.fixture(scope="module")
def anchors(tmp_path_factory):
    return dragon_task(str(tmp_path_factory.mktemp("anchors")))


def artifact(tmp_path, name="a.json", **result):
    body = {"result": {"speed": 1.9, "pitch": 0.55, "handles": 230, "ratio": 1.05}}
    body["result"].update(result)
    for k in [k for k, v in body["result"].items() if v is None]:
        del body["result"][k]
    return write_json(str(tmp_path / name), body)


class _Result:
    def __init__(self, returncode, stdout):
        self.returncode, self.stdout, self.stderr = returncode, stdout, ""


def gate_cli(path, anchors, *more, subprocess=False):
    """``mmverify gate`` through a real subprocess, or in-process through the same
    click entry point (fast: no interpreter and sympy start-up per call)."""
    args = ["gate", path, "--task", TID, "--anchors", anchors, *more]
    if subprocess:
        return run_cli(*args)
    return invoke(*args)


def invoke(*args):
    from click.testing import CliRunner

    from mmverify.cli import main

    r = CliRunner().invoke(main, list(args))
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise r.exception
    return _Result(r.exit_code, r.output)


# ------------------------------------------------------------- verdicts

def test_gate_passes_a_feasible_artifact(anchors, tmp_path):
    r = gate_cli(artifact(tmp_path, speed=1.246266, ratio=1.604793, pitch=0.4), anchors, subprocess=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "status   feasible" in r.stdout
    assert "PASS hard B identity      q5.handle_speed_limit" in r.stdout


def test_gate_fails_the_dragon_dance_reference_value(anchors, tmp_path):
    r = gate_cli(artifact(tmp_path, speed=1.406276, ratio=1.604793), anchors, "--format", "json", subprocess=True)
    assert r.returncode == 1
    out = json.loads(r.stdout)
    assert out["status"] == "infeasible"
    inst = next(i for i in out["gates"]["instances"] if i["gate"] == "q5.handle_speed_limit")
    assert inst["verdict"] == "fail" and "1.406276 * 1.604793" in inst["detail"]
    assert "2.256781880868 > 2" in inst["detail"]


def test_gate_soft_failures_and_gaps_do_not_fail(anchors, tmp_path):
    r = gate_cli(artifact(tmp_path, speed=1.0, ratio=None, pitch=0.9), anchors)
    assert r.returncode == 0, r.stdout
    assert "FAIL soft C range         q3.pitch_soft_cap" in r.stdout
    assert "GAP  hard B identity      q5.handle_speed_limit" in r.stdout


def test_gate_schema_violation_is_local_unless_strict(anchors, tmp_path):
    path = artifact(tmp_path, speed=1.0, ratio=1.5, handles=-3)
    r = gate_cli(path, anchors, "--format", "json")
    assert r.returncode == 0
    out = json.loads(r.stdout)
    assert out["status"] == "feasible" and out["schema_errors"][0]["field"] == "result.handles"
    assert out["schema_errors"][0]["problem"] == "-3 is less than the minimum of 0"
    assert out["schema_errors"][0]["effect"]["scored_fields"] == ["result.handles"]
    r = gate_cli(path, anchors, "--format", "json", "--strict-schema")
    assert r.returncode == 1 and json.loads(r.stdout)["status"] == "invalid"


def test_gate_exit_1_on_unreadable_artifact(anchors, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"result": {"speed": NaN}}')
    r = gate_cli(str(bad), anchors, "--format", "json")
    assert r.returncode == 1
    assert json.loads(r.stdout)["status"] == "error"


def test_gate_exit_codes_for_task_errors(anchors, tmp_path):
    path = artifact(tmp_path)
    assert run_cli("gate", path, "--task", "no-such-task", "--anchors", anchors).returncode == 3
    body = {"result": {"speed": 1}}
    anon = write_json(str(tmp_path / "anonymous.json"), body)
    assert invoke("gate", anon, "--anchors", anchors).returncode == 4


@pytest.mark.parametrize("fmt", ["table", "json", "md"])
def test_gate_formats_are_deterministic(anchors, tmp_path, fmt):
    path = artifact(tmp_path, speed=1.406276, ratio=1.604793)
    a, b = gate_cli(path, anchors, "--format", fmt), gate_cli(path, anchors, "--format", fmt)
    assert a.stdout == b.stdout and a.returncode == b.returncode == 1
    if fmt == "md":
        assert "| FAIL | hard | B | identity | q5.handle_speed_limit |" in a.stdout


# -------------------------------------------------------- no anchor leak

NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:[eE][+-]?\d{1,3})?(?!\w|\.\d)")


def numbers_in(text: str) -> set[Fraction]:
    """Decimal numbers standing alone in text (not inside hex digests or names)."""
    return {Fraction(Decimal(m)) for m in NUMBER.findall(text)}


def panel_numbers(task_json: dict) -> set[Fraction]:
    found: set[Fraction] = set()

    def walk(v):
        if isinstance(v, str):
            try:
                found.add(Fraction(Decimal(v)))
            except Exception:
                pass
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)

    for p in task_json["panel"]:
        walk(p["values"])
        walk(p.get("context", {}))
        for rec in p.get("audit", {}).values():
            walk(rec.get("original"))
    return found


@pytest.mark.parametrize("fmt", ["table", "json", "md"])
@pytest.mark.parametrize("case", ["infeasible", "gaps", "invalid", "feasible"])
def test_gate_reveals_no_panel_value(anchors, tmp_path, fmt, case):
    """Every format, every kind of outcome: no number from the panel (values,
    context, audited originals) appears unless the artifact itself holds it.
    (In-process through the click entry point, to keep the matrix fast; the
    subprocess tests above cover the same command end to end.)"""
    from click.testing import CliRunner

    from mmverify.cli import main

    bodies = {
        "infeasible": {"speed": 1.9, "ratio": 1.3, "pitch": 0.55, "handles": 230},
        "gaps": {"speed": 1.1},
        "invalid": {"speed": 7, "pitch": -1, "handles": 2.5, "ratio": "x"},
        "feasible": {"speed": 1.5, "ratio": 1.2, "pitch": 0.45, "handles": 226},
    }
    path = write_json(str(tmp_path / "probe.json"), {"result": bodies[case]})
    r = CliRunner().invoke(main, ["gate", path, "--task", TID, "--anchors", anchors, "--format", fmt])
    assert r.exit_code == (0 if case in ("feasible", "gaps") else 1), r.output
    with open(f"{anchors}/{TID}/task.json") as fh:
        secrets = panel_numbers(json.load(fh))
    own = numbers_in(json.dumps(bodies[case]))
    leaked = (secrets - own) & numbers_in(r.output)
    assert not leaked, f"{case}/{fmt} output reveals panel value(s) {sorted(map(str, leaked))}:\n{r.output}"
    assert "1.246266" not in r.output and "A016" not in r.output


# ------------------------------------------------------ score zeroing

def test_score_zeroes_a_hard_gate_failure_naming_the_gate(anchors, tmp_path):
    path = artifact(tmp_path, speed=1.406276, ratio=1.604793, pitch=0.4, handles=224)
    r = run_cli("score", path, "--task", TID, "--anchors", anchors, "--format", "json")
    assert r.returncode == 1
    rep = json.loads(r.stdout)
    assert rep["status"] == "infeasible" and rep["oeval"] == 0
    assert rep["error"]["code"] == "hard_gate_failed"
    assert "q5.handle_speed_limit" in rep["error"]["message"] and "2.256781880868 > 2" in rep["error"]["message"]
    assert rep["closeness_oeval"] > 0.9  # close to the panel, yet infeasible
    table = invoke("score", path, "--task", TID, "--anchors", anchors)
    assert "FAIL hard q5.handle_speed_limit" in table.stdout


def test_score_keeps_a_feasible_artifact(anchors, tmp_path):
    path = artifact(tmp_path, speed=1.246266, ratio=1.604793, pitch=0.4, handles=224)
    r = invoke("score", path, "--task", TID, "--anchors", anchors, "--format", "json")
    assert r.returncode == 0, r.stdout
    rep = json.loads(r.stdout)
    assert rep["status"] == "scored" and rep["gates"]["counts"]["hard_failures"] == 0
