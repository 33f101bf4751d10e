"""MM-Agent results files, and the artifact built from them.

:func:`read_results` reads one ``code/main<k>.results.json`` (strictly, as an
artifact is read) and keeps only the keys the task's artifact schema
describes. :func:`set_field` writes a value into the artifact under
construction: new list slots are *holes* until a value fills them, and a
different value already there is a conflict, never overwritten.
"""
from __future__ import annotations

from decimal import Decimal
from typing import Any, Mapping

from mmverify.reading import paths
from mmverify.reading.artifact import ArtifactError, json_type, parse_bytes

MAX_RESULTS_BYTES = 32 * 1024 * 1024


# ------------------------------------------------------------------- reading

def _unknown_inside(sub: Any, value: Any, prefix: str) -> list[str]:
    """Paths inside an object or list value that the schema ``sub`` does not describe."""
    out: list[str] = []
    if not isinstance(sub, dict):
        return out
    if isinstance(value, dict) and isinstance(sub.get("properties"), dict):
        props = sub["properties"]
        for k, v in value.items():
            if k not in props:
                out.append(f"{prefix}.{k}")
            else:
                out += _unknown_inside(props[k], v, f"{prefix}.{k}")
    elif isinstance(value, list):
        prefix_items = sub.get("prefixItems") if isinstance(sub.get("prefixItems"), list) else []
        for i, v in enumerate(value):
            s = prefix_items[i] if i < len(prefix_items) else sub.get("items")
            out += _unknown_inside(s, v, f"{prefix}[{i}]")
    return out


def read_results(file: str, schema: Mapping[str, Any]) -> tuple[dict[str, Any], list[dict[str, str]],
                                                                  list[dict[str, str]]]:
    """The accepted ``{path: value}`` pairs of one results file, the problems met
    reading it, and the keys rejected because the task schema does not know them."""
    from mmverify.tasks import schema_at

    problems: list[dict[str, str]] = []
    rejected: list[dict[str, str]] = []
    try:
        with open(file, "rb") as fh:
            raw = fh.read(MAX_RESULTS_BYTES + 1)
        data = parse_bytes(raw, source=file).data
    except ArtifactError as exc:
        return {}, [{"code": exc.code, "message": exc.message}], []
    except OSError as exc:
        return {}, [{"code": "unreadable", "message": f"cannot read: {exc.strerror}"}], []
    if not isinstance(data, dict):
        return {}, [{"code": "not_an_object", "message": "a results file is one JSON object"}], []
    out: dict[str, Any] = {}
    for key, value in data.items():
        try:
            path = paths.parse_path(key)
        except paths.PathError as exc:
            rejected.append({"key": show(key), "reason": f"not a field path: {exc}"})
            continue
        if path.is_list:
            rejected.append({"key": key, "reason": "[*] is not allowed: write the whole list or one index"})
            continue
        if path.segments[0] == "$replay":
            rejected.append({"key": key, "reason": "$replay values are derived by mmverify, never handed in"})
            continue
        sub = schema_at(schema, path)
        if sub is None:
            rejected.append({"key": key, "reason": "the task's artifact schema does not describe this field"})
            continue
        inner = _unknown_inside(sub, value, path.text)
        if inner:
            rejected.append({"key": key, "reason": "the value holds keys the schema does not describe: "
                             + ", ".join(inner[:10]) + (" ..." if len(inner) > 10 else "")})
            continue
        out[path.text] = value
    return out, problems, rejected


# ----------------------------------------------------------------- building

class Conflict(Exception):
    """A field already holds a different value, or a non-container is in the way."""


def set_field(data: dict, path: paths.FieldPath, value: Any) -> None:
    """Set ``value`` at ``path``, creating objects and lists (new list slots are
    holes); raise Conflict when a different value, or a non-container on the
    way, is already there."""
    here = paths.get(data, path)
    if not isinstance(here, paths.Missing) and here is not _HOLE and not same_value(here, value):
        raise Conflict("already set to a different value")
    if not paths.put(data, path, value, pad=_HOLE, replace=False):
        raise Conflict("a value that is not an object or list is in the way")


class _Hole:
    def __repr__(self) -> str:
        return "<hole>"


_HOLE = _Hole()


def same_value(a: Any, b: Any) -> bool:
    """Equal values of the same JSON type (``1.0`` and ``1`` are equal numbers)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return type(a) is type(b) and a == b


def hole_paths(node: Any, where: str = "") -> list[str]:
    """The paths of the list slots no value filled."""
    out = []
    if isinstance(node, dict):
        for k, v in node.items():
            out += hole_paths(v, f"{where}.{k}" if where else k)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            if v is _HOLE:
                out.append(f"{where}[{i}]")
            else:
                out += hole_paths(v, f"{where}[{i}]")
    return out


def fill_holes(node: Any) -> Any:
    """A copy of ``node`` with every hole written as null."""
    if isinstance(node, dict):
        return {k: fill_holes(v) for k, v in node.items()}
    if isinstance(node, list):
        return [None if v is _HOLE else fill_holes(v) for v in node]
    return node


def remove_field(data: Any, path: paths.FieldPath) -> None:
    """Take the value at ``path`` out (a list item becomes a hole)."""
    parent = paths.parent(data, path)
    last = path.segments[-1]
    if isinstance(parent, dict) and isinstance(last, str):
        parent.pop(last, None)
    elif isinstance(parent, list) and isinstance(last, int) and last < len(parent):
        parent[last] = _HOLE


def show(value: Any) -> str:
    """A short text of a value for the report (never a whole list or object)."""
    if isinstance(value, paths.Missing):
        return "<absent>"
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, str):
        return value if len(value) <= 60 else value[:57] + "..."
    if isinstance(value, bool) or value is None:
        return {True: "true", False: "false", None: "null"}[value]
    return f"<{json_type(value)}>"
