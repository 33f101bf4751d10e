"""Compiling the gate specs of a task: every defect is a TaskLoadError naming
``task.json``, the gate and the field.

Design notes: docs/architecture.md, `gates/compile.py`.
"""
from __future__ import annotations

import os
import threading
from dataclasses import replace
from fractions import Fraction
from typing import Any, Mapping

from mmverify.reading.paths import FieldPath, PathError, WILDCARD, parse_path
from mmverify.reading.labels import normalise_label
from mmverify.reading.numbers import is_decimal_text, to_fraction
from mmverify.tasks import TaskLoadError, TaskSpec

from mmverify.replay import ROOT as REPLAY_ROOT
from mmverify.replay import declared_names, statement_names

from .identity import IdentityError, load_side_texts, side_texts
from .model import Bound, Gate, identity_of
from .registry import FORM_TABLE

COMMON_KEYS = {"id", "form", "level", "severity", "description", "tolerance", "tolerance_reason", "verifies",
               "$comment"}
_RESERVED_VARS = {"Rational"}

_cache: dict[tuple[str, str], tuple[Any, tuple[Gate, ...]]] = {}
_lock = threading.Lock()


_by_task: dict[int, tuple[TaskSpec, tuple[Gate, ...]]] = {}   # the same task object again: no path work
_BY_TASK_KEPT = 256


def compile_gates(task: TaskSpec) -> tuple[Gate, ...]:
    """Validate and compile every gate of ``task`` (cached)."""
    seen = _by_task.get(id(task))
    if seen is not None and seen[0] is task:
        return seen[1]
    key = (task.id, os.path.abspath(task.directory))
    with _lock:
        hit = _cache.get(key)
    if hit is not None and hit[0] is task.gates:
        _remember(task, hit[1])
        return hit[1]
    file = os.path.join(task.directory, "task.json")
    # sympy's reading of every identity of the task, from one cache record
    load_side_texts((spec.get("expr"), tuple(spec["vars"])) for spec in task.gates
                    if spec.get("form") == "identity" and isinstance(spec.get("vars"), dict))
    compiled = tuple(_compile(spec, i, task, file) for i, spec in enumerate(task.gates))
    ids = [g.id for g in compiled]
    for gid in ids:
        if ids.count(gid) > 1:
            raise TaskLoadError(file, "gates", f"duplicate gate id {gid!r}")
    with _lock:
        _cache[key] = (task.gates, compiled)
    _remember(task, compiled)
    return compiled


def _remember(task: TaskSpec, compiled: tuple[Gate, ...]) -> None:
    with _lock:
        if len(_by_task) >= _BY_TASK_KEPT:
            _by_task.clear()
        _by_task[id(task)] = (task, compiled)


class _Ctx:
    def __init__(self, spec: Mapping[str, Any], position: int, task: TaskSpec, file: str):
        self.spec, self.task, self.file = spec, task, file
        self.where = f"gates/{position} ({spec.get('id', '?')})"

    def fail(self, field_: str, problem: str) -> TaskLoadError:
        return TaskLoadError(self.file, f"{self.where}/{field_}" if field_ else self.where, problem)

    def path(self, text: Any, field_: str) -> FieldPath:
        if not isinstance(text, str):
            raise self.fail(field_, "a path must be a string")
        try:
            path = parse_path(text)
        except PathError as exc:
            raise self.fail(field_, str(exc)) from None
        if path.segments[0] == REPLAY_ROOT:
            name = path.text[len(REPLAY_ROOT) + 1:]
            if path.is_list or name not in declared_names(self.task):
                raise self.fail(field_, f"reads {text!r}, which the task's replay does not declare "
                                        f"(declared: {sorted(declared_names(self.task)) or 'no replay'})")
            return path
        if not sub_schemas(self.task.artifact_schema, path):
            raise self.fail(field_, f"reads {text!r}, a field the artifact schema does not describe")
        return path

    def number(self, text: Any, field_: str) -> Fraction:
        if not is_decimal_text(text):
            raise self.fail(field_, f"{text!r} is not a decimal string")
        value = to_fraction(text)
        assert value is not None
        return value


