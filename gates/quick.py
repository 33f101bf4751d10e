"""A one-sided check of a task's hard gates, for the reward.

A reward needs three things of the gates: whether a hard gate fails, which
artifact paths passing hard gates verify, and which hard gates cannot be
checked (gaps, read by the ``unwitnessed_claim`` rule). When every hard gate
instance passes on usable values, the answers are "none", "all that the gates
declare" and "none", and they can be had without building a verdict per
instance. :func:`hard_gates_pass` answers exactly that case, straight from the
artifact's values, with the same predicates as the instances
(``verdict_<form>`` of :mod:`.predicates`, through the form table). Anything else
(a value absent, null, of the wrong type, an empty or missing list, a failing
row) gives None, and the caller evaluates the gates instance by instance
(:func:`.forms.evaluate_gates`): the check is one-sided, never a verdict of
its own. A differential test holds it to the instances.
"""
from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from itertools import repeat
from typing import Any, Callable

from mmverify import paths

from . import formtable, predicates
from .compile import compile_gates
from .model import Gate, verified_paths
from .predicates import ZERO


class HardGatesPassed:
    """What a score reads of the gate report of an artifact whose hard gate
    instances all pass: no failure, no gap to name (``instances`` holds the
    failing and gap instances a score looks at: none), and the concrete
    paths the passing gates verify. (A plain class: this module is loaded
    by every start, and a dataclass costs its generated methods.)"""

    __slots__ = ("task_id", "verified_paths", "replay")
    instances: tuple = ()
    hard_failures: tuple = ()

    def __init__(self, task_id: str, verified_paths: frozenset[str], replay: Any = None):
        self.task_id, self.verified_paths, self.replay = task_id, verified_paths, replay

    def verified(self) -> frozenset[str]:
        return self.verified_paths


def usable(value: Any, labels: bool = False) -> bool:
    """Whether the gate forms read ``value`` as a number (or, for ``labels``, a
    label): the parser's exact types only; anything else is left to the
    instances (``exact.read``)."""
    cls = value.__class__
    return ((cls is Decimal and value.is_finite()) or cls is int or cls is Fraction
            or (labels and cls is str))


class Values:
    """The values of one gate view, each path read once (gates share inputs),
    and whether they are usable, each decided once."""

    __slots__ = ("view", "scalars", "columns", "usable")

    def __init__(self, view: Any):
        self.view = view
        self.scalars: dict[str, Any] = {}
        self.columns: dict[str, Any] = {}
        self.usable: dict[tuple[str, bool], Any] = {}

    def scalar(self, path: paths.FieldPath) -> Any:
        hit = self.scalars.get(path.text, self)
        if hit is self:
            hit = self.scalars[path.text] = paths.get(self.view, path)
        return hit

    def column(self, path: paths.FieldPath) -> list[Any] | paths.Missing:
        """The element values of a ``[*]`` path (``paths.items``)."""
        hit = self.columns.get(path.text)
        if hit is None:
            hit = self.columns[path.text] = paths.items(self.view, path)
        return hit

    def number(self, path: paths.FieldPath, labels: bool = False) -> Any:
        """The value at a scalar path when it is usable, else None."""
        key = (path.text, labels)
        hit = self.usable.get(key, self)
        if hit is self:
            value = self.scalar(path)
            hit = self.usable[key] = value if usable(value, labels) else None
        return hit

    def numbers(self, path: paths.FieldPath, labels: bool = False) -> list[Any] | None:
        """The values of a ``[*]`` path when its list is there, not empty, and
        every value is usable; else None."""
        key = (path.text, labels)
        hit = self.usable.get(key, self)
        if hit is self:
            col = self.column(path)
            ok = isinstance(col, list) and col and all(usable(v, labels) for v in col)
            hit = self.usable[key] = col if ok else None
        return hit


Check = Callable[[Values], "list[int | None] | None"]


