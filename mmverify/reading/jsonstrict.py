"""The one strict JSON reader: duplicate object keys and the non-finite
constants (``NaN``, ``Infinity``, ``-Infinity``) are rejected, and numbers with
a fraction or exponent keep their exact text as :class:`decimal.Decimal`.

Artifacts (:mod:`mmverify.reading.artifact`), manifests (:mod:`mmverify.batch.manifest`) and
anchor files (:mod:`mmverify.tasks`) all read JSON through :func:`loads_strict`;
each caller says which exception a defect raises, so each keeps its own error
vocabulary.
"""
from __future__ import annotations

import json
from decimal import Decimal
from typing import Any, Callable


def loads_strict(text: str, *, duplicate_key: Callable[[str], Exception],
                 non_finite: Callable[[str], Exception],
                 parse_float: Callable[[str], Any] = Decimal,
                 parse_int: Callable[[str], Any] | None = None) -> Any:
    """``json.loads`` of ``text`` that raises ``duplicate_key(key)`` for the first
    key repeated within one object and ``non_finite(name)`` for ``NaN``,
    ``Infinity`` or ``-Infinity``. Malformed JSON raises
    :class:`json.JSONDecodeError` as usual; ``parse_float``/``parse_int`` are
    passed on (non-integers are exact decimals by default)."""

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(pairs)
        if len(out) != len(pairs):
            seen: set[str] = set()
            for key, _ in pairs:
                if key in seen:
                    raise duplicate_key(key)
                seen.add(key)
        return out

    def constant(name: str) -> Any:
        raise non_finite(name)

    return json.loads(text, parse_float=parse_float, parse_int=parse_int,
                      parse_constant=constant, object_pairs_hook=pairs_hook)