def sub_schemas(schema: Mapping[str, Any], path: FieldPath) -> list[Mapping[str, Any]]:
    """Every sub-schema describing the field at ``path``: one, or for a ``[*]``
    over a tuple-typed array (``prefixItems``), the one of each position that
    describes it (plus ``items`` when it is a schema). Empty when undescribed."""
    nodes: list[Any] = [schema]
    for seg in path.segments:
        nxt: list[Any] = []
        for node in nodes:
            if not isinstance(node, dict):
                continue
            if isinstance(seg, str):
                nxt.append(node.get("properties", {}).get(seg))
            elif seg == WILDCARD:
                nxt.extend(node.get("prefixItems") or [])
                nxt.append(node.get("items"))
            else:
                prefix = node.get("prefixItems")
                nxt.append(prefix[seg] if prefix and seg < len(prefix) else node.get("items"))
        nodes = [n for n in nxt if isinstance(n, dict)]
    return nodes


def _same_list(paths: list[FieldPath], ctx: _Ctx, field_: str) -> None:
    heads = {p.split()[0].segments for p in paths if p.is_list}
    if len(heads) > 1:
        raise ctx.fail(field_, "[*] paths read together must walk the same list (elements pair by index)")


def _compile(spec: Mapping[str, Any], position: int, task: TaskSpec, file: str) -> Gate:
    ctx = _Ctx(spec, position, task, file)
    form = spec.get("form")
    entry = FORM_TABLE.get(form) if isinstance(form, str) else None
    if entry is None:
        raise ctx.fail("form", f"unknown form {form!r}")
    unknown = set(spec) - COMMON_KEYS - entry.keys
    if unknown:
        raise ctx.fail(sorted(unknown)[0], f"key(s) {sorted(unknown)} are not part of a {form} gate")
    tol = tol_text = None
    if "tolerance" in spec:
        tol_text = spec["tolerance"]
        tol = ctx.number(tol_text, "tolerance")
        if tol < 0:
            raise ctx.fail("tolerance", "a tolerance is non-negative")
        if not spec.get("tolerance_reason"):
            raise ctx.fail("tolerance_reason", "a tolerance needs its written reason")
    verifies = _verifies(spec, ctx)
    common: dict[str, Any] = dict(verifies=verifies,
        id=spec["id"], form=form, level=spec["level"], severity=spec["severity"],
        description=spec.get("description", ""), position=position,
        tolerance=tol, tolerance_text=tol_text, tolerance_reason=spec.get("tolerance_reason"))
    gate = entry.compile(spec, ctx, common)
    if gate.severity == "claim":
        replayed = [p.text[len(REPLAY_ROOT) + 1:] for p in gate.inputs if p.segments[0] == REPLAY_ROOT]
        if gate.identity.relation == "==" and replayed and set(replayed) <= statement_names(task):
            gate = replace(gate, decides=True)
    if gate.severity == "soft" and any(p.segments[0] == REPLAY_ROOT for p in gate.inputs):
        # where a replay can decide a value, the replay is the judge
        raise ctx.fail("severity", "a gate that reads a replayed value ($replay....) is hard (a plan that breaks "
                                   "the statement) or claim (a claim the replay refutes), never soft")
    return gate


# ------------------------------------------------------- one function per form
# (each takes the spec, its context and the common fields; see gates/formtable.py)

