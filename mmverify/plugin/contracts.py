"""The engine's promises, checked on one task of any anchors folder.

Design notes: docs/architecture.md, `mmverify/plugin/contracts.py`.
"""
from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import Any

from mmverify.reading import paths
from mmverify.errors import MmverifyError

CONTRACTS = ("loads", "oracle_validates", "gates_pass_on_oracle", "oracle_scores_one", "selfcheck_no_leak")


class ContractFailure(MmverifyError, AssertionError):
    """A broken promise, with a message meant for the anchor's maintainer."""


class ContractSkip(MmverifyError):
    """The contract does not apply to this task or metric (the message says why)."""


def load(task_id: str, anchors_dir: str):
    from mmverify.tasks import TaskLoadError, load_task

    try:
        return load_task(task_id, anchors_dir)
    except TaskLoadError as exc:
        raise ContractFailure(f"task {task_id!r} does not load: {exc}") from None


def _oracle(task) -> Any:
    from mmverify.reading.artifact import ArtifactError, parse_file

    try:
        return parse_file(task.oracle_path)
    except ArtifactError as exc:
        raise ContractFailure(f"{task.id}: oracle artifact unreadable: {exc.code}: {exc.message}") from None


def check_loads(task_id: str, anchors_dir: str) -> str:
    task = load(task_id, anchors_dir)
    return f"{task.id}: {len(task.metrics)} metric(s), {len(task.gates)} gate(s), {len(task.panel)} paper(s)"


def check_oracle_validates(task) -> str:
    from mmverify.pipeline.validate import validate_artifact

    errors = validate_artifact(task.artifact_schema, _oracle(task).data)
    if errors:
        raise ContractFailure(f"{task.id}: the oracle breaks its schema:\n" +
                              "\n".join(f"  {e.field}: {e.problem}" for e in errors))
    return "oracle validates"


def check_gates_pass_on_oracle(task) -> str:
    from mmverify.gates import evaluate_gates

    report = evaluate_gates(task, _oracle(task).data)
    if report.hard_failures:
        raise ContractFailure(f"{task.id}: hard gate(s) fail on the oracle:\n" +
                              "\n".join("  " + i.headline() for i in report.hard_failures))
    c = report.counts
    return f"{c['pass']} pass, {c['gap']} gap, {c['soft_failures']} soft failure(s)"


def check_oracle_scores_one(task) -> str:
    from mmverify.pipeline.evaluate import score_artifact

    report = score_artifact(task, _oracle(task))
    if report.status != "scored":
        err = report.error or {}
        raise ContractFailure(f"{task.id}: the oracle is {report.status!r}, not scored: "
                              f"{err.get('code')}: {err.get('message')}")
    oracle_ids = {p.paper_id for p in task.oracle_papers}
    if not oracle_ids:
        raise ContractFailure(f"{task.id}: no panel paper is marked as the oracle paper")
    bad = [f"{p.paper_id}: R = {p.r}" for p in report.panel.papers if p.paper_id in oracle_ids and p.r != 1]
    if bad:
        raise ContractFailure(f"{task.id}: the oracle does not score 1 against its oracle paper(s): " +
                              "; ".join(bad) + _metric_shortfalls(report, oracle_ids))
    if all(p.oracle for p in task.panel) and report.oeval != 1:
        raise ContractFailure(f"{task.id}: every paper is an oracle paper but O-EVAL = {report.oeval}")
    return f"O-EVAL {float(report.oeval):.6f}"


def _metric_shortfalls(report, paper_ids: set[str]) -> str:
    lines = []
    for m in report.panel.metrics:
        for pm in m.per_paper:
            if pm.paper_id in paper_ids and pm.r is not None and pm.r != 1:
                lines.append(f"  {m.metric_id} [{pm.paper_id}]: value {m.value!r}, anchor {pm.anchor!r}, "
                             f"r = {float(pm.r):.6f} ({pm.status})")
    return ("\n" + "\n".join(lines)) if lines else ""


# ----------------------------------------------------------------- one-sided

def directional_metrics(task) -> list:
    from mmverify.tasks import DIRECTIONAL

    return [m for m in task.metrics if m.direction in DIRECTIONAL]


def _locations(data: Any, metric) -> list[str]:
    if not metric.is_list:
        return [metric.path.text]
    items = paths.items(data, metric.path)
    if isinstance(items, paths.Missing):
        return []
    return [paths.concrete(metric.path, i) for i in range(len(items))]


def _set(data: Any, path_text: str, value: Decimal) -> None:
    if not paths.put(data, path_text, value, replace=False):
        raise KeyError(path_text)


def steps_for(x: Decimal) -> list[Decimal]:
    """Step sizes for moving ``x``: one unit of its last digit, a tenth of its size,
    its size, a thousand times its size (sizes of at least 1)."""
    size = max(abs(x), Decimal(1))
    unit = Decimal(1).scaleb(min(x.as_tuple().exponent, 0)) if x.is_finite() else Decimal(1)
    return sorted({unit, size / 10, size, size * 1000})


def _per_paper(panel, metric_id: str) -> dict[str, Fraction | None]:
    for m in panel.metrics:
        if m.metric_id == metric_id:
            return {pm.paper_id: pm.r for pm in m.per_paper}
    return {}


