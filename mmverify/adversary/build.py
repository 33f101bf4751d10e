"""Building blind-attack artifacts from public material only.

The attacker sees what an agent sees: the artifact schema, the statement
(``problem.md``), the verdicts and bounds ``mmverify gate`` prints (the gates of
the public task), and which fields are scored in which direction (the
directions are "obvious" from the statement; giving them makes the attacker
stronger, never weaker). It never sees a panel value, a band or the oracle.

Values are written as :class:`decimal.Decimal`, as the parser would produce them.
"""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Callable, Mapping

from mmverify.reading import paths

BIG = Decimal("1e10")
TINY = Decimal("0.001")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")


@dataclass(frozen=True)
class Knowledge:
    """Everything a blind attacker may know about one task."""

    task_id: str
    schema: Mapping[str, Any]
    statement_numbers: tuple[Decimal, ...]
    directions: Mapping[str, str]        # generic metric path ([*]) -> higher/lower_is_better
    list_keys: Mapping[str, str]         # generic list path -> match_by key field
    schema_numbers: tuple[Decimal, ...] = ()     # numbers in the schema's description texts
    scored_paths: frozenset[str] = frozenset()   # every metric path (generic), any direction


def numbers_in(text: Any) -> list[Decimal]:
    """The numbers written in ``text`` (a statement or a description), in order."""
    return [Decimal(m) for m in _NUMBER.findall(text)] if isinstance(text, str) else []


def _descriptions(node: Any):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "description" and isinstance(value, str):
                yield value
            else:
                yield from _descriptions(value)
    elif isinstance(node, list):
        for value in node:
            yield from _descriptions(value)


def knowledge(task) -> Knowledge:
    """What the public material of ``task`` tells an attacker (no panel, no bands)."""
    import os

    text = ""
    problem = os.path.join(task.directory, "problem.md")
    if os.path.exists(problem):
        with open(problem, encoding="utf-8") as fh:
            text = fh.read()
    numbers = sorted(set(numbers_in(text)))
    described = sorted({x for t in _descriptions(task.artifact_schema) for x in numbers_in(t)})
    directions = {m.path.text: m.direction for m in task.metrics
                  if m.direction in ("higher_is_better", "lower_is_better")}
    keys = {m.path.split()[0].text: m.match_by for m in task.metrics if m.is_list and m.match_by}
    return Knowledge(task.id, task.artifact_schema, tuple(numbers), directions, keys, tuple(described),
                     frozenset(m.path.text for m in task.metrics))


def generic(path: str) -> str:
    """``a.b[3].c`` -> ``a.b[*].c`` (the form metric paths are written in)."""
    return re.sub(r"\[\d+\]", "[*]", path)


# ---------------------------------------------------------------- the schema

@dataclass(frozen=True)
class Leaf:
    path: str                    # concrete path
    node: Mapping[str, Any]      # its schema
    kind: str                    # number | integer | label


def _types(node: Mapping[str, Any]) -> set[str]:
    t = node.get("type")
    return set(t) if isinstance(t, list) else {t} if t else set()


def skeleton(know: Knowledge, number: Callable[[Leaf], Decimal], label: Callable[[Leaf], str]) -> dict:
    """An artifact with every field the schema describes, leaves filled by the
    two callbacks; lists keyed by a scored ``match_by`` get one item per key the
    schema enumerates."""
    return _build(know.schema, "", know, number, label, 0)


def _build(node: Any, path: str, know: Knowledge, number, label, depth: int) -> Any:
    if not isinstance(node, dict) or depth > 12:
        return None
    if "const" in node:
        return copy.deepcopy(node["const"])
    types = _types(node)
    if "object" in types or "properties" in node:
        out = {}
        for key, sub in (node.get("properties") or {}).items():
            value = _build(sub, f"{path}.{key}" if path else key, know, number, label, depth + 1)
            if value is not None:
                out[key] = value
        return out
    if "array" in types or "items" in node or "prefixItems" in node:
        return _array(node, path, know, number, label, depth)
    if "enum" in node and node["enum"]:
        return label(Leaf(path, node, "label"))
    if types & {"number", "integer"}:
        return number(Leaf(path, node, "integer" if "integer" in types and "number" not in types else "number"))
    if "string" in types:
        return label(Leaf(path, node, "label"))
    if "boolean" in types:
        return False
    return None