def build_range(spec: Mapping[str, Any], ctx: _Ctx, common: dict[str, Any]) -> Gate:
    path = ctx.path(spec.get("path"), "path")
    lower = upper = None
    if "min" in spec:
        lower = Bound(ctx.number(spec["min"], "min"), spec["min"], bool(spec.get("min_strict", False)))
    elif "min_strict" in spec:
        raise ctx.fail("min_strict", "min_strict without min")
    if "max" in spec:
        upper = Bound(ctx.number(spec["max"], "max"), spec["max"], bool(spec.get("max_strict", False)))
    elif "max_strict" in spec:
        raise ctx.fail("max_strict", "max_strict without max")
    if lower is None and upper is None:
        raise ctx.fail("", "a range needs min or max")
    if lower and upper and (lower.value > upper.value or
                            (lower.value == upper.value and (lower.strict or upper.strict))):
        raise ctx.fail("max", f"empty range: min {lower.text} / max {upper.text}")
    return Gate(inputs=(path,), lower=lower, upper=upper, **common)


def build_integer(spec: Mapping[str, Any], ctx: _Ctx, common: dict[str, Any]) -> Gate:
    path = ctx.path(spec.get("path"), "path")
    return Gate(inputs=(path,), binary=bool(spec.get("binary", False)), **common)


def build_order(spec: Mapping[str, Any], ctx: _Ctx, common: dict[str, Any]) -> Gate:
    strict = bool(spec.get("strict", False))
    if ("path" in spec) == ("paths" in spec):
        raise ctx.fail("paths", "an order gate takes either paths (a chain) or path (one [*] list)")
    if "path" in spec:
        path = ctx.path(spec["path"], "path")
        if not path.is_list:
            raise ctx.fail("path", "a single order path must be a [*] list")
        return Gate(inputs=(path,), chain_list=path, strict=strict, **common)
    raw = spec["paths"]
    if not isinstance(raw, list) or len(raw) < 2:
        raise ctx.fail("paths", "an order chain needs at least two paths")
    chain = tuple(ctx.path(p, f"paths/{k}") for k, p in enumerate(raw))
    _same_list(list(chain), ctx, "paths")
    return Gate(inputs=chain, chain=chain, strict=strict, **common)


def build_identity(spec: Mapping[str, Any], ctx: _Ctx, common: dict[str, Any]) -> Gate:
    raw_vars = spec.get("vars")
    if not isinstance(raw_vars, dict) or not raw_vars:
        raise ctx.fail("vars", "an identity needs vars {name: path}")
    names = tuple(raw_vars)
    for n in names:
        if n in _RESERVED_VARS or n.startswith("_"):
            raise ctx.fail(f"vars/{n}", f"variable name {n!r} is reserved")
    aggregates = [(n, k) for n in names if isinstance(raw_vars[n], dict) for k in raw_vars[n]]
    if len(aggregates) > 1 or any(k not in ("max", "min") for _, k in aggregates):
        raise ctx.fail("vars", "at most one variable may be an aggregate, written {\"max\": path} or {\"min\": path}")
    aggregated = dict(aggregates)
    var_paths = tuple(ctx.path(raw_vars[n][aggregated[n]] if n in aggregated else raw_vars[n], f"vars/{n}")
                      for n in names)
    try:
        ident = identity_of(spec.get("expr", ""), names, var_paths)
        # sympy's reading of the sides (cached with the anchors' content, so
        # only a cache miss imports sympy) also rejects a side it folds into
        # a non-rational constant, such as a division by ``x - x``
        side_texts(spec["expr"], names)
    except IdentityError as exc:
        raise ctx.fail("expr", str(exc)) from None
    if not aggregates:
        _same_list(list(var_paths), ctx, "vars")
        return Gate(inputs=var_paths, identity=ident, **common)
    return Gate(inputs=var_paths, identity=ident, aggregate=_aggregate(*aggregates[0], names, var_paths, ctx, spec),
                **common)


