"""Gate contracts over the bundled anchors (each task is skipped while its folder
is absent):

* every task's gates compile and at least one is hard (18/18 once all exist);
* every oracle passes all its hard gates — no hard failure unless an oracle
  paper's audit record names the gate or the field, and no hard gap;
* ``mmverify audit`` finds no unaudited problem in the task;
* ``mmverify gate`` reveals no anchor value, in any format;
* the heliostat reference cases: annual output below 60 MW, and a mirror side
  below 2 m, zero the task through ``mmverify score``, naming the gate.
"""
from __future__ import annotations

import copy
import json
import os
import re
from decimal import Decimal, localcontext
from fractions import Fraction

import pytest
from click.testing import CliRunner
from tests.helpers.gatekit import run_cli

from mmverify.reading import paths
from mmverify.reading.artifact import parse_file
from mmverify.cli import main
from mmverify.gates import compile_gates, evaluate_gates
from mmverify.gates.audit import audit_task
from mmverify.tasks import default_anchors_dir, load_index, load_task

ANCHORS = default_anchors_dir()
IDS = [t["id"] for t in load_index(ANCHORS)]
HELIOSTAT = "cumcm-2023-a-heliostat-field"


def present(tid):
    if not os.path.exists(os.path.join(ANCHORS, tid, "task.json")):
        pytest.skip(f"anchors/{tid} not written yet")
    return load_task(tid, ANCHORS)


@pytest.mark.parametrize("tid", IDS)
def test_task_has_a_hard_gate(tid):
    task = present(tid)
    gates = compile_gates(task)
    assert any(g.hard for g in gates), f"{tid}: no hard gate"


def test_every_present_task_has_a_hard_gate():
    present_ids = [t for t in IDS if os.path.exists(os.path.join(ANCHORS, t, "task.json"))]
    if not present_ids:
        pytest.skip("no task written yet")
    covered = [t for t in present_ids if any(g.hard for g in compile_gates(load_task(t, ANCHORS)))]
    assert covered == present_ids
    if len(present_ids) == len(IDS):
        assert len(covered) == len(IDS) == 18


@pytest.mark.parametrize("tid", IDS)
def test_oracle_passes_its_hard_gates(tid):
    task = present(tid)
    report = evaluate_gates(task, parse_file(task.oracle_path).data)
    records = [(mid, rec) for p in task.oracle_papers for mid, rec in p.audit.items()]
    unexplained = []
    for inst in report.hard_failures:
        named = any(rec.get("gate") == inst.gate_id for _, rec in records)
        on_field = any(paths.matches(task.metric(mid).path, path) for mid, _ in records for path in inst.paths)
        if not (named or on_field):
            unexplained.append(inst.headline())
    assert not unexplained, f"{tid}: the oracle fails hard gate(s) with no audit record: {unexplained}"
    gaps = [i.headline() for i in report.gaps if i.hard]
    assert not gaps, f"{tid}: hard gate(s) cannot be checked on the oracle: {gaps}"


@pytest.mark.parametrize("tid", IDS)
def test_audit_finds_no_unaudited_problem(tid):
    task = present(tid)
    problems = [f"{f.kind} {f.subject}{' / ' + f.paper_id if f.paper_id else ''}: {f.detail}"
                for f in audit_task(task).findings if f.severity == "problem"]
    assert not problems, f"{tid}: " + "\n".join(problems)


# ------------------------------------------------------------ no anchor leak

_NUM = re.compile(r"(?<![\w.\[\]/])-?\d+(?:\.\d+)?(?:[eE][+-]?\d{1,3})?(?![\w\]])")


def _numbers(text: str) -> set[Fraction]:
    return {Fraction(Decimal(m)) for m in _NUM.findall(text)}


def _perturb(value):
    if isinstance(value, Decimal):
        with localcontext() as ctx:
            ctx.prec = 60
            return value * Decimal("1.0731") + Decimal("0.0137")
    if isinstance(value, list):
        return [_perturb(v) for v in value]
    if isinstance(value, dict):
        return {k: _perturb(v) for k, v in value.items()}
    return value


def _json_numbers(obj, skip=("description", "tolerance_reason", "title", "$comment")) -> set[Fraction]:
    out: set[Fraction] = set()

    def walk(v):
        if isinstance(v, bool) or v is None:
            return
        if isinstance(v, (int, Decimal)):
            out.add(Fraction(v))
        elif isinstance(v, str):
            out.update(_numbers(v))
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for k, x in v.items():
                if k not in skip:
                    walk(x)
    walk(obj)
    return out


def _panel_numbers(task) -> set[Fraction]:
    out: set[Fraction] = set()
    for p in task.panel:
        out |= _json_numbers(p.value_text)
        out |= _json_numbers(dict(p.context))
        for rec in p.audit.values():
            out |= _json_numbers(rec.get("original"))
    return out


def _public_numbers(task, gates) -> set[Fraction]:
    """Statement numbers: gate specs (not descriptions), schema constraints, and
    identity sides that are constants."""
    public = _json_numbers(list(task.gates)) | _json_numbers(dict(task.artifact_schema))
    for g in gates:
        if g.identity is not None:
            for side in (g.identity.lhs, g.identity.rhs):
                if not side.free_symbols:
                    public.add(Fraction(int(side.p), int(side.q)))
    return public