def _array(node, path, know, number, label, depth) -> list:
    prefix = node.get("prefixItems") or []
    out = [_build(sub, f"{path}[{i}]", know, number, label, depth + 1) for i, sub in enumerate(prefix)]
    items = node.get("items")
    if not isinstance(items, dict):
        return out
    key_field = know.list_keys.get(generic(path))
    keys = _enumerated_keys(items, key_field) if key_field else None
    if keys is not None:
        for k in keys:
            i = len(out)
            item = _build(items, f"{path}[{i}]", know, number, label, depth + 1)
            if isinstance(item, dict):
                item[key_field] = k
            out.append(item)
        return out
    count = max(int(node.get("minItems", 0)) - len(out), 3 if not prefix else 0)
    count = min(count, int(node.get("maxItems", count)) - len(out)) if "maxItems" in node else count
    if node.get("uniqueItems") and items.get("enum"):
        count = min(count, len(items["enum"]))
    for _ in range(max(count, 0)):
        out.append(_build(items, f"{path}[{len(out)}]", know, number, label, depth + 1))
    return out


def _enumerated_keys(items: Mapping[str, Any], key_field: str) -> list | None:
    sub = (items.get("properties") or {}).get(key_field)
    if not isinstance(sub, dict):
        return None
    if sub.get("enum"):
        return list(sub["enum"])
    lo, hi = sub.get("minimum"), sub.get("maximum")
    if "integer" in _types(sub) and lo is not None and hi is not None and hi - lo <= 50:
        return list(range(int(lo), int(hi) + 1))
    return None


# ---------------------------------------------------------------- number choices

def bounds(node: Mapping[str, Any]) -> tuple[Decimal | None, Decimal | None, bool, bool]:
    """(lo, hi, lo_strict, hi_strict) from the schema's numeric keywords."""
    lo = hi = None
    lo_s = hi_s = False
    if "minimum" in node:
        lo = Decimal(str(node["minimum"]))
    if "exclusiveMinimum" in node:
        lo, lo_s = Decimal(str(node["exclusiveMinimum"])), True
    if "maximum" in node:
        hi = Decimal(str(node["maximum"]))
    if "exclusiveMaximum" in node:
        hi, hi_s = Decimal(str(node["exclusiveMaximum"])), True
    return lo, hi, lo_s, hi_s


def round_value(x: Decimal, integer: bool) -> Decimal:
    """Two significant digits, or a whole number for an integer field."""
    if integer:
        return Decimal(int(x.to_integral_value()))
    if x == 0:
        return Decimal(0)
    return Decimal(f"{x:.2g}").normalize() + Decimal(0)


def mid_value(leaf: Leaf) -> Decimal:
    """A round mid-range value inside the schema's range."""
    lo, hi, lo_s, hi_s = bounds(leaf.node)
    integer = leaf.kind == "integer"
    if lo is not None and hi is not None:
        x = (lo + hi) / 2
    elif lo is not None:
        x = lo + (1 if lo >= 0 else abs(lo)) * (10 if integer else 1)
    elif hi is not None:
        x = hi / 2 if hi > 0 else hi - 1
    else:
        x = Decimal(10) if integer else Decimal(1)
    return clip(round_value(x, integer), leaf)


def clip(x: Decimal, leaf: Leaf) -> Decimal:
    """``x`` moved inside the schema's range (a strict bound gives a small step in)."""
    lo, hi, lo_s, hi_s = bounds(leaf.node)
    step = Decimal(1) if leaf.kind == "integer" else TINY
    if lo is not None and (x < lo or (lo_s and x == lo)):
        x = lo + step if lo_s else lo
    if hi is not None and (x > hi or (hi_s and x == hi)):
        x = hi - step if hi_s else hi
    return x


def extreme_value(leaf: Leaf, direction: str) -> Decimal:
    """The most extreme value the schema admits in the good direction."""
    lo, hi, lo_s, hi_s = bounds(leaf.node)
    if direction == "higher_is_better":
        x = hi if hi is not None else BIG
    else:
        x = lo if lo is not None else (TINY if leaf.kind != "integer" else Decimal(0))
    x = clip(x, leaf)
    return Decimal(int(x)) if leaf.kind == "integer" else x


def set_value(data: Any, path: str, value: Any) -> None:
    """Write ``value`` at a concrete path that :func:`skeleton` created."""
    if not paths.put(data, path, value, replace=False):
        raise KeyError(path)


def leaves(know: Knowledge) -> tuple[list[Leaf], list[Leaf]]:
    """Every number leaf and every label leaf of the skeleton, with its schema
    (the key fields of keyed lists are left out: they name items)."""
    numbers: list[Leaf] = []
    labels: list[Leaf] = []

    def number(leaf: Leaf) -> Decimal:
        numbers.append(leaf)
        return Decimal(0)

    def label(leaf: Leaf) -> str:
        labels.append(leaf)
        return ""

    skeleton(know, number, label)
    keyed = {(generic(lp), k) for lp, k in know.list_keys.items()}

    def is_key(leaf: Leaf) -> bool:
        head, _, last = leaf.path.rpartition(".")
        return (generic(re.sub(r"\[\d+\]$", "", head)), last) in keyed

    return [x for x in numbers if not is_key(x)], [x for x in labels if not is_key(x)]
