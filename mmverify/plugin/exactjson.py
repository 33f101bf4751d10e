"""Writing parsed artifacts back to JSON without losing a digit.

The strict parser keeps every JSON number as :class:`decimal.Decimal`; the
standard ``json`` module cannot write those. :func:`dumps_exact` writes each
Decimal from its own text (``1.2460`` stays ``1.2460``), with sorted keys, so an
artifact built or rewritten here parses back to exactly the same values.
"""
from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any


def _number(value: Any) -> str:
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise ValueError(f"non-finite number {value} cannot be written as JSON")
        text = str(value)
        # Decimal writes "1E+3"; JSON accepts it. "-0" only arises from a signed zero.
        return "0" if value.is_zero() and text.startswith("-") else text
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"non-finite number {value!r} cannot be written as JSON")
        return repr(value)
    return str(int(value))


def dumps_exact(obj: Any, indent: int | None = 2, sort_keys: bool = True) -> str:
    """JSON text of ``obj`` (dicts, lists, str, bool, None, int, float, Decimal),
    numbers written exactly, with a trailing newline when indented."""
    def enc(node: Any, level: int) -> str:
        if node is None or isinstance(node, bool):
            return json.dumps(node)
        if isinstance(node, (int, float, Decimal)):
            return _number(node)
        if isinstance(node, str):
            return json.dumps(node, ensure_ascii=False)
        pad = "" if indent is None else "\n" + " " * (indent * (level + 1))
        end = "" if indent is None else "\n" + " " * (indent * level)
        sep = "," if indent is None else ","
        if isinstance(node, dict):
            if not node:
                return "{}"
            keys = sorted(node) if sort_keys else list(node)
            for k in keys:
                if not isinstance(k, str):
                    raise TypeError(f"object key {k!r} is not a string")
            colon = ":" if indent is None else ": "
            items = [pad + json.dumps(k, ensure_ascii=False) + colon + enc(node[k], level + 1) for k in keys]
            return "{" + sep.join(items) + end + "}"
        if isinstance(node, (list, tuple)):
            if not node:
                return "[]"
            return "[" + sep.join(pad + enc(v, level + 1) for v in node) + end + "]"
        raise TypeError(f"{type(node).__name__} is not a JSON value")

    text = enc(obj, 0)
    return text + "\n" if indent is not None else text
