"""Per-form evaluation of compiled gates on parsed artifact data. Not split
(about 540 lines): the six forms' decisions share one reader and one row walk.

Design notes: docs/architecture.md, `gates/forms.py`.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Sequence

from mmverify.reading import paths
from mmverify.reading.numbers import pair_fraction

from . import identity
from .compile import compile_gates
from .exact import ABSENT, LABEL, NUMBER, WRONG, Read, read, read_light, show, type_name
from .model import Gate, GateInstance, GateReport, GateVerdict, make_instance
from .predicates import (ZERO, aggregate_values, domain_member, fraction, identity_verdict, integer_holds,
                         order_broken, partition_holds, range_holds, verdict_identity, verdict_integer, verdict_of,
                         verdict_order, verdict_range)
from .registry import FORM_TABLE

_RUN = object()  # evaluate_gates default: run the task's replay

# Detail texts are built lazily: each decision passes a function that makes the
# text, run only when a report shows it (``GateInstance.detail``).


def evaluate_gates(task, data: Any, replayed: Any = _RUN, *, hard_only: bool = False,
                   records: bool | None = None) -> GateReport:
    """Every gate instance of ``task`` on parsed artifact ``data`` (see module doc).

    Gates read the artifact and the values its replay derived (``$replay.``
    paths). ``replayed`` is the replay stage's :class:`~mmverify.replay.ReplayReport`
    for this data (None for a task without replay); by default the replay is run
    here, so every caller sees the same verdicts.

    ``hard_only`` gives what a score needs and no more: the hard and claim
    gates only (soft gates never change a score), none after the first hard
    gate with a failing instance (one is enough to zero the artifact), and each instance as
    a :class:`~mmverify.gates.model.GateVerdict` (the same verdict, decided by
    the same predicate, without the exact data and detail a report shows).
    ``records`` (default: not ``hard_only``) says whether instances are full
    records or such verdicts."""
    from mmverify.replay import gate_view, run_replay

    if replayed is _RUN:
        replayed = run_replay(task, data)
    view = gate_view(data, replayed)
    gates = compile_gates(task)
    out: list[GateInstance] = []
    if records is None:
        records = not hard_only
    reader = _Reader(view, light=not records)
    if hard_only:
        gates = tuple(g for g in gates if g.scored)
        for gate in gates:
            found = evaluate_gate(gate, view, reader)
            out.extend(found)
            if gate.hard and any(i.verdict == "fail" for i in found):
                break
    else:
        for gate in gates:
            out.extend(evaluate_gate(gate, view, reader))
    return GateReport(task.id, tuple(out), gates, replayed)


def score_gates(task, data: Any, replayed: Any = _RUN) -> GateReport:
    """The gate report of a score: equal to ``evaluate_gates(task, data,
    replayed)``, but when every hard gate instance passes (the one-sided check
    :func:`.quick.hard_gates_pass`) the instances are made only when first read
    (:meth:`GateReport.deferred`): a score reads no more than "no hard failure,
    no hard gap, these verified paths" (a task's own oracle also its failing
    soft instances, once per task), and a report that is never rendered never
    pays for its records. ``data`` is read again then, so it must not be changed
    after scoring (the parser's documents are not). A task's first artifact in
    a process is evaluated at once (:func:`.quick.worth_it`)."""
    from mmverify.replay import gate_view, run_replay

    from .quick import hard_gates_pass, worth_it

    if replayed is _RUN:
        replayed = run_replay(task, data)
    known = hard_gates_pass(task, gate_view(data, replayed), replayed) if worth_it(task) else None
    if known is None:
        return evaluate_gates(task, data, replayed)
    return GateReport.deferred(task.id, compile_gates(task), replayed,
                               lambda: evaluate_gates(task, data, replayed).instances, known)


class _Reader:
    """The reads of one artifact, each made once: gates share their inputs."""

    __slots__ = ("data", "scalars", "lists", "light", "read")

    def __init__(self, data: Any, light: bool = False):
        self.data = data
        self.light = light      # verdicts only (GateVerdict), see evaluate_gates
        self.read = read_light if light else read
        self.scalars: dict[str, Read] = {}
        self.lists: dict[str, list[Read]] = {}

    def scalar(self, path: paths.FieldPath) -> Read:
        hit = self.scalars.get(path.text)
        if hit is None:
            hit = self.scalars[path.text] = self.read(path.text, paths.get(self.data, path))
        return hit

    def elements(self, path: paths.FieldPath) -> list[Read]:
        """One read per element of a ``[*]`` path whose list exists (see ``_list_of``)."""
        hit = self.lists.get(path.text)
        if hit is None:
            values = paths.items(self.data, path)
            assert not isinstance(values, paths.Missing)
            # paths.concrete(path, i), spelled out: the rendered path around its one [*]
            before, after = _around(path)
            read_one = self.read
            hit = self.lists[path.text] = [read_one(f"{before}[{i}]{after}", v) for i, v in enumerate(values)]
        return hit


_AROUND: dict[str, tuple[str, str]] = {}


def _around(path: paths.FieldPath) -> tuple[str, str]:
    """The rendered text of a ``[*]`` path before and after its ``[*]`` (made once per path)."""
    hit = _AROUND.get(path.text)
    if hit is None:
        before, after = paths.render_segments(path.segments).split("[*]")
        hit = _AROUND[path.text] = (before, after)
    return hit


_SHAPES: dict[int, tuple[Gate, tuple[bool, ...], Any]] = {}


def _shape(gate: Gate) -> tuple[tuple[bool, ...], Any]:
    """Which inputs of ``gate`` are ``[*]`` paths, and the first of them (None:
    all scalar); worked out once per compiled gate."""
    hit = _SHAPES.get(id(gate))
    if hit is None or hit[0] is not gate:
        flags = tuple(p.is_list for p in gate.inputs)
        hit = (gate, flags, next((p for p, f in zip(gate.inputs, flags) if f), None))
        _SHAPES[id(gate)] = hit
    return hit[1], hit[2]


_TEMPLATES: dict[int, tuple[Gate, dict[str, Any]]] = {}


def _template(gate: Gate) -> dict[str, Any]:
    """The gate's own fields of a :class:`GateInstance` (built once per compiled
    gate; every other field not given is at its class default)."""
    hit = _TEMPLATES.get(id(gate))
    if hit is not None and hit[0] is gate:
        return hit[1]
    template = dict(gate_id=gate.id, form=gate.form, level=gate.level,
                    severity=gate.severity, tolerance=gate.tolerance_text, tolerance_value=gate.tolerance or ZERO)
    _TEMPLATES[id(gate)] = (gate, template)
    return template


def _instance(gate: Gate, index: int | None, reads: list[Read], **fields: Any) -> GateInstance:
    fields["index"] = index
    if len(reads) == 1:
        fields["paths"], fields["values"] = (reads[0][0],), (reads[0][4],)     # Read.path, Read.text
    else:
        fields["paths"] = tuple([r[0] for r in reads])
        fields["values"] = tuple([r[4] for r in reads])
    return make_instance(_template(gate), fields)


def _light(gate: Gate, index: int | None, reads: list[Read], verdict: str, reason: str | None) -> GateVerdict:
    return tuple.__new__(GateVerdict, (gate.id, gate.severity, index, tuple([r[0] for r in reads]),
                                       tuple([r[4] for r in reads]), verdict, reason))   # Read.path, Read.text


def evaluate_gate(gate: Gate, data: Any, reader: _Reader | None = None) -> list[GateInstance]:
    reader = reader if reader is not None and reader.data is data else _Reader(data)
    expand = FORM_TABLE[gate.form].expand
    if expand is not None:
        whole = expand(gate, data, reader)
        if whole is not None:
            return whole
    rows = _rows(data, gate, reader)
    if isinstance(rows, _ListGap):
        return [_gap_list(gate, rows, reader.light)]
    return _decide_rows(gate, rows, reader.light)


def _decide_rows(gate: Gate, rows: list[tuple[int | None, Any]], light: bool) -> list[GateInstance | GateVerdict]:
    """``_decide(gate, index, reads, light)`` for every row, in one loop: rows of
    numbers go straight to the form's predicate (``light``) or record."""
    entry = FORM_TABLE[gate.form]
    verdict, decide, tol = entry.verdict, entry.decide, gate.tolerance or ZERO
    out: list[GateInstance | GateVerdict] = []
    for index, reads in rows:
        if not all(r[1] is NUMBER for r in reads):                 # Read.kind
            out.append(_decide(gate, index, reads, light))
        elif light:
            out.append(_light(gate, index, reads, *verdict(gate, [r[2] for r in reads], tol)))   # Read.number
        else:
            out.append(decide(gate, (gate, index, reads), reads, tol))
    return out


