"""Reading a metric's values from artifact data for panel scoring: a scalar
as (value, status, text), a list as keyed items, anchors as report text.

Never raises on artifact content: an absent value is ``missing``, a value of
the wrong type ``not_a_number`` or ``not_a_label``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Any

from mmverify import paths
from mmverify.artifact import bounded_decimal
from mmverify.labels import normalise_label
from mmverify.numbers import decimal_fraction, decimal_text, fraction_text, to_fraction


LABEL = "label"
NUMBER = "number"


def read_scalar(raw: Any, want: str, text: bool = True) -> tuple[Any, str, str | None]:
    """(value, status, text) for one artifact value; value is Fraction or str
    (the text of a number only when ``text``)."""
    if type(raw) is Decimal and raw.is_finite():     # the common case: a JSON number
        return decimal_fraction(raw), "ok", decimal_text(raw) if text else None
    if isinstance(raw, paths.Missing):
        return None, "missing", None
    if want == LABEL and isinstance(raw, str):
        return raw, "ok", raw
    num = to_fraction(raw) if not isinstance(raw, str) else None
    if num is not None:
        return num, "ok", decimal_text(raw)
    if want == LABEL:
        return None, "not_a_label", type_text(raw)
    return None, "not_a_number", type_text(raw)


def type_text(raw: Any) -> str:
    from mmverify.artifact import json_type

    if isinstance(raw, str):
        return f"string of {len(raw)} characters"
    return json_type(raw)


def want_of(anchor_sample: Any) -> str:
    return LABEL if isinstance(anchor_sample, str) else NUMBER


def anchor_text(value: Any) -> Any:
    return fraction_text(value) if isinstance(value, Fraction) else value


def item_key(raw: Any) -> str | None:
    """Canonical match_by key: numbers (or decimal text) by exact value, so that
    ``0.90``, ``0.9`` and ``"0.9"`` pair; other text trimmed and case-folded.

    A string is read as a number only within the parser's number caps
    (:func:`mmverify.artifact.bounded_decimal`): an artifact key such as
    ``"1e999999999"`` or 200,000 digits is a label, not a giant integer."""
    if isinstance(raw, bool) or raw is None:
        return None
    if isinstance(raw, str):
        dec = bounded_decimal(raw)
        return fraction_text(Fraction(dec)) if dec is not None else normalise_label(raw)
    num = to_fraction(raw)
    return fraction_text(num) if num is not None else None




@dataclass(frozen=True)
class ListRead:
    status: str                      # ok | missing
    detail: str | None
    text: Any                        # list of texts, or mapping key -> text
    values: tuple[tuple[str, Any, str], ...]   # (key, value or None, status)
    index: dict[str, int] = field(default_factory=dict)   # key -> position in the artifact's list
    texts: dict[str, Any] = field(default_factory=dict)   # key -> value text (made with ``text``)


def read_list(metric, data: Any, want: str, texts: bool = True) -> ListRead:
    raw_items = paths.list_items(data, metric.path)
    if isinstance(raw_items, paths.Missing):
        return ListRead("missing", raw_items.reason, None, ())
    _, inner = metric.path.split()
    out: list[tuple[str, Any, str]] = []
    seen: set[str] = set()
    index: dict[str, int] = {}
    dupes = 0
    for i, item in enumerate(raw_items):
        raw = paths.get(item, inner) if inner.segments else item
        value, status, _ = read_scalar(raw, want, False)
        if metric.match_by:
            key = item_key(item.get(metric.match_by)) if isinstance(item, dict) else None
            if key is None:
                out.append((f"#{i}", value, "no_key"))
                continue
            if key in seen:
                dupes += 1
                continue
            seen.add(key)
        else:
            key = str(i)
        out.append((key, value, status))
        index[key] = i
    detail = f"{dupes} item(s) with a repeated {metric.match_by!r} ignored" if dupes else None
    if not texts:
        return ListRead("ok", detail, None, tuple(out), index)
    by_key = {k: anchor_text(v) if v is not None else None for k, v, s in out if s != "no_key"}
    text = by_key if metric.match_by else [by_key[k] for k, _, _ in out]
    return ListRead("ok", detail, text, tuple(out), index, by_key)