def _aggregate(name: str, kind: str, names: tuple[str, ...], var_paths: tuple[FieldPath, ...],
               ctx: _Ctx, spec: Mapping[str, Any]) -> tuple[str, str]:
    """``(name, "max" | "min")`` of an identity's one aggregated variable: a
    ``[*]`` list read whole, standing alone on one side of the relation (so
    that the relation to its largest or smallest element is stated element by
    element, never folded); every other variable is a scalar."""
    from .identity import whole_side_names

    for n, p in zip(names, var_paths):
        if (n == name) != p.is_list:
            raise ctx.fail(f"vars/{n}", f"the aggregate {name} reads a [*] list and every other variable a scalar"
                           if n != name else f"{kind} of {p.text}: the path must be a [*] list")
    if name not in whole_side_names(spec["expr"], names):
        raise ctx.fail("expr", f"the aggregate {name} must stand alone on one side of the relation ({name} == ..., "
                               f"... <= {name})")
    return name, kind


def build_finite_domain(spec: Mapping[str, Any], ctx: _Ctx, common: dict[str, Any]) -> Gate:
    path = ctx.path(spec.get("path"), "path")
    values = spec.get("values")
    if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
        raise ctx.fail("values", "a finite domain needs a non-empty list of strings")
    seen: dict[str, str] = {}
    for v in values:
        key = normalise_label(v)
        if key in seen:
            raise ctx.fail("values", f"members {seen[key]!r} and {v!r} are the same after trim + case-fold")
        seen[key] = v
    numbers = tuple(to_fraction(v) if is_decimal_text(v) else None for v in values)
    nums = [n for n in numbers if n is not None]
    if len(set(nums)) != len(nums):
        raise ctx.fail("values", "two numeric members are equal")
    return Gate(inputs=(path,), domain=tuple(values), domain_numbers=numbers, **common)


def build_partition_sum(spec: Mapping[str, Any], ctx: _Ctx, common: dict[str, Any]) -> Gate:
    raw_parts = spec.get("parts")
    if isinstance(raw_parts, str):
        parts = (ctx.path(raw_parts, "parts"),)
        if not parts[0].is_list:
            raise ctx.fail("parts", "a single parts path must be a [*] list (or give a list of paths)")
    elif isinstance(raw_parts, list) and raw_parts:
        parts = tuple(ctx.path(p, f"parts/{k}") for k, p in enumerate(raw_parts))
    else:
        raise ctx.fail("parts", "parts is a [*] path or a non-empty list of paths")
    if ("total" in spec) == ("total_value" in spec):
        raise ctx.fail("total", "give exactly one of total (a path) and total_value (a number)")
    total = total_value = total_text = None
    if "total" in spec:
        total = ctx.path(spec["total"], "total")
        if total.is_list:
            _same_list([total, *parts], ctx, "parts")
    else:
        total_text = spec["total_value"]
        total_value = ctx.number(total_text, "total_value")
    inputs = parts + ((total,) if total is not None else ())
    return Gate(inputs=inputs, parts=parts, total=total, total_value=total_value, total_text=total_text,
                **common)


def _verifies(spec: Mapping[str, Any], ctx: _Ctx) -> tuple[FieldPath, ...]:
    """The claims a passing hard gate verifies: artifact paths it reads itself."""
    raw = spec.get("verifies")
    if raw is None:
        if spec.get("severity") == "claim":
            raise ctx.fail("verifies", "a claim gate names the claims it judges in verifies")
        return ()
    if spec.get("severity") != "claim" or spec.get("form") != "identity":
        raise ctx.fail("verifies", "only a claim gate (an identity: claimed vs replayed) judges a claim; a hard "
                                   "gate rules an answer out and verifies nothing")
    out = []
    for k, text in enumerate(raw):
        path = ctx.path(text, f"verifies/{k}")
        if path.segments[0] == REPLAY_ROOT or text not in (spec.get("vars") or {}).values():
            raise ctx.fail(f"verifies/{k}", f"{text!r} is not an artifact path this gate reads")
        out.append(path)
    if not any(isinstance(p, str) and p.startswith(REPLAY_ROOT + ".") for p in (spec.get("vars") or {}).values()):
        raise ctx.fail("verifies", "a verifying gate must read a replayed value ($replay....)")
    return tuple(out)

