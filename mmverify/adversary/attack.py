"""The blind attack: artifacts from public material, backed off until ``gate``
is silent, each scored once.

Design notes: docs/architecture.md, `mmverify/adversary/attack.py`.
"""
from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Any

from . import families
from .build import (Knowledge, Leaf, clip, extreme_value, generic, knowledge, leaves, mid_value, round_value,
                    set_value, skeleton)

CLASSIC = ("mid", "statement", "extreme", "extreme_statement")
STRATEGIES = CLASSIC + families.VALUE_FAMILIES + families.STRUCTURAL_FAMILIES
ATTEMPTS = 40           # per generic family and task
# Repair work grows with identity instances times number fields; a task above
# REPAIR_WORK / attempts of it gets fewer attempts (at least one per family).
REPAIR_WORK = 40_000
BISECT_STEPS = 24
MAX_LABEL_VARIANTS = 6


@dataclass(frozen=True)
class Attempt:
    strategy: str
    variant: int
    status: str
    oeval: Fraction | None
    artifact: dict = field(repr=False, compare=False)

    @property
    def score(self) -> Fraction:
        return self.oeval if self.oeval is not None else Fraction(0)


@dataclass(frozen=True)
class TaskAttack:
    task_id: str
    attempts: tuple[Attempt, ...]

    @property
    def best(self) -> Attempt:
        return max(self.attempts, key=lambda a: (a.score, -STRATEGIES.index(a.strategy.split("#")[0])))

    @property
    def mean(self) -> Fraction:
        """The mean score per attempt."""
        return sum((a.score for a in self.attempts), Fraction(0)) / len(self.attempts) if self.attempts else Fraction(0)

    def expected_best(self, n: int) -> Fraction:
        """The exact expected best score of ``n`` attempts drawn at random without
        replacement (the best of all when ``n`` is at least their number)."""
        scores = sorted(a.score for a in self.attempts)
        m = len(scores)
        if m == 0:
            return Fraction(0)
        if n >= m:
            return scores[-1]
        from math import comb

        # the i-th smallest is the best of the draw when it is drawn with n-1 of the i below it
        return sum((scores[i] * Fraction(comb(i, n - 1), comb(m, n)) for i in range(n - 1, m)), Fraction(0))


class _Gates:
    """Hard-gate verdicts of the public task (what ``mmverify gate`` shows).

    Gates are evaluated one at a time where only some can change, which keeps
    the bisection cheap on tasks with many identities."""

    def __init__(self, task):
        from mmverify.gates import compile_gates, evaluate_gates
        from mmverify.gates.forms import evaluate_gate
        from mmverify.plugin.selfcheck import public_task

        self.public = public_task(task)
        self._all = evaluate_gates
        self._one = evaluate_gate
        self.hard = tuple(g for g in compile_gates(self.public) if g.hard)
        self.by_id = {g.id: g for g in self.hard}

    def failing(self, data: Any, gates=None) -> dict[str, Any]:
        out = {}
        for gate in (self.hard if gates is None else gates):
            for inst in self._one(gate, data):
                if inst.verdict == "fail":
                    out[inst.name] = inst
        return out

    def reading(self, path: str) -> tuple:
        """The hard gates that read the field at concrete ``path``."""
        g = generic(path)
        return tuple(gate for gate in self.hard if any(p.text == g or p.text == path for p in gate.inputs))

    @property
    def printed(self) -> tuple:
        """Every gate of the public task, soft ones too (``gate`` prints them all)."""
        from mmverify.gates import compile_gates

        return tuple(compile_gates(self.public))

    def evaluate(self, gate, data: Any) -> tuple:
        return tuple(self._one(gate, data))

    def instance(self, data: Any, name: str):
        gate = self.by_id[name.split("[")[0]]
        return next((i for i in self._one(gate, data) if i.name == name), None)


def _text(data: Any) -> bytes:
    return json.dumps(data, default=_decimal_json, ensure_ascii=False).encode()


class _Raw(float):
    """A float subclass whose repr is the exact decimal text (for json.dumps)."""

    def __new__(cls, text: str):
        obj = super().__new__(cls, float(text))
        obj.text = text
        return obj

    def __repr__(self) -> str:
        return self.text


def _decimal_json(obj: Any) -> Any:
    raise TypeError(type(obj).__name__)