# ------------------------------------------------------------------- rows

class _ListGap:
    """A ``[*]`` list that cannot be expanded: absent/null/empty (a gap) or not
    a list at all (a fail, ``not_a_list``)."""

    def __init__(self, path: paths.FieldPath, reason: str, why: str):
        self.path, self.reason, self.why = path, reason, why

    @property
    def verdict(self) -> str:
        return "fail" if self.reason == "not_a_list" else "gap"


def _list_of(data: Any, path: paths.FieldPath) -> list[Any] | _ListGap:
    head = path.split()[0]
    container = paths.get(data, head) if head.segments else data
    if isinstance(container, paths.Missing):
        return _ListGap(path, "missing", container.reason)
    if container is None:
        return _ListGap(path, "missing", f"{head.text!r} is null")
    if not isinstance(container, list):
        return _ListGap(path, "not_a_list", f"{head.text!r} holds <{type_name(container)}>, not a list")
    if not container:
        return _ListGap(path, "empty_list", f"list {head.text!r} is empty")
    return container


def _rows(data: Any, gate: Gate, reader: _Reader) -> list[tuple[int | None, list[Read]]] | _ListGap:
    """One row of reads per instance of ``gate``; ``[*]`` inputs (all on one list)
    pair by index, scalar inputs are broadcast to every element."""
    inputs = gate.inputs
    flags, first = _shape(gate)
    if first is None:
        return [(None, [reader.scalar(p) for p in inputs])]
    container = _list_of(data, first)
    if isinstance(container, _ListGap):
        return container
    columns = [reader.elements(p) if f else None for p, f in zip(inputs, flags)]
    if all(flags):
        return list(enumerate(zip(*columns)))
    scalars = [None if f else reader.scalar(p) for p, f in zip(inputs, flags)]
    return [(i, [col[i] if col is not None else sc for col, sc in zip(columns, scalars)])
            for i in range(len(container))]