def _row_check(gate: Gate) -> Check:
    """The instance indices of a gate with one instance per row of its inputs,
    when every row passes on usable values; else None."""
    entry = formtable.FORM_TABLE[gate.form]
    verdict, tol, labels = entry.verdict, gate.tolerance or ZERO, entry.reads_labels
    inputs = gate.inputs
    flags = tuple(p.is_list for p in inputs)

    if not any(flags):
        def scalar_rows(values_of: Values) -> list[int | None] | None:
            values = [values_of.number(p, labels) for p in inputs]
            if None not in values and verdict(gate, values, tol)[0] == "pass":
                return [None]
            return None
        return scalar_rows

    def list_rows(values_of: Values) -> list[int | None] | None:
        columns: list[Any] = []
        n = 0
        for p, is_list in zip(inputs, flags):
            col = values_of.numbers(p, labels) if is_list else values_of.number(p, labels)
            if col is None:       # absent, null, not a list, empty, or a value not usable: not all passes
                return None
            if is_list:
                n = len(col)
            columns.append(col)
        rows = zip(*[col if is_list else repeat(col, n) for col, is_list in zip(columns, flags)])
        for row in rows:
            if verdict(gate, row, tol)[0] != "pass":
                return None
        return list(range(n))
    return list_rows


# ``quick_<form>(gate)``: for a gate ``expand_<form>`` of gates/forms.py
# expands, its check here: a function of the view's values (``Values``) giving
# the instance indices when every instance passes on usable values, else None
# (None instead of the function: the gate has plain rows).

def quick_order(gate: Gate) -> Check | None:
    path = gate.chain_list
    if path is None:
        return None
    tol = gate.tolerance or ZERO

    def chain(values_of: Values) -> list[int | None] | None:
        values = values_of.numbers(path)
        # every adjacent pair in order is the whole chain in order
        if values is None or predicates.verdict_order(gate, values, tol)[0] != "pass":
            return None
        return list(range(len(values) - 1))
    return chain


def quick_partition_sum(gate: Gate) -> Check | None:
    if gate.total is not None and gate.total.is_list:
        return None
    tol = gate.tolerance or ZERO

    def whole(values_of: Values) -> list[int | None] | None:
        values: list[Any] = []
        for p in gate.parts:
            if p.is_list:
                got = values_of.column(p)
                if not isinstance(got, list):
                    return None
                values.extend(got)         # an empty list of parts sums to 0
            else:
                values.append(values_of.scalar(p))
        values.append(values_of.scalar(gate.total) if gate.total is not None else gate.total_value)
        if not all(usable(v) for v in values):
            return None
        *parts, total = [predicates.fraction(v) for v in values]
        return [None] if predicates.partition_holds(parts, total, tol)[1] else None
    return whole


def _check(gate: Gate) -> Check:
    expanded = formtable.FORM_TABLE[gate.form].quick
    if expanded is not None:
        own = expanded(gate)
        if own is not None:
            return own
    return _row_check(gate)


_PLANS: dict[int, tuple[tuple[Gate, ...], tuple[tuple[Gate, Check], ...]]] = {}


def _plan(task: Any) -> tuple[tuple[Gate, Check], ...]:
    gates = compile_gates(task)
    hit = _PLANS.get(id(gates))
    if hit is None or hit[0] is not gates:
        hit = _PLANS[id(gates)] = (gates, tuple((g, _check(g)) for g in gates if g.hard))
    return hit[1]


def hard_gates_pass(task: Any, view: Any, replayed: Any = None) -> HardGatesPassed | None:
    """:class:`HardGatesPassed` when every hard gate instance of ``task`` on
    ``view`` (the artifact with its replayed values, ``replay.gate_view``)
    passes on usable values; None otherwise (then evaluate the instances)."""
    verified: set[str] = set()
    values = Values(view)
    for gate, check in _plan(task):
        indices = check(values)
        if indices is None:
            return None
        if gate.verifies:
            for index in indices:
                verified.update(verified_paths(gate, index))
    return HardGatesPassed(task.id, frozenset(verified), replayed)
