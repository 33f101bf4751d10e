"""Per-form evaluation of compiled gates on parsed artifact data.

``evaluate_gates(task, data)`` is pure and exact. For every gate it builds the
rows of values the gate reads (one row per scalar gate, one per list element
for ``[*]`` paths), reads each value without interpreting strings, and decides:

1. any input of the wrong JSON type -> ``fail`` (``not_a_number`` /
   ``not_a_label``): the artifact is malformed exactly where it is checked;
2. otherwise any input absent or null -> ``gap`` (``missing``); a ``[*]`` list
   that is absent, null or empty -> one ``gap`` instance (``missing`` /
   ``empty_list``), one that is not a list -> one ``fail`` (``not_a_list``);
3. otherwise the form's predicate in exact rationals -> ``pass`` or ``fail``
   (``violated``; ``undefined`` when an identity divides by zero).

An ``order`` gate over one ``[*]`` list yields one instance per adjacent pair;
a one-element list has no pair and yields no instance (nothing can be violated).
A ``partition_sum`` whose total is a scalar sums every element of its ``[*]``
parts; an empty parts list contributes 0 (the empty sum), not a gap.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any

from mmverify import paths as P

from . import identity as I
from .compile import compile_gates
from .exact import ABSENT, LABEL, NUMBER, WRONG, Read, normalise, read, show, type_name
from .model import Gate, GateInstance, GateReport

ZERO = Fraction(0)
_RUN = object()  # evaluate_gates default: run the task's replay


def evaluate_gates(task, data: Any, replayed: Any = _RUN) -> GateReport:
    """Every gate instance of ``task`` on parsed artifact ``data`` (see module doc).

    Gates read the artifact and the values its replay derived (``$replay.``
    paths). ``replayed`` is the replay stage's :class:`~mmverify.replay.ReplayReport`
    for this data (None for a task without replay); by default the replay is run
    here, so every caller sees the same verdicts."""
    from mmverify.replay import gate_view, run_replay

    if replayed is _RUN:
        replayed = run_replay(task, data)
    view = gate_view(data, replayed)
    gates = compile_gates(task)
    out: list[GateInstance] = []
    for gate in gates:
        out.extend(evaluate_gate(gate, view))
    return GateReport(task.id, tuple(out), gates, replayed)


def evaluate_gate(gate: Gate, data: Any) -> list[GateInstance]:
    if gate.form == "order" and gate.chain_list is not None:
        return _order_list(gate, data)
    if gate.form == "partition_sum" and (gate.total is None or not gate.total.is_list):
        return [_partition_whole(gate, data)]
    paths = list(gate.inputs)
    rows = _rows(data, paths)
    if isinstance(rows, _ListGap):
        return [_gap_list(gate, rows)]
    return [_decide(gate, index, reads) for index, reads in rows]


# ------------------------------------------------------------------- rows

class _ListGap:
    """A ``[*]`` list that cannot be expanded: absent/null/empty (a gap) or not
    a list at all (a fail, ``not_a_list``)."""

    def __init__(self, path: P.Path, reason: str, why: str):
        self.path, self.reason, self.why = path, reason, why

    @property
    def verdict(self) -> str:
        return "fail" if self.reason == "not_a_list" else "gap"


def _list_of(data: Any, path: P.Path) -> list[Any] | _ListGap:
    head = path.split()[0]
    container = P.get(data, head) if head.segments else data
    if isinstance(container, P.Missing):
        return _ListGap(path, "missing", container.reason)
    if container is None:
        return _ListGap(path, "missing", f"{head.text!r} is null")
    if not isinstance(container, list):
        return _ListGap(path, "not_a_list", f"{head.text!r} holds <{type_name(container)}>, not a list")
    if not container:
        return _ListGap(path, "empty_list", f"list {head.text!r} is empty")
    return container


def _rows(data: Any, paths: list[P.Path]) -> list[tuple[int | None, list[Read]]] | _ListGap:
    """One row of reads per instance; ``[*]`` paths (all on one list) pair by index,
    scalar paths are broadcast to every element."""
    lists = [p for p in paths if p.is_list]
    if not lists:
        return [(None, [read(p.text, P.get(data, p)) for p in paths])]
    container = _list_of(data, lists[0])
    if isinstance(container, _ListGap):
        return container
    per_path = {p: P.items(data, p) for p in lists}
    scalars = {p: read(p.text, P.get(data, p)) for p in paths if not p.is_list}
    rows = []
    for i in range(len(container)):
        rows.append((i, [read(P.concrete(p, i), per_path[p][i]) if p.is_list else scalars[p] for p in paths]))
    return rows


def _base(gate: Gate, index: int | None, reads: list[Read]) -> dict[str, Any]:
    return dict(gate_id=gate.id, form=gate.form, level=gate.level, severity=gate.severity, index=index,
                paths=tuple(r.path for r in reads), values=tuple(r.text for r in reads),
                tolerance=gate.tolerance_text, tolerance_value=gate.tolerance or ZERO)


def _gap_list(gate: Gate, gap: _ListGap) -> GateInstance:
    return GateInstance(gate_id=gate.id, form=gate.form, level=gate.level, severity=gate.severity, index=None,
                        paths=(gap.path.text,), values=(None,), verdict=gap.verdict, reason=gap.reason,
                        detail=f"no elements to check: {gap.why}", tolerance=gate.tolerance_text,
                        tolerance_value=gate.tolerance or ZERO)


def _screen(gate: Gate, index: int | None, reads: list[Read], want_label: bool = False) -> GateInstance | None:
    """The fail/gap instance when some input is unusable, else None."""
    bad = [r for r in reads if r.kind == WRONG or (r.kind == LABEL and not want_label)]
    if bad:
        reason = "not_a_label" if want_label else "not_a_number"
        what = "a number or a label" if want_label else "a number"
        detail = "; ".join(f"{r.path} holds {r.text}, not {what}" for r in bad)
        return GateInstance(verdict="fail", reason=reason, detail=detail, **_base(gate, index, reads))
    absent = [r for r in reads if r.kind == ABSENT]
    if absent:
        detail = "input absent: " + "; ".join(r.why or r.path for r in absent)
        return GateInstance(verdict="gap", reason="missing", detail=detail, **_base(gate, index, reads))
    return None


def _tol_note(gate: Gate) -> str:
    # the written reason is anchor prose (it may quote reference values): it is
    # kept on the Gate, not in the detail that ``mmverify gate`` prints
    return f" (tolerance {gate.tolerance_text})" if gate.tolerance is not None else ""


def _verdict(ok: bool) -> tuple[str, str | None]:
    return ("pass", None) if ok else ("fail", "violated")


# ------------------------------------------------------------------ decide

def _decide(gate: Gate, index: int | None, reads: list[Read]) -> GateInstance:
    screened = _screen(gate, index, reads, want_label=gate.form == "finite_domain")
    if screened is not None:
        return screened
    base = _base(gate, index, reads)
    tol = gate.tolerance or ZERO
    if gate.form == "range":
        return _range(gate, base, reads[0].number, tol)
    if gate.form == "integer":
        return _integer(gate, base, reads[0].number, tol)
    if gate.form == "order":
        return _order(gate, base, [r.number for r in reads], [r.text for r in reads], tol)
    if gate.form == "identity":
        return _identity(gate, base, reads, tol)
    if gate.form == "finite_domain":
        return _domain(gate, base, reads[0], tol)
    if gate.form == "partition_sum":
        n_parts = len(gate.parts)
        return _partition(gate, base, [r.number for r in reads[:n_parts]], reads[n_parts].number, tol)
    raise AssertionError(gate.form)


def _range(gate: Gate, base: dict, x: Fraction, tol: Fraction) -> GateInstance:
    lo, hi = gate.lower, gate.upper
    problems = []
    if lo is not None:
        ok_lo = x > lo.value - tol if lo.strict else x >= lo.value - tol
        if not ok_lo:
            problems.append(f"{'at or ' if lo.strict and x == lo.value - tol else ''}below the "
                            f"{'strict ' if lo.strict else ''}minimum {lo.text}")
    if hi is not None:
        ok_hi = x < hi.value + tol if hi.strict else x <= hi.value + tol
        if not ok_hi:
            problems.append(f"{'at or ' if hi.strict and x == hi.value + tol else ''}above the "
                            f"{'strict ' if hi.strict else ''}maximum {hi.text}")
    interval = (("(" if lo.strict else "[") + lo.text if lo else "(-inf") + ", " + \
               (hi.text + (")" if hi.strict else "]") if hi else "+inf)")
    verdict, reason = _verdict(not problems)
    xs = base["values"][0]
    detail = (f"{xs} within {interval}" if not problems else f"{xs} outside {interval}: {'; '.join(problems)}")
    return GateInstance(verdict=verdict, reason=reason, detail=detail + _tol_note(gate), operands=(x,),
                        lower=lo.value if lo else None, lower_strict=bool(lo and lo.strict),
                        upper=hi.value if hi else None, upper_strict=bool(hi and hi.strict), **base)


def _integer(gate: Gate, base: dict, x: Fraction, tol: Fraction) -> GateInstance:
    xs = base["values"][0]
    if gate.binary:
        ok = min(abs(x), abs(x - 1)) <= tol
        detail = f"{xs} {'in' if ok else 'not in'} {{0, 1}}"
    else:
        nearest = round(x)
        ok = abs(x - nearest) <= tol
        detail = f"{xs} {'is' if ok else 'is not'} an integer"
    verdict, reason = _verdict(ok)
    return GateInstance(verdict=verdict, reason=reason, detail=detail + _tol_note(gate), operands=(x,),
                        binary=gate.binary, **base)


def _order(gate: Gate, base: dict, xs: list[Fraction], texts: list[str | None], tol: Fraction) -> GateInstance:
    rel = "<" if gate.strict else "<="
    broken = None
    for k in range(len(xs) - 1):
        ok = xs[k] < xs[k + 1] + tol if gate.strict else xs[k] <= xs[k + 1] + tol
        if not ok:
            broken = k
            break
    chain = f" {rel} ".join(t or "?" for t in texts)
    if broken is None:
        detail = chain
    else:
        a, b = texts[broken], texts[broken + 1]
        detail = f"{chain} is broken: {a} {'>=' if gate.strict and xs[broken] == xs[broken + 1] else '>'} {b}"
    verdict, reason = _verdict(broken is None)
    return GateInstance(verdict=verdict, reason=reason, detail=detail + _tol_note(gate), operands=tuple(xs),
                        strict=gate.strict, **base)


def _order_list(gate: Gate, data: Any) -> list[GateInstance]:
    path = gate.chain_list
    assert path is not None
    container = _list_of(data, path)
    if isinstance(container, _ListGap):
        return [_gap_list(gate, container)]
    values = P.items(data, path)
    assert not isinstance(values, P.Missing)
    reads = [read(P.concrete(path, i), v) for i, v in enumerate(values)]
    out = []
    for i in range(len(reads) - 1):
        pair = [reads[i], reads[i + 1]]
        out.append(_decide(gate, i, pair))
    return out


def _identity(gate: Gate, base: dict, reads: list[Read], tol: Fraction) -> GateInstance:
    ident = gate.identity
    assert ident is not None
    bindings = tuple((n, r.number) for n, r in zip(ident.var_names, reads))
    bmap = dict(bindings)
    lhs_v = I.evaluate_side(ident.lhs, bmap)
    rhs_v = I.evaluate_side(ident.rhs, bmap)
    shown = I.with_values(ident.expr, {n: r.text for n, r in zip(ident.var_names, reads)})
    common = dict(relation=ident.relation, lhs=ident.lhs, rhs=ident.rhs, bindings=bindings,
                  operands=tuple(b for _, b in bindings), **base)
    if lhs_v is None or rhs_v is None:
        return GateInstance(verdict="fail", reason="undefined", lhs_value=lhs_v, rhs_value=rhs_v,
                            detail=f"{ident.expr}: {shown} divides by zero", **common)
    ok = I.relation_holds(ident.relation, lhs_v, rhs_v, tol)
    verdict, reason = _verdict(ok)
    actual = I.actual_relation(lhs_v, rhs_v)
    detail = f"{ident.expr}: {shown}, i.e. {show(lhs_v)} {actual} {show(rhs_v)}"
    if not ok:
        detail += f", violating {ident.relation}"
    return GateInstance(verdict=verdict, reason=reason, lhs_value=lhs_v, rhs_value=rhs_v,
                        detail=detail + _tol_note(gate), **common)


def _domain(gate: Gate, base: dict, r: Read, tol: Fraction) -> GateInstance:
    member = None
    label = None
    if r.kind == NUMBER:
        for k, v in enumerate(gate.domain_numbers):
            if v is not None and abs(r.number - v) <= tol:
                member = k
                break
        operands: tuple[Fraction, ...] = (r.number,)
    else:
        label = normalise(r.label or "")
        for k, v in enumerate(gate.domain):
            if normalise(v) == label:
                member = k
                break
        operands = ()
    verdict, reason = _verdict(member is not None)
    members = "{" + ", ".join(gate.domain) + "}"
    detail = f"{r.text} {'in' if member is not None else 'not in'} {members}"
    return GateInstance(verdict=verdict, reason=reason, detail=detail + _tol_note(gate), operands=operands,
                        domain=gate.domain, domain_numbers=gate.domain_numbers, label=label, member=member,
                        **base)


def _partition(gate: Gate, base: dict, parts: list[Fraction], total: Fraction, tol: Fraction) -> GateInstance:
    s = sum(parts, ZERO)
    ok = abs(s - total) <= tol
    verdict, reason = _verdict(ok)
    n = len(parts)
    total_text = gate.total_text if gate.total is None else show(total)
    if ok:
        detail = f"sum of {n} part(s) = {show(s)}" + (f" = total {total_text}" if s == total
                                                      else f", within tolerance of total {total_text}")
    else:
        detail = f"sum of {n} part(s) = {show(s)} != total {total_text} (difference {show(s - total)})"
    operands = tuple(parts) + ((total,) if gate.total is not None else ())
    return GateInstance(verdict=verdict, reason=reason, detail=detail + _tol_note(gate), operands=operands,
                        parts=tuple(parts), total=total, parts_sum=s, **base)


def _partition_whole(gate: Gate, data: Any) -> GateInstance:
    """A partition with a scalar (or declared) total: every part of every list is summed."""
    reads: list[Read] = []
    for p in gate.parts:
        if p.is_list:
            container = _list_of(data, p)
            if isinstance(container, _ListGap):
                if container.reason == "empty_list":
                    continue  # an empty list of parts sums to 0
                return _gap_list(gate, container)
            values = P.items(data, p)
            assert not isinstance(values, P.Missing)
            reads.extend(read(P.concrete(p, i), v) for i, v in enumerate(values))
        else:
            reads.append(read(p.text, P.get(data, p)))
    n_parts = len(reads)
    if gate.total is not None:
        reads.append(read(gate.total.text, P.get(data, gate.total)))
    screened = _screen(gate, None, reads)
    if screened is not None:
        return screened
    base = _base(gate, None, reads)
    if gate.total is not None:
        total = reads[-1].number
    else:
        assert gate.total_value is not None
        total = gate.total_value
    return _partition(gate, base, [r.number for r in reads[:n_parts]], total, gate.tolerance or ZERO)