def _gap_list(gate: Gate, gap: _ListGap, light: bool = False) -> GateInstance | GateVerdict:
    if light:
        return GateVerdict(gate.id, gate.severity, None, (gap.path.text,), (None,), gap.verdict, gap.reason)
    return make_instance(_template(gate), dict(
        index=None, paths=(gap.path.text,), values=(None,), verdict=gap.verdict, reason=gap.reason,
        detail_source=f"no elements to check: {gap.why}"))


def _screen(gate: Gate, index: int | None, reads: list[Read], want_label: bool = False,
            light: bool = False) -> GateInstance | GateVerdict | None:
    """The fail/gap instance when some input is unusable, else None."""
    bad = [r for r in reads if r.kind == WRONG or (r.kind == LABEL and not want_label)]
    if bad:
        reason = "not_a_label" if want_label else "not_a_number"
        if light:
            return _light(gate, index, reads, "fail", reason)
        what = "a number or a label" if want_label else "a number"
        detail = "; ".join(f"{r.path} holds {r.text}, not {what}" for r in bad)
        return _instance(gate, index, reads, verdict="fail", reason=reason, detail_source=detail)
    absent = [r for r in reads if r.kind == ABSENT]
    if absent:
        if light:
            return _light(gate, index, reads, "gap", "missing")
        detail = "input absent: " + "; ".join(r.why or r.path for r in absent)
        return _instance(gate, index, reads, verdict="gap", reason="missing", detail_source=detail)
    return None


def _tol_note(gate: Gate) -> str:
    # the written reason is anchor prose (it may quote reference values): it is
    # kept on the Gate, not in the detail that ``mmverify gate`` prints
    return f" (tolerance {gate.tolerance_text})" if gate.tolerance is not None else ""


def values_of(reads: Sequence[Read]) -> list[Any]:
    """The values of a row of usable reads: each number as read, or a label."""
    return [r[2] if r[1] is NUMBER else r[3] for r in reads]      # Read.kind, .number, .label


# ------------------------------------------------------------------ decide

def _decide(gate: Gate, index: int | None, reads: list[Read], light: bool = False) -> GateInstance | GateVerdict:
    entry = FORM_TABLE[gate.form]
    for r in reads:
        if r.kind != NUMBER:
            screened = _screen(gate, index, reads, entry.reads_labels, light)
            if screened is not None:
                return screened
            break
    if light:
        return _light(gate, index, reads, *entry.verdict(gate, values_of(reads), gate.tolerance or ZERO))
    return entry.decide(gate, (gate, index, reads), reads, gate.tolerance or ZERO)


