"""Falsifiability: a value the artifact could have held instead, that breaks the
gate, flips the emitted statement.

Design notes: `docs/architecture.md` (this module's section).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any, Iterable, Iterator, Sequence

from . import syntax
from .claims import NotExpressible
from .ir import Obligation, claim_of, falsifier, is_replay_path


@dataclass(frozen=True)
class ValueMutation:
    task_id: str
    obligation: Obligation         # the original (its statement is what the file proves)
    path: str                      # the artifact path changed
    before: str                    # its value, decimal text
    after: str                     # the new value, decimal text
    verdict: str                   # the gate's verdict on the mutated artifact
    claim: syntax.Prop             # the IR's claim on the mutated artifact

    @property
    def flips(self) -> bool:
        """The mutated claim's truth differs from the original statement's."""
        return syntax.eval_prop(self.claim) != self.obligation.holds

    @property
    def false_statement(self) -> syntax.Prop:
        """The mutated claim with the original polarity: what a file would say if it
        kept the gate's old verdict for the new value (must be false)."""
        return self.claim if self.obligation.holds else syntax.Not(self.claim)

    @property
    def true_statement(self) -> syntax.Prop:
        """The mutated claim with the mutated verdict's polarity (must be true)."""
        return self.claim if self.verdict == "pass" else syntax.Not(self.claim)


def _text(q: Fraction) -> str:
    """Exact decimal text of a terminating fraction."""
    from mmverify.reading.numbers import exact_text

    return exact_text(q)


def _candidates(o: Obligation, path: str, current: Fraction) -> Iterator[Fraction]:
    seen: set[Fraction] = {current}

    def fresh(q: Fraction) -> Iterator[Fraction]:
        if q not in seen:
            seen.add(q)
            yield q

    hit = falsifier(o.claim)
    scale = Fraction(10) ** o.decimals
    if hit is not None and hit[0] == path:
        q = Fraction(hit[1]) / scale
        yield from fresh(q)
        yield from fresh(-q)
    unit = 1 / scale
    for q in (current + Fraction(1, 2), current + unit, current - unit, -current - 1, current * 2 + 1,
              current + 1, current - 1, Fraction(0), current * 10 + 7, -(current * 10 + 7),
              current + Fraction(10) ** 6, current - Fraction(10) ** 6):
        yield from fresh(q)


def _instance(report: Any, gate_id: str, index: int | None) -> Any:
    return next((i for i in report.instances if i.gate_id == gate_id and i.index == index), None)


def value_mutation(task: Any, data: Any, o: Obligation, max_tries: int = 40) -> ValueMutation | None:
    """The first single-value change of ``data`` that flips ``o``'s gate instance
    (and so its statement), or None."""
    from mmverify.reading import paths
    from mmverify.gates import evaluate_gates

    for path in o.reads:
        if is_replay_path(path):
            continue
        try:
            raw = paths.get(data, paths.parse_path(path))
        except Exception:
            continue
        if isinstance(raw, bool) or not isinstance(raw, (int, Decimal)):
            continue
        current = Fraction(raw)
        for k, q in enumerate(_candidates(o, path, current)):
            if k >= max_tries:
                break
            mutated = copy.deepcopy(data)
            if not paths.put(mutated, paths.parse_path(path), Decimal(_text(q))):
                break
            inst = _instance(evaluate_gates(task, mutated), o.gate_id, o.index)
            if inst is None or not inst.decided or (inst.verdict == "pass") == o.holds:
                continue
            try:
                claim, _, _ = claim_of(inst)
            except NotExpressible:
                continue
            m = ValueMutation(task.id, o, path, _text(current), _text(q), inst.verdict, claim)
            if m.flips:
                return m
    return None


def per_form(task: Any, data: Any, obligations: Iterable[Obligation],
             forms: Sequence[str] | None = None) -> dict[str, ValueMutation | None]:
    """For each gate form among ``obligations`` (or ``forms``), the first
    obligation of that form (file order) a value mutation flips, else None."""
    out: dict[str, ValueMutation | None] = {}
    for o in obligations:
        if forms is not None and o.form not in forms:
            continue
        if out.get(o.form) is not None:
            continue
        out[o.form] = value_mutation(task, data, o)
    return out