@pytest.mark.parametrize("tid", IDS)
def test_gate_command_reveals_no_anchor_value(tid, tmp_path):
    task = present(tid)
    gates = compile_gates(task)
    probe = _perturb(parse_file(task.oracle_path).data)
    path = tmp_path / "probe.json"
    path.write_text(_dump_numbers(probe), encoding="utf-8")
    own = _json_numbers(probe, skip=())
    secrets = _panel_numbers(task) - own - _public_numbers(task, gates)
    runner = CliRunner()
    result = json.loads(runner.invoke(main, ["gate", str(path), "--task", tid, "--anchors", ANCHORS,
                                             "--format", "json"]).output)
    plumbing = {Fraction(v) for v in result["gates"]["counts"].values() if isinstance(v, int)}
    plumbing |= {Fraction(v) for f in result["gates"]["counts"]["by_form"].values() for v in f.values()}
    for i in result["gates"]["instances"]:  # "sum of N part(s)", element and pair indices
        plumbing.add(Fraction(len(i["paths"]) - (1 if i["form"] == "partition_sum" else 0)))
        if i["index"] is not None:
            plumbing |= {Fraction(i["index"]), Fraction(i["index"] + 1)}
    for fmt in ("table", "json", "md"):
        out = runner.invoke(main, ["gate", str(path), "--task", tid, "--anchors", ANCHORS, "--format", fmt]).output
        out = out.replace(str(path), "<probe>")   # the temporary folder's name holds a counter, not a value
        leaked = (secrets - plumbing) & _numbers(out)
        assert not leaked, f"{tid} ({fmt}): gate output shows panel value(s) {sorted(map(str, leaked))}"


def _dump_numbers(obj) -> str:
    if isinstance(obj, Decimal):
        return format(obj, "f")
    if isinstance(obj, bool) or obj is None:
        return json.dumps(obj)
    if isinstance(obj, (int, str)):
        return json.dumps(obj, ensure_ascii=False)
    if isinstance(obj, list):
        return "[" + ", ".join(_dump_numbers(v) for v in obj) + "]"
    return "{" + ", ".join(f"{json.dumps(k, ensure_ascii=False)}: {_dump_numbers(v)}" for k, v in obj.items()) + "}"


# ------------------------------------------------------------ heliostat cases

def _heliostat_case(tmp_path, mutate, subprocess=True):
    task = present(HELIOSTAT)
    data = copy.deepcopy(parse_file(task.oracle_path).data)
    gate_ids = mutate(task, data)
    path = tmp_path / f"{HELIOSTAT}_result.json"
    path.write_text(_dump_numbers(data), encoding="utf-8")
    args = ["score", str(path), "--task", HELIOSTAT, "--anchors", ANCHORS, "--format", "json"]
    if subprocess:
        r = run_cli(*args)
        code, out = r.returncode, r.stdout
    else:
        r = CliRunner().invoke(main, args)
        code, out = r.exit_code, r.output
    rep = json.loads(out)
    assert code == 1
    assert rep["oeval"] == 0 and rep["status"] in ("infeasible", "invalid")
    failed = {i["gate"] for i in rep["gates"]["instances"] if i["verdict"] == "fail" and i["severity"] == "hard"}
    for gid in gate_ids:
        assert gid in failed and gid in rep["error"]["message"], (gid, rep["error"])
    return rep


def _range_gates(task, pred):
    return [g for g in compile_gates(task) if g.hard and g.form == "range" and pred(g)]


def test_heliostat_output_below_60_mw_is_zeroed_naming_the_gate(tmp_path):
    def mutate(task, data):
        gates = _range_gates(task, lambda g: g.lower is not None and g.lower.value == 60)
        assert gates, "the heliostat task needs a hard range gate 'annual output >= 60 MW'"
        g = gates[0]
        (p,) = g.inputs
        target = paths.parse_path(paths.concrete(p, 1)) if p.is_list else p
        _set(data, target, Decimal("59.9"))
        return [g.id]

    _heliostat_case(tmp_path, mutate)


def test_heliostat_mirror_side_below_2_m_is_zeroed_naming_the_gate(tmp_path):
    def mutate(task, data):
        gates = _range_gates(task, lambda g: g.lower is not None and g.lower.value == 2
                             and "mirror" in g.inputs[0].text and "install" not in g.inputs[0].text)
        assert gates, "the heliostat task needs a hard range gate 'mirror side >= 2 m'"
        ids = []
        for g in gates:
            (p,) = g.inputs
            if not p.is_list and not isinstance(paths.get(data, p), paths.Missing):
                _set(data, p, Decimal("1.9"))
                ids.append(g.id)
        assert ids
        return ids

    _heliostat_case(tmp_path, mutate, subprocess=False)


def _set(data, path: paths.FieldPath, value) -> None:
    node = data
    for seg in path.segments[:-1]:
        node = node[seg]
    node[path.segments[-1]] = value