# ----------------------------------------------------------- one per form
# ``decide_<form>(gate, base, reads, tol)``: the verdict of one row of usable
# reads (``verdict_<form>`` of gates/predicates.py) as a GateInstance with its
# detail and exact data; ``expand_<form>(gate, data, reader)``: the instances
# of a gate that is not one row per element (None: the rows of its inputs).
# See gates/formtable.py.
#
# A record's exact data (operands and what is computed from them, as
# Fractions) is made on first use by ``exact_source`` (GateInstance), which
# first checks that the Fraction form of the predicate gives the same verdict.

def decide_range(gate: Gate, base: tuple, reads: list[Read], tol: Fraction) -> GateInstance:
    return _range(gate, base, reads[0].number, verdict_range(gate, (reads[0].number,), tol), tol)


def decide_integer(gate: Gate, base: tuple, reads: list[Read], tol: Fraction) -> GateInstance:
    return _integer(gate, base, reads[0].number, verdict_integer(gate, (reads[0].number,), tol), tol)


def decide_order(gate: Gate, base: tuple, reads: list[Read], tol: Fraction) -> GateInstance:
    numbers = [r.number for r in reads]
    return _order(gate, base, numbers, [r.text for r in reads], verdict_order(gate, numbers, tol), tol)


def decide_identity(gate: Gate, base: tuple, reads: list[Read], tol: Fraction) -> GateInstance:
    return _identity(gate, base, reads, verdict_identity(gate, tuple([r.number for r in reads]), tol), tol)


def decide_finite_domain(gate: Gate, base: tuple, reads: list[Read], tol: Fraction) -> GateInstance:
    return _domain(gate, base, reads[0], tol)


def decide_partition_sum(gate: Gate, base: tuple, reads: list[Read], tol: Fraction) -> GateInstance:
    n_parts = len(gate.parts)
    return _partition(gate, base, [fraction(r.number) for r in reads[:n_parts]], fraction(reads[n_parts].number),
                      tol)


def _agreed(decided: tuple[str, str | None], exact: tuple[str, str | None], gate: Gate) -> None:
    """The check made before an instance's exact data is handed out."""
    if decided != exact:
        raise AssertionError(f"gate {gate.id}: verdict {decided} but its exact data gives {exact}")


def expand_order(gate: Gate, data: Any, reader: _Reader) -> list[GateInstance] | None:
    return _order_list(gate, data, reader) if gate.chain_list is not None else None


def expand_identity(gate: Gate, data: Any, reader: _Reader) -> list[GateInstance] | None:
    return [_identity_aggregate(gate, data, reader)] if gate.aggregate is not None else None


def expand_partition_sum(gate: Gate, data: Any, reader: _Reader) -> list[GateInstance] | None:
    if gate.total is None or not gate.total.is_list:
        return [_partition_whole(gate, data, reader)]
    return None


def _range(gate: Gate, base: tuple, number: Any, decided: tuple[str, str | None], tol: Fraction) -> GateInstance:
    lo, hi = gate.lower, gate.upper
    verdict, reason = decided
    xs = base[2][0].text

    def exact() -> dict[str, Any]:
        x = fraction(number)
        _agreed(decided, verdict_of(range_holds(gate, x, tol)), gate)
        return {"operands": (x,)}

    def detail() -> str:
        x = fraction(number)
        problems = []
        if lo is not None and not (x > lo.value - tol if lo.strict else x >= lo.value - tol):
            problems.append(f"{'at or ' if lo.strict and x == lo.value - tol else ''}below the "
                            f"{'strict ' if lo.strict else ''}minimum {lo.text}")
        if hi is not None and not (x < hi.value + tol if hi.strict else x <= hi.value + tol):
            problems.append(f"{'at or ' if hi.strict and x == hi.value + tol else ''}above the "
                            f"{'strict ' if hi.strict else ''}maximum {hi.text}")
        interval = (("(" if lo.strict else "[") + lo.text if lo else "(-inf") + ", " + \
                   (hi.text + (")" if hi.strict else "]") if hi else "+inf)")
        text = (f"{xs} within {interval}" if not problems else f"{xs} outside {interval}: {'; '.join(problems)}")
        return text + _tol_note(gate)

    return _instance(*base, verdict=verdict, reason=reason, detail_source=detail, exact_source=exact,
                     lower=lo.value if lo else None, lower_strict=bool(lo and lo.strict),
                     upper=hi.value if hi else None, upper_strict=bool(hi and hi.strict))


