"""A one-sided check of a task's hard gates, for the reward and a score.

Design notes: docs/architecture.md, `gates/quick.py`.
"""
from __future__ import annotations

from typing import Any, Callable

from mmverify.reading import paths
from mmverify.reading.numbers import exact_decimal

from . import predicates
from .compile import compile_gates
from .model import Gate
from .quickcode import all_usable, compile_check
from .predicates import ZERO, aggregate_values
from .registry import FORM_TABLE


class HardGatesPassed:
    """What a score reads of the gate report of an artifact whose hard gate
    instances all pass: no failure, no gap to name (``instances`` holds the
    failing and gap instances a score looks at: none), and the concrete
    paths the passing gates verify. (A plain class: this module is loaded by
    every start, and a dataclass costs its generated methods.)"""

    __slots__ = ("task_id", "verified_paths", "decided_paths", "replay")
    instances: tuple = ()
    hard_failures: tuple = ()

    def __init__(self, task_id: str, verified_paths: frozenset[str], replay: Any = None,
                 decided_paths: frozenset[str] = frozenset()):
        self.task_id, self.verified_paths, self.replay = task_id, verified_paths, replay
        self.decided_paths = decided_paths

    def verified(self) -> frozenset[str]:
        return self.verified_paths

    def decided(self) -> frozenset[str]:
        return self.decided_paths

    def refuted(self) -> dict[str, str]:
        return {}

    def hard_gaps(self) -> tuple:
        return ()


class Values:
    """The values of one gate view that the form checks read (an order
    chain's list, a partition's parts and total), each path read once, and
    whether a list's values are usable, decided once."""

    __slots__ = ("view", "scalars", "columns", "usable")

    def __init__(self, view: Any):
        self.view = view
        self.scalars: dict[str, Any] = {}
        self.columns: dict[str, Any] = {}
        self.usable: dict[str, Any] = {}

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

    def numbers(self, path: paths.FieldPath) -> list[Any] | None:
        """The values of a ``[*]`` path when its list is there, not empty, and
        every value is usable; else None."""
        hit = self.usable.get(path.text, self)
        if hit is self:
            col = self.column(path)
            ok = isinstance(col, list) and col and all_usable(col)
            hit = self.usable[path.text] = col if ok else None
        return hit


Check = Callable[[Values], "list[int | None] | None"]


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


def quick_identity(gate: Gate) -> Check | None:
    if gate.aggregate is None:
        return None
    ident = gate.identity
    assert ident is not None
    tol = gate.tolerance or ZERO
    k = ident.var_names.index(gate.aggregate[0])
    listed, scalars = gate.inputs[k], gate.inputs[:k] + gate.inputs[k + 1:]

    def whole(values_of: Values) -> list[int | None] | None:
        elements = values_of.numbers(listed)
        others = [values_of.scalar(p) for p in scalars]
        if elements is None or not all_usable(others):
            return None
        numbers = [*others[:k], *elements, *others[k:]]
        return [None] if predicates.verdict_identity(gate, aggregate_values(gate, numbers), tol)[0] == "pass" \
            else None
    return whole


def quick_partition_sum(gate: Gate) -> Check | None:
    if gate.total is not None and gate.total.is_list:
        return None
    tol = gate.tolerance or ZERO
    # a constant total as the equal Decimal where it terminates (the sum is then all Decimal)
    constant = exact_decimal(gate.total_value) if gate.total is None else None

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
        values.append(values_of.scalar(gate.total) if gate.total is not None else constant)
        if not all_usable(values):
            return None
        return [None] if predicates.sum_holds(values, tol) else None
    return whole


def _special(gate: Gate) -> Check | None:
    """The form's own check of a gate that is not one instance per row, else None."""
    expanded = FORM_TABLE[gate.form].quick
    return expanded(gate) if expanded is not None else None


_KEPT = 256      # tasks whose checks a process keeps (a process loading more starts over)
_PLANS: dict[int, tuple[tuple[Gate, ...], Callable[..., Any], tuple[Any, ...]]] = {}


def _plan(task: Any) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """The task's generated all-pass check, and the paths its deciding claim
    gates verify (:attr:`Gate.decides`), both made once per task."""
    gates = compile_gates(task)
    hit = _PLANS.get(id(gates))
    if hit is None or hit[0] is not gates:
        if len(_PLANS) >= _KEPT:
            _PLANS.clear()
        try:
            check = compile_check(tuple(g for g in gates if g.scored), _special)
        except (SyntaxError, RecursionError, MemoryError):   # past the compiler's limits: always decline
            check = _declines
        hit = _PLANS[id(gates)] = (gates, check, tuple(p for g in gates if g.decides for p in g.verifies))
    return hit[1], hit[2]


def _declines(view: Any, values_of: Any) -> None:
    """The all-pass check of a task whose generated one could not be compiled:
    it never answers, and the gates are evaluated instance by instance."""
    return None


_ASKED: dict[int, tuple[Gate, ...]] = {}


def worth_it(task: Any) -> bool:
    """Whether a score should take the all-pass check for ``task``: not for the
    first artifact of the task in this process (then False, and the task is
    noted), whose report is most likely rendered at once (a command scoring
    one file); generating and compiling the check costs more than it saves
    there (smoke-screen: 735 lines, about 9 ms)."""
    gates = compile_gates(task)
    if id(gates) in _PLANS and _PLANS[id(gates)][0] is gates:
        return True
    if _ASKED.get(id(gates)) is gates:
        return True
    if len(_ASKED) >= _KEPT:
        _ASKED.clear()
    _ASKED[id(gates)] = gates
    return False


def hard_gates_pass(task: Any, view: Any, replayed: Any = None) -> HardGatesPassed | None:
    """:class:`HardGatesPassed` when every hard gate instance of ``task`` on
    ``view`` (the artifact with its replayed values, ``replay.gate_view``)
    passes on usable values; None otherwise (then evaluate the instances).
    The check is generated per task (:mod:`.quickcode`)."""
    check, deciding = _plan(task)
    verified = check(view, Values)
    if verified is None:
        return None
    verified = frozenset(verified)
    decided = frozenset(v for v in verified if any(v == p.text or (p.is_list and paths.matches(p, v))
                                                   for p in deciding)) if deciding and verified else frozenset()
    return HardGatesPassed(task.id, verified, replayed, decided)
