"""Generic families of blind guesses, seeded and built from the schema walk.

Design notes: docs/architecture.md, `mmverify/adversary/families.py`.
"""
from __future__ import annotations

import copy
import random
import re
from dataclasses import dataclass
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Any, Callable, Mapping

from .build import Knowledge, Leaf, bounds, clip, extreme_value, generic, mid_value, numbers_in, set_value

VALUE_FAMILIES = ("uniform", "loguniform", "statement_derived", "description", "gate_constants", "boundary")
STRUCTURAL_FAMILIES = ("omit_optional", "label_enum")
BOUNDARY_MODES = ("lo", "hi", "lo_in", "hi_in", "good", "bad")
GATE_FACTORS = (Decimal(1), Decimal("0.99"), Decimal("1.01"), Decimal("0.9"), Decimal("1.1"))
LOG_LO, LOG_HI = Decimal("0.001"), Decimal("1e6")
RANDOM_PAIRS = 200

Values = Callable[[Leaf], Decimal]


@dataclass(frozen=True)
class Context:
    """What the families share on one task: the constants ``gate`` prints for
    each concrete path (read on the repaired ``mid`` base)."""

    gate_constants: Mapping[str, tuple[Decimal, ...]]


def context(know: Knowledge, gates, base: Any) -> Context:
    """Read the constants every gate of the public task prints on ``base``."""
    found: dict[str, list[Decimal]] = {}
    for gate in gates.printed:
        for inst in gates.evaluate(gate, base):
            values = [getattr(inst, a, None) for a in ("lower", "upper", "rhs_value", "parts_sum", "total")]
            shown = [_dec(v) for v in values if isinstance(v, Fraction)]
            for p in inst.paths:
                found.setdefault(p, []).extend(shown)
    return Context({p: tuple(dict.fromkeys(v)) for p, v in found.items()})


def _dec(x: Fraction) -> Decimal:
    with localcontext() as ctx:
        ctx.prec = 12
        return Decimal(x.numerator) / Decimal(x.denominator)


def _written(x: Decimal, leaf: Leaf) -> Decimal:
    """Four significant digits (a whole number for an integer field), inside the range."""
    if leaf.kind == "integer":
        return clip(Decimal(int(x.to_integral_value())), leaf)
    if x == 0 or not x.is_finite():
        return clip(Decimal(0), leaf)
    return clip(Decimal(f"{x:.4g}").normalize() + 0, leaf)


def _admits(leaf: Leaf) -> Callable[[Decimal], bool]:
    lo, hi, lo_s, hi_s = bounds(leaf.node)

    def ok(x: Decimal) -> bool:
        return ((lo is None or x > lo or (x == lo and not lo_s)) and (hi is None or x < hi or (x == hi and not hi_s))
                and (leaf.kind != "integer" or x == x.to_integral_value()))
    return ok


def _pick(pool, leaf: Leaf, rng: random.Random) -> Decimal:
    ok = _admits(leaf)
    cands = [x for x in pool if ok(x)]
    return _written(rng.choice(cands), leaf) if cands else mid_value(leaf)


def _uniform_in(a: Decimal, b: Decimal, rng: random.Random) -> Decimal:
    return a + (b - a) * Decimal(rng.random())


# ---------------------------------------------------------------- value families

def uniform(know: Knowledge, ctx: Context, rng: random.Random) -> Values:
    def value(leaf: Leaf) -> Decimal:
        lo, hi, _, _ = bounds(leaf.node)
        mid = mid_value(leaf)
        a = lo if lo is not None else (min(Decimal(0), mid) if hi is None else hi - 2 * abs(mid) - 1)
        b = hi if hi is not None else max(2 * abs(mid), a + 10, Decimal(1))
        return _written(_uniform_in(a, b, rng), leaf)
    return value


def loguniform(know: Knowledge, ctx: Context, rng: random.Random) -> Values:
    def value(leaf: Leaf) -> Decimal:
        lo, hi, _, _ = bounds(leaf.node)
        a = max(lo, LOG_LO) if lo is not None and lo > 0 else LOG_LO
        b = min(hi, LOG_HI) if hi is not None else LOG_HI
        if b <= a:
            b = a * 10
        x = _uniform_in(a.ln(), b.ln(), rng).exp()
        if lo is not None and lo < 0 and rng.random() < 0.3:
            x = -x
        return _written(x, leaf)
    return value


def derived_pool(numbers: tuple[Decimal, ...], rng: random.Random) -> list[Decimal]:
    """Public numbers, simple transforms of them, random pair combinations and round values."""
    base = sorted({x for x in numbers if x != 0})
    pool = set(base)
    for x in base:
        pool |= {x / 100, x * 100, x / 1000, x * 1000, x / 2, x * 2, x / 60, x * 60, x / 3600}
    if len(base) >= 2:
        for _ in range(RANDOM_PAIRS):
            a, b = rng.sample(base, 2)
            pool |= {a / b, a * b, a + b, abs(a - b)}
    pool |= {Decimal(m) * Decimal(10) ** e for e in range(-3, 7) for m in ("1", "2", "2.5", "5")}
    return sorted(pool)