def _integer(gate: Gate, base: tuple, number: Any, decided: tuple[str, str | None], tol: Fraction) -> GateInstance:
    xs = base[2][0].text
    verdict, reason = decided
    ok = verdict == "pass"

    def exact() -> dict[str, Any]:
        x = fraction(number)
        _agreed(decided, verdict_of(integer_holds(gate, x, tol)), gate)
        return {"operands": (x,)}

    def detail() -> str:
        if gate.binary:
            return f"{xs} {'in' if ok else 'not in'} {{0, 1}}" + _tol_note(gate)
        return f"{xs} {'is' if ok else 'is not'} an integer" + _tol_note(gate)

    return _instance(*base, verdict=verdict, reason=reason, detail_source=detail, exact_source=exact,
                     binary=gate.binary)


def _order(gate: Gate, base: tuple, numbers: list[Any], texts: list[str | None], decided: tuple[str, str | None],
           tol: Fraction) -> GateInstance:
    verdict, reason = decided

    def exact() -> dict[str, Any]:
        xs = [fraction(x) for x in numbers]
        _agreed(decided, verdict_of(order_broken(gate, xs, tol) is None), gate)
        return {"operands": tuple(xs)}

    def detail() -> str:
        xs = [fraction(x) for x in numbers]
        broken = order_broken(gate, xs, tol)
        rel = "<" if gate.strict else "<="
        chain = f" {rel} ".join(t or "?" for t in texts)
        if broken is None:
            text = chain
        else:
            a, b = texts[broken], texts[broken + 1]
            text = f"{chain} is broken: {a} {'>=' if gate.strict and xs[broken] == xs[broken + 1] else '>'} {b}"
        return text + _tol_note(gate)

    return _instance(*base, verdict=verdict, reason=reason, detail_source=detail, exact_source=exact,
                     strict=gate.strict)


def _order_list(gate: Gate, data: Any, reader: _Reader) -> list[GateInstance]:
    path = gate.chain_list
    assert path is not None
    container = _list_of(data, path)
    if isinstance(container, _ListGap):
        return [_gap_list(gate, container, reader.light)]
    reads = reader.elements(path)
    out = []
    for i in range(len(reads) - 1):
        pair = [reads[i], reads[i + 1]]
        out.append(_decide(gate, i, pair, reader.light))
    return out


def _identity(gate: Gate, base: tuple, reads: list[Read], decided: tuple[str, str | None],
              tol: Fraction, values: Sequence[Any] | None = None) -> GateInstance:
    """The record of an identity instance; ``values`` (one per variable) where
    the gate reads an aggregate, whose list's elements stand in ``reads``."""
    ident = gate.identity
    assert ident is not None
    verdict, reason = decided
    made: dict[str, Any] = {}
    aggregate = None
    texts = {n: r.text for n, r in zip(ident.var_names, reads)}
    heading = ident.expr
    if values is not None:
        name, kind = gate.aggregate
        k = ident.var_names.index(name)
        n = len(reads) - len(values) + 1
        aggregate = (name, kind, k, n)
        texts = {v: r.text for v, r in zip(ident.var_names, reads[:k] + [reads[k]] + reads[k + n:])}
        texts[name] = show(fraction(values[k]))
        heading += (f" with {name} the {'largest' if kind == 'max' else 'smallest'} of {n} value(s) of "
                    f"{gate.inputs[k].text}")

    def exact() -> dict[str, Any]:
        if not made:        # (shared with the detail text)
            operands = tuple([fraction(r.number) for r in reads])
            bound = operands if values is None else tuple([fraction(v) for v in values])
            lhs_p, rhs_p = ident.evaluate(bound)
            _agreed(decided, identity_verdict(gate, lhs_p, rhs_p, tol), gate)
            made.update(operands=operands, bindings=tuple(zip(ident.var_names, bound)),
                        lhs_value=pair_fraction(*lhs_p) if lhs_p is not None else None,
                        rhs_value=pair_fraction(*rhs_p) if rhs_p is not None else None)
        return made

    def detail() -> str:
        shown = identity.with_values(ident.expr, texts)
        if reason == "undefined":
            return f"{heading}: {shown} divides by zero"
        lhs_v, rhs_v = exact()["lhs_value"], made["rhs_value"]
        text = f"{heading}: {shown}, i.e. {show(lhs_v)} {identity.actual_relation(lhs_v, rhs_v)} {show(rhs_v)}"
        if verdict != "pass":
            text += f", violating {ident.relation}"
        return text + _tol_note(gate)

    return _instance(*base, verdict=verdict, reason=reason, detail_source=detail, exact_source=exact,
                     relation=ident.relation, identity=ident, aggregate=aggregate)