def _encode(data: Any) -> Any:
    if isinstance(data, Decimal):
        text = format(data, "f") if abs(data.adjusted()) < 30 else str(data)
        return int(text) if data == data.to_integral_value() and "." not in text and "E" not in text else _Raw(text)
    if isinstance(data, dict):
        return {k: _encode(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_encode(v) for v in data]
    return data


def to_json(data: Any) -> str:
    """The artifact as JSON text, numbers written exactly."""
    return json.dumps(_encode(data), ensure_ascii=False, indent=1)


# ---------------------------------------------------------------- one task

def attack_task(task, *, strategies: tuple[str, ...] = STRATEGIES, seed: int = 0,
                label_variants: bool = True, attempts: int = ATTEMPTS) -> TaskAttack:
    """Run every strategy on ``task``; score each artifact once with the full task.

    The four classic strategies make one artifact each (and its label variants);
    every generic family makes at most ``attempts``."""
    from mmverify.reading.artifact import parse_bytes
    from mmverify.pipeline.evaluate import score_artifact

    unknown = [s for s in strategies if s not in STRATEGIES]
    if unknown:
        raise ValueError(f"unknown strategies {unknown}; known: {', '.join(STRATEGIES)}")
    know = knowledge(task)
    gates = _Gates(task)
    numbers, labels = leaves(know)
    built = _Builder(task, know, gates, numbers, labels, seed)
    attempts = attempts_on(attempts, built.classic("mid") if set(strategies) - set(CLASSIC) else None,
                           numbers, gates)
    out: list[Attempt] = []

    def score(strategy: str, variant: int, art: dict) -> None:
        report = score_artifact(task, parse_bytes(to_json(art).encode()))
        out.append(Attempt(strategy, variant, report.status, report.oeval, art))

    for strategy in strategies:
        if strategy in CLASSIC:
            data = built.classic(strategy)
            variants = _variant_count(labels) if label_variants else 1
            for k in range(variants):
                art = data if k == 0 else _relabel(data, labels, k)
                if k and gates.failing(art):
                    continue
                score(strategy, k, art)
        elif strategy in families.VALUE_FAMILIES:
            for i in range(attempts):
                score(strategy, i, built.value(strategy, i))
        elif strategy == "omit_optional":
            for i, base in zip(range(attempts), built.bases()):
                score(strategy, i, families.omit_optional(know, base))
        elif any(leaf.node.get("enum") for leaf in labels):   # label_enum
            tried = []
            for base in built.bases():
                for _, art in families.label_variants(base, labels, attempts - len(tried)):
                    if not gates.failing(art):
                        tried.append(art)
                if len(tried) >= attempts:
                    break
            for i, art in enumerate(tried):
                score(strategy, i, art)
    return TaskAttack(task.id, tuple(out))


def capped_attempts(task, attempts: int = ATTEMPTS) -> int:
    """How many attempts each generic family makes on ``task`` when asked for ``attempts``."""
    know = knowledge(task)
    gates = _Gates(task)
    numbers, labels = leaves(know)
    return attempts_on(attempts, _Builder(task, know, gates, numbers, labels, 0).classic("mid"), numbers, gates)


def attempts_on(attempts: int, base: dict | None, numbers: list[Leaf], gates: _Gates) -> int:
    """``attempts``, capped on a task whose repair is slow (see ``REPAIR_WORK``);
    the cap depends on the gates and the schema only."""
    if base is None:
        return attempts
    identities = sum(1 for gate in gates.hard for inst in gates.evaluate(gate, base) if inst.form == "identity")
    return max(1, min(attempts, REPAIR_WORK // max(1, identities * len(numbers))))


class _Builder:
    """The repaired artifacts of one task, each built once (the structural
    families reuse those of the others as their bases)."""

    def __init__(self, task, know, gates, numbers, labels, seed):
        self.task, self.know, self.gates, self.numbers, self.labels, self.seed = task, know, gates, numbers, labels, seed
        self._done: dict[tuple, dict] = {}
        self._context = None

    def _repaired(self, values: dict, variant: int = 0) -> dict:
        data = _assemble(self.know, self.task, values, variant)
        _repair(data, self.numbers, self.gates, self.labels)
        return data

    def classic(self, strategy: str) -> dict:
        key = (strategy,)
        if key not in self._done:
            rng = random.Random(f"{self.task.id}/{strategy}/{self.seed}")
            base_of = _statement_value(self.know, rng) if strategy.endswith("statement") else mid_value
            data = self._repaired({leaf.path: base_of(leaf) for leaf in self.numbers})
            if strategy.startswith("extreme"):
                _push(data, self.numbers, self.know, self.gates)
            self._done[key] = data
        return self._done[key]

    def value(self, family: str, index: int) -> dict:
        key = (family, index)
        if key not in self._done:
            if self._context is None:
                self._context = families.context(self.know, self.gates, self.classic("mid"))
            rng = random.Random(f"{self.task.id}/{family}/{self.seed}/{index}")
            of = families.value_family(family, index)(self.know, self._context, rng)
            self._done[key] = self._repaired({leaf.path: of(leaf) for leaf in self.numbers}, index % 3)
        return self._done[key]

    def bases(self):
        """Blind bases of the structural families, in a fixed order (built when reached)."""
        yield self.classic("extreme")
        for family, index in (("description", 0), ("boundary", families.BOUNDARY_MODES.index("good")),
                              ("statement_derived", 0), ("uniform", 0), ("loguniform", 0), ("gate_constants", 0)):
            yield self.value(family, index)


def _statement_value(know: Knowledge, rng: random.Random):
    def pick(leaf: Leaf) -> Decimal:
        pool = [x for x in know.statement_numbers if clip(x, leaf) == x
                and (leaf.kind != "integer" or x == x.to_integral_value())]
        return rng.choice(pool) if pool else mid_value(leaf)
    return pick


def _assemble(know: Knowledge, task, values: dict[str, Decimal], variant: int) -> dict:
    def number(leaf: Leaf) -> Decimal:
        return values.get(leaf.path, mid_value(leaf))

    def label(leaf: Leaf) -> str:
        last = leaf.path.rsplit(".", 1)[-1]
        if last == "task_id":
            return task.id
        if last == "problem_id" and task.problem_id:
            return task.problem_id
        enum = leaf.node.get("enum")
        index = re.findall(r"\[(\d+)\]$", leaf.path)
        if enum:   # items of a list take distinct members where they can (uniqueItems)
            return enum[(variant + (int(index[0]) if index else 0)) % len(enum)]
        index = re.findall(r"\[(\d+)\]$", leaf.path)
        return f"n/a {index[0]}" if index else "n/a"   # distinct items where uniqueItems asks

    return skeleton(know, number, label)


def _variant_count(labels: list[Leaf]) -> int:
    sizes = [len(leaf.node.get("enum") or ()) for leaf in labels]
    return max([1] + [min(n, MAX_LABEL_VARIANTS) for n in sizes])


def _relabel(data: dict, labels: list[Leaf], k: int) -> dict:
    import copy

    out = copy.deepcopy(data)
    for leaf in labels:
        enum = leaf.node.get("enum")
        if enum:
            set_value(out, leaf.path, enum[k % len(enum)])
    return out


# ---------------------------------------------------------------- reading gate output

def _repair(data: dict, numbers: list[Leaf], gates: _Gates, labels: list[Leaf] = (), passes: int = 6) -> None:
    """Make the base pass the hard gates the way ``gate``'s output suggests."""
    by_path = {leaf.path: leaf for leaf in numbers}
    label_paths = frozenset(leaf.path for leaf in labels)
    for _ in range(passes):
        failing = gates.failing(data)
        if not failing:
            return
        for inst in failing.values():
            _fix(data, inst, by_path, gates, label_paths)


def _get(data: Any, path: str) -> Any:
    from mmverify.reading import paths

    return paths.get(data, path)


def _fix(data: dict, inst, by_path: dict[str, Leaf], gates: _Gates, labels: frozenset[str] = frozenset()) -> None:
    paths = [p for p in inst.paths if p in by_path]
    if not paths and not (inst.form == "finite_domain" and inst.paths and inst.paths[0] in labels):
        return
    if inst.form == "range" and (inst.lower is not None or inst.upper is not None):
        leaf = by_path[paths[0]]
        x = _get(data, leaf.path)
        step = Decimal("0.001")
        if inst.lower is not None and Fraction(x) <= inst.lower:
            x = _dec(inst.lower) + (step if inst.lower_strict else 0)
        if inst.upper is not None and Fraction(x) >= inst.upper:
            x = _dec(inst.upper) - (step if inst.upper_strict else 0)
        set_value(data, leaf.path, clip(x, leaf))
    elif inst.form == "integer":
        leaf = by_path[paths[0]]
        x = round_value(_get(data, leaf.path), True)
        set_value(data, leaf.path, min(max(x, Decimal(0)), Decimal(1)) if inst.binary else x)
    elif inst.form == "order":
        vals = sorted(_get(data, p) for p in inst.paths if p in by_path)
        if inst.strict:
            vals = [v + Decimal(i) * Decimal("0.01") for i, v in enumerate(vals)]
        for p, v in zip([p for p in inst.paths if p in by_path], vals):
            set_value(data, p, v)
    elif inst.form == "partition_sum" and inst.parts_sum is not None:
        total_path = inst.paths[-1] if len(inst.paths) == len(inst.parts) + 1 else None
        if total_path in by_path:
            set_value(data, total_path, _dec(inst.parts_sum))
        elif inst.total is not None and inst.parts:
            share = _dec(inst.total / len(inst.parts))
            for p in inst.paths[:len(inst.parts)]:
                if p in by_path:
                    set_value(data, p, share)
    elif inst.form == "finite_domain" and inst.domain_numbers and inst.domain_numbers[0] is not None:
        set_value(data, paths[0], _dec(inst.domain_numbers[0]))
    elif inst.form == "finite_domain" and inst.domain and inst.paths[0] in labels:
        set_value(data, inst.paths[0], inst.domain[0])   # the member list gate prints
    elif inst.form == "identity":
        # solve for the variable the fewest other gates pin (an attacker moves the free one)
        for p in sorted(paths, key=lambda q: len(gates.reading(q))):
            if _solve(data, p, inst.name, by_path[p], gates):
                return
        for v in (Decimal(0), Decimal(1)):      # e.g. x**2 + y**2 == 0
            for p in paths:
                set_value(data, p, clip(v, by_path[p]))
            if inst.name not in gates.failing(data, (gates.by_id[inst.gate_id],)):
                return


def _dec(x: Fraction) -> Decimal:
    d = Decimal(x.numerator) / Decimal(x.denominator)
    if abs(d) >= Decimal("1e18"):   # past what nine decimals can hold: twelve significant digits
        return Decimal(f"{d:.12g}")
    return d.quantize(Decimal("1e-9")).normalize() + 0


def _solve(data: dict, path: str, name: str, leaf: Leaf, gates: _Gates) -> bool:
    """Solve identity instance ``name`` for one variable: secant steps on the
    printed lhs - rhs, then a small search around the root (the attacker reads
    both sides from ``gate``)."""
    start = _get(data, path)

    def gap(v: Decimal) -> Fraction | None:
        set_value(data, path, v)
        inst = gates.instance(data, name)
        if inst is None or inst.lhs_value is None or inst.rhs_value is None:
            return None
        return inst.lhs_value - inst.rhs_value

    only = (gates.by_id[name.split("[")[0]],)

    def ok(v: Decimal) -> bool:
        set_value(data, path, v)
        return name not in gates.failing(data, only)

    x0, x1 = start, start * Decimal("1.5") + 1
    for _ in range(40):
        f0, f1 = gap(x0), gap(x1)
        if f0 is None or f1 is None or f1 == f0:
            break
        x2 = _dec(Fraction(x1) - f1 * (Fraction(x1) - Fraction(x0)) / (f1 - f0))
        x0, x1 = x1, clip(x2, leaf)
        if ok(x1):
            return True
    for v in sorted([start * Decimal(2) ** k for k in range(-12, 13)] + [Decimal(0), Decimal(1)],
                    key=lambda v: abs(v - start)):
        if ok(clip(v, leaf)):
            return True
    set_value(data, path, start)
    return False


# ---------------------------------------------------------------- extreme claims

def _push(data: dict, numbers: list[Leaf], know: Knowledge, gates: _Gates) -> None:
    """Every scored directional field to its extreme, backed off by bisection
    until the hard failures are no more than the base's."""
    base_fail = set(gates.failing(data))
    for leaf in numbers:
        direction = know.directions.get(generic(leaf.path))
        if direction is None:
            continue
        reading = gates.reading(leaf.path)
        base = _get(data, leaf.path)
        far = extreme_value(leaf, direction)

        def fine(t: float, leaf: Leaf = leaf, base: Decimal = base, far: Decimal = far,
                 reading: tuple = reading) -> bool:
            set_value(data, leaf.path, _between(leaf, base, far, t))
            return set(gates.failing(data, reading)) <= base_fail

        if fine(1.0):
            continue
        lo, hi = 0.0, 1.0
        for _ in range(BISECT_STEPS):
            mid = (lo + hi) / 2
            if fine(mid):
                lo = mid
            else:
                hi = mid
        set_value(data, leaf.path, _between(leaf, base, far, lo))


def _between(leaf: Leaf, base: Decimal, far: Decimal, t: float) -> Decimal:
    """The value a fraction ``t`` of the way from ``base`` to ``far`` (geometric
    when both are positive), rounded as an attacker would write it."""
    if base > 0 and far > 0:
        x = base * (far / base) ** Decimal(t)
    else:
        x = base + (far - base) * Decimal(t)
    return clip(round_value(x, True) if leaf.kind == "integer" else Decimal(f"{x:.6g}"), leaf)