def statement_derived(know: Knowledge, ctx: Context, rng: random.Random) -> Values:
    pool = derived_pool(know.statement_numbers + know.schema_numbers, rng)
    return lambda leaf: _pick(pool, leaf, rng)


def description(know: Knowledge, ctx: Context, rng: random.Random) -> Values:
    def value(leaf: Leaf) -> Decimal:
        own = [y for x in numbers_in(leaf.node.get("description")) for y in (x, x / 100, x * 100)]
        ok = _admits(leaf)
        return _pick(own if any(ok(x) for x in own) else know.statement_numbers, leaf, rng)
    return value


def gate_constants(know: Knowledge, ctx: Context, rng: random.Random) -> Values:
    def value(leaf: Leaf) -> Decimal:
        shown = ctx.gate_constants.get(leaf.path)
        if not shown:
            return mid_value(leaf)
        return _written(rng.choice(shown) * rng.choice(GATE_FACTORS), leaf)
    return value


def boundary(mode: str | None) -> Callable[[Knowledge, Context, random.Random], Values]:
    """All fields at one end of their range (``mode``), or a random end each (None)."""
    def family(know: Knowledge, ctx: Context, rng: random.Random) -> Values:
        def value(leaf: Leaf) -> Decimal:
            m = mode or rng.choice(BOUNDARY_MODES)
            direction = know.directions.get(generic(leaf.path))
            if m in ("good", "bad"):
                if direction is None:
                    return mid_value(leaf)
                other = "lower_is_better" if direction == "higher_is_better" else "higher_is_better"
                return extreme_value(leaf, direction if m == "good" else other)
            lo, hi, _, _ = bounds(leaf.node)
            integer = leaf.kind == "integer"
            if m.startswith("lo"):
                x = lo if lo is not None else Decimal(0)
                if m == "lo_in":
                    x += 1 if integer else Decimal("0.01") * (abs(hi - x) if hi is not None else 1)
            else:
                x = hi if hi is not None else LOG_HI
                if m == "hi_in":
                    x -= 1 if integer else Decimal("0.01") * (abs(x - lo) if lo is not None else abs(x))
            return clip(x, leaf)
        return value
    return family


def value_family(name: str, index: int) -> Callable[[Knowledge, Context, random.Random], Values]:
    """The generator of attempt ``index`` of family ``name`` (``boundary`` runs
    its fixed modes first, then random mixes)."""
    if name == "boundary":
        return boundary(BOUNDARY_MODES[index] if index < len(BOUNDARY_MODES) else None)
    return {"uniform": uniform, "loguniform": loguniform, "statement_derived": statement_derived,
            "description": description, "gate_constants": gate_constants}[name]


# ---------------------------------------------------------------- structural families

def omit_optional(know: Knowledge, data: Any) -> Any:
    """``data`` with only the schema's required properties and the containers of
    scored paths (so no plan and no witness unless the schema requires them)."""
    keep = set()
    for path in know.scored_paths:
        parts = re.sub(r"\[\*\]", "", path).split(".")
        keep |= {".".join(parts[:i]) for i in range(1, len(parts) + 1)}

    def walk(node: Any, schema: Any, path: str) -> None:
        if isinstance(node, dict) and isinstance(schema, dict):
            props = schema.get("properties") or {}
            required = set(schema.get("required") or ())
            for key in list(node):
                sub = f"{path}.{key}" if path else key
                if key not in required and sub not in keep:
                    del node[key]
                else:
                    walk(node[key], props.get(key, {}), sub)
        elif isinstance(node, list) and isinstance(schema, dict):
            for item in node:
                walk(item, schema.get("items") or {}, path)

    out = copy.deepcopy(data)
    walk(out, know.schema, "")
    return out


def label_variants(data: Any, labels: list[Leaf], limit: int) -> list[tuple[str, Any]]:
    """``data`` with one enum label leaf set to another member, for each leaf and
    member in schema order, at most ``limit`` of them."""
    from mmverify.reading import paths

    out = []
    for leaf in labels:
        members = leaf.node.get("enum")
        if not members:       # a free-text label has no member to try (its path may not even parse)
            continue
        current = paths.get(data, leaf.path)
        for member in members:
            if member == current:
                continue
            variant = copy.deepcopy(data)
            try:
                set_value(variant, leaf.path, member)
            except KeyError:      # the leaf is not in this artifact
                break
            out.append((f"{leaf.path}={member}", variant))
            if len(out) >= limit:
                return out
    return out