def _identity_aggregate(gate: Gate, data: Any, reader: _Reader) -> GateInstance | GateVerdict:
    """The one instance of an identity over a list's largest (smallest) element."""
    ident, (name, _) = gate.identity, gate.aggregate
    assert ident is not None
    k = ident.var_names.index(name)
    container = _list_of(data, gate.inputs[k])
    if isinstance(container, _ListGap):
        return _gap_list(gate, container, reader.light)
    reads = ([reader.scalar(p) for p in gate.inputs[:k]] + reader.elements(gate.inputs[k])
             + [reader.scalar(p) for p in gate.inputs[k + 1:]])
    screened = _screen(gate, None, reads, light=reader.light)
    if screened is not None:
        return screened
    tol = gate.tolerance or ZERO
    values = aggregate_values(gate, [r.number for r in reads])
    decided = verdict_identity(gate, values, tol)
    if reader.light:
        return _light(gate, None, reads, *decided)
    return _identity(gate, (gate, None, reads), reads, decided, tol, values)


def _domain(gate: Gate, base: tuple, r: Read, tol: Fraction) -> GateInstance:
    x = fraction(r.number) if r.kind == NUMBER else r.label or ""
    member, label = domain_member(gate, x, tol)
    operands: tuple[Fraction, ...] = (x,) if r.kind == NUMBER else ()
    verdict, reason = verdict_of(member is not None)

    def detail() -> str:
        members = "{" + ", ".join(gate.domain) + "}"
        return f"{r.text} {'in' if member is not None else 'not in'} {members}" + _tol_note(gate)

    return _instance(*base, verdict=verdict, reason=reason, detail_source=detail, operands=operands,
                     domain=gate.domain, domain_numbers=gate.domain_numbers, label=label, member=member)


def _partition(gate: Gate, base: tuple, parts: list[Fraction], total: Fraction, tol: Fraction) -> GateInstance:
    s, ok = partition_holds(parts, total, tol)
    verdict, reason = verdict_of(ok)

    def detail() -> str:
        n = len(parts)
        total_text = gate.total_text if gate.total is None else show(total)
        if ok:
            text = f"sum of {n} part(s) = {show(s)}" + (f" = total {total_text}" if s == total
                                                        else f", within tolerance of total {total_text}")
        else:
            text = f"sum of {n} part(s) = {show(s)} != total {total_text} (difference {show(s - total)})"
        return text + _tol_note(gate)

    operands = tuple(parts) + ((total,) if gate.total is not None else ())
    return _instance(*base, verdict=verdict, reason=reason, detail_source=detail, operands=operands,
                     parts=tuple(parts), total=total, parts_sum=s)


def _partition_whole(gate: Gate, data: Any, reader: _Reader) -> GateInstance:
    """A partition with a scalar (or declared) total: every part of every list is summed."""
    reads: list[Read] = []
    for p in gate.parts:
        if p.is_list:
            container = _list_of(data, p)
            if isinstance(container, _ListGap):
                if container.reason == "empty_list":
                    continue  # an empty list of parts sums to 0
                return _gap_list(gate, container, reader.light)
            reads.extend(reader.elements(p))
        else:
            reads.append(reader.scalar(p))
    n_parts = len(reads)
    if gate.total is not None:
        reads.append(reader.scalar(gate.total))
    screened = _screen(gate, None, reads, light=reader.light)
    if screened is not None:
        return screened
    base = (gate, None, reads)
    if gate.total is not None:
        total = fraction(reads[-1].number)
    else:
        assert gate.total_value is not None
        total = gate.total_value
    parts = [fraction(r.number) for r in reads[:n_parts]]
    if reader.light:
        return _light(gate, None, reads, *verdict_of(partition_holds(parts, total, gate.tolerance or ZERO)[1]))
    return _partition(gate, base, parts, total, gate.tolerance or ZERO)