def check_one_sided(task, metric) -> str:
    """Moving the oracle value in the good direction never costs; against, never pays."""
    import copy

    from mmverify.scoring.panel import score_panel

    oracle = _oracle(task).data
    base = score_panel(task, oracle, ruleset="paper")
    base_r = _per_paper(base, metric.id)
    if all(r is None for r in base_r.values()):
        mres = next((m for m in base.metrics if m.metric_id == metric.id), None)
        why = mres.removed.detail if mres is not None and mres.removed is not None else "no paper reports it"
        raise ContractSkip(f"{metric.id}: no paper votes on it ({why})")
    locs = _locations(oracle, metric)
    if not locs:
        raise ContractFailure(f"{task.id}: {metric.id}: the oracle has no value at {metric.path.text}")
    values = {}
    for loc in locs:
        v = paths.get(oracle, loc)
        if not isinstance(v, Decimal) or isinstance(v, bool):
            if v is None or isinstance(v, paths.Missing):
                continue  # an item without the value scores 0 already; nothing to move
            raise ContractFailure(f"{task.id}: {metric.id}: oracle value at {loc} is not a number: {v!r}")
        values[loc] = v
    if not values:
        raise ContractFailure(f"{task.id}: {metric.id}: no numeric oracle value at {metric.path.text}")
    sign = Decimal(1) if metric.direction == "higher_is_better" else Decimal(-1)
    oracle_ids = {p.paper_id for p in task.oracle_papers}
    problems: list[str] = []
    moves = 0
    for k in range(4):
        for good in (True, False):
            data = copy.deepcopy(oracle)
            shown = []
            for loc, x in values.items():
                step = steps_for(x)[min(k, len(steps_for(x)) - 1)]
                new = x + (sign if good else -sign) * step
                _set(data, loc, new)
                shown.append(f"{loc}: {x} -> {new}")
            moved = score_panel(task, data, ruleset="paper")
            moves += 1
            r = _per_paper(moved, metric.id)
            label = ("further in the good direction" if good else "against the good direction") + \
                f" ({shown[0]}{' and ' + str(len(shown) - 1) + ' more' if len(shown) > 1 else ''})"
            for pid, r0 in base_r.items():
                r1 = r.get(pid)
                if r0 is None or r1 is None:
                    continue
                if good and r1 < r0:
                    problems.append(f"{label}: paper {pid} r fell {float(r0):.6f} -> {float(r1):.6f}")
                if good and pid in oracle_ids and r1 != 1:
                    problems.append(f"{label}: oracle paper {pid} r = {float(r1):.6f}, not 1")
                if not good and r1 > r0:
                    problems.append(f"{label}: paper {pid} r rose {float(r0):.6f} -> {float(r1):.6f}")
            if base.oeval is not None and moved.oeval is not None:
                if good and moved.oeval < base.oeval:
                    problems.append(f"{label}: O-EVAL fell {float(base.oeval):.6f} -> {float(moved.oeval):.6f}")
                if not good and moved.oeval > base.oeval:
                    problems.append(f"{label}: O-EVAL rose {float(base.oeval):.6f} -> {float(moved.oeval):.6f}")
    if problems:
        raise ContractFailure(f"{task.id}: {metric.id} ({metric.direction}) is not one-sided:\n  " +
                              "\n  ".join(problems[:12]))
    return f"{moves} moves"


# ------------------------------------------------------------------ no leak

def check_selfcheck_no_leak(task) -> str:
    """Scan :func:`~mmverify.plugin.selfcheck.self_check` and, where the command is
    installed, ``mmverify gate`` (its JSON result and its table and Markdown
    renderings) on an artifact whose every number differs from the oracle's."""
    import importlib.util
    import os
    import tempfile

    from mmverify.reading.artifact import from_python
    from mmverify.plugin.exactjson import dumps_exact
    from mmverify.plugin.selfcheck import anchor_values, distinct_artifact, find_leaks, self_check

    data = distinct_artifact(_oracle(task).data, task)
    out = self_check(task, from_python(data, source="distinct-from-oracle"))
    leaks = [f"self_check: {leak}" for leak in find_leaks(out, task, data)]
    scanned = "self_check"
    if importlib.util.find_spec("mmverify.commands.gate") is not None:
        from mmverify.commands.gate import gate_result, render_gate

        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, f"{task.id}_result.json")
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(dumps_exact(data))
            result = gate_result(path, task.id, os.path.dirname(task.directory))
            counts = (result.get("gates") or {}).get("counts", {})
            public = [v for v in counts.values() if isinstance(v, int)] + [path]
            leaks += [f"mmverify gate (json): {leak}" for leak in find_leaks(result, task, data, [path])]
            for fmt in ("table", "md"):
                leaks += [f"mmverify gate ({fmt}): {leak}"
                          for leak in find_leaks(render_gate(result, fmt), task, data, public)]
        scanned += " and mmverify gate"
    if leaks:
        raise ContractFailure(f"{task.id}: anchor values shown to the agent:\n  " + "\n  ".join(leaks[:20]))
    numbers, labels = anchor_values(task)
    return f"{scanned}: {len(numbers)} anchor number(s) and {len(labels)} label(s) scanned"
