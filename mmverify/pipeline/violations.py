"""Schema violations stay local.

Design notes: docs/architecture.md, `mmverify/pipeline/violations.py`.
"""
from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any, Iterable, Sequence

from mmverify.reading.paths import WILDCARD
from mmverify.pipeline.validate import SchemaError

# keywords that hold at an object but name absent or extra keys: they take no
# value away, so they never make the top level fatal and never mask anything
_ABOUT_KEYS = frozenset({"required", "additionalProperties", "minProperties", "maxProperties",
                         "dependentRequired", "propertyNames", "unevaluatedProperties"})


def strict(task: Any, strict_schema: bool = False) -> bool:
    return bool(strict_schema or getattr(task, "strict_schema", False))


def _overlap(a: Sequence, b: Sequence) -> bool:
    """True when one path is a prefix of the other (``[*]`` matches any index)."""
    for x, y in zip(a, b):
        if x == WILDCARD and isinstance(y, int) or y == WILDCARD and isinstance(x, int):
            continue
        if x != y:
            return False
    return True


def _gate_inputs(task: Any) -> list[tuple[str, tuple]]:
    if not task.gates:
        return []
    from mmverify.gates.compile import compile_gates

    return [(g.id, p.segments) for g in compile_gates(task) for p in g.inputs]


def annotate(task: Any, errors: Iterable[SchemaError], *, strict_schema: bool = False) -> tuple[SchemaError, ...]:
    """Each error with its ``effect``: the scored fields it zeroes and the gates
    that read it, or that it is a warning, or that it makes the artifact invalid."""
    errors = tuple(errors)
    if not errors:
        return errors
    all_or_nothing = strict(task, strict_schema)
    metrics = [(m.path.text, m.path.segments) for m in task.metrics]
    gates = _gate_inputs(task)
    out = []
    for e in errors:
        seg = e.segments
        if e.keyword in _ABOUT_KEYS and e.keyword != "required":
            touched, gated = [], []     # an extra or surplus key: nothing the scoring reads
        else:
            touched = sorted({text for text, ms in metrics if _overlap(seg, ms)})
            gated = sorted({gid for gid, gs in gates if _overlap(seg, gs)})
        if all_or_nothing or fatal_one(e):
            effect = {"kind": "invalid", "scored_fields": touched, "gates": gated}
        elif touched or gated:
            effect = {"kind": "local", "scored_fields": touched, "gates": gated}
        else:
            effect = {"kind": "warning", "scored_fields": [], "gates": []}
        out.append(replace(e, effect=effect))
    return tuple(out)


def fatal_one(e: SchemaError) -> bool:
    """A violation of the top level value itself (not an object, say)."""
    return not e.segments and e.keyword not in _ABOUT_KEYS


def is_invalid(task: Any, errors: Sequence[SchemaError], *, strict_schema: bool = False) -> bool:
    """Does this set of violations make the whole artifact ``invalid``?"""
    return bool(errors) and (strict(task, strict_schema) or any(fatal_one(e) for e in errors))


def masked(data: Any, errors: Sequence[SchemaError]) -> Any:
    """A copy of ``data`` without the values that break the schema, for scoring.

    A value is removed at its nearest object key (a bad list item removes the
    whole list, so that positions and counts are never shifted). Violations
    about absent or extra keys remove nothing."""
    cuts = []
    for e in errors:
        if e.keyword in _ABOUT_KEYS:
            continue
        seg = e.segments
        keys = [i for i, s in enumerate(seg) if isinstance(s, str)]
        if keys:
            cuts.append(seg[: keys[-1] + 1])
    if not cuts:
        return data
    data = copy.deepcopy(data)
    for cut in sorted(set(cuts), key=len):
        parent: Any = data
        for s in cut[:-1]:
            try:
                parent = parent[s]
            except (KeyError, IndexError, TypeError):
                parent = None
                break
        if isinstance(parent, dict):
            parent.pop(cut[-1], None)
    return data


def verdict(task: Any, errors: Sequence[SchemaError], gates: Any, *,
            strict_schema: bool = False) -> tuple[str, dict[str, str]] | None:
    """(status, error) when the schema or a hard gate zeroes the whole artifact,
    else None. Order: ``invalid`` (all-or-nothing schema), then ``infeasible``.
    The pipeline, ``mmverify gate`` and the self-check all decide with this."""
    if is_invalid(task, errors, strict_schema=strict_schema):
        first = errors[0]
        message = f"{len(errors)} schema violation(s); first: {first.field}: {first.problem}"
        if gates is not None and gates.hard_failures:
            message += "; hard gate(s) failed: " + "; ".join(i.headline() for i in gates.hard_failures)
        return "invalid", {"code": "schema_violation", "message": message}
    if gates is not None and gates.hard_failures:
        return "infeasible", {"code": "hard_gate_failed",
                              "message": "; ".join(i.headline() for i in gates.hard_failures)}
    return None
