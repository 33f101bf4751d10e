"""Reading a metric's values from artifact data for panel scoring: a scalar
as (value, status, text), a list as keyed items, anchors as report text.

A list's items and their keys (:func:`list_keys`) are read once per artifact
and shared by every metric over that list; a JSON number is kept as its
Decimal until it is scored, and its report text is read off its digits
(:func:`number_text`).

Never raises on artifact content: an absent value is ``missing``, a value of
the wrong type ``not_a_number`` or ``not_a_label``.
"""
from __future__ import annotations

from decimal import Decimal
from functools import lru_cache
from fractions import Fraction
from types import MappingProxyType
from typing import Any, Mapping, NamedTuple

from mmverify.reading import paths
from mmverify.reading.artifact import bounded_decimal
from mmverify.reading.labels import normalise_label
from mmverify.reading.numbers import decimal_fraction, decimal_text, fraction_text, to_fraction


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
    from mmverify.reading.artifact import json_type

    if isinstance(raw, str):
        return f"string of {len(raw)} characters"
    return json_type(raw)


def number_text(raw: Decimal) -> str:
    """``fraction_text(Fraction(raw))`` for a finite Decimal, read off its digits
    (no Fraction, no gcd): the exact decimal without trailing zeros, or ``p/q``
    past 60 places."""
    t = format(raw, "f")      # exact: every digit of the coefficient, no rounding
    if "." in t:
        t = t.rstrip("0").rstrip(".")
        if "." in t and len(t) - t.index(".") > 61:
            return fraction_text(decimal_fraction(raw))
    return "0" if t == "-0" else t


def want_of(anchor_sample: Any) -> str:
    return LABEL if isinstance(anchor_sample, str) else NUMBER


def anchor_text(value: Any) -> Any:
    return fraction_text(value) if isinstance(value, Fraction) else value


_NUMBER_START = frozenset("-0123456789")     # decimal text starts with one of these


def item_key(raw: Any) -> str | None:
    """Canonical match_by key: numbers (or decimal text) by exact value, so that
    ``0.90``, ``0.9`` and ``"0.9"`` pair; other text trimmed and case-folded.

    A string is read as a number only within the parser's number caps
    (:func:`mmverify.reading.artifact.bounded_decimal`): an artifact key such as
    ``"1e999999999"`` or 200,000 digits is a label, not a giant integer."""
    cls = raw.__class__
    # the keys of a list recur from artifact to artifact: a short one's key is kept
    kept = _LABEL_KEYS if cls is str else _NUMBER_KEYS if cls is Decimal and raw.is_finite() else None
    if kept is not None:
        key = kept.get(raw)
        if key is None:
            key = _text_key(raw)
            if len(key) <= _KEY_KEPT and (cls is Decimal or len(raw) <= _KEY_KEPT):
                if len(kept) >= _KEYS_KEPT:
                    kept.clear()
                kept[raw] = key
        return key
    if isinstance(raw, bool) or raw is None:
        return None
    if isinstance(raw, str) or (type(raw) is Decimal and raw.is_finite()):     # (a subclass)
        return _text_key(raw)
    num = to_fraction(raw)
    return fraction_text(num) if num is not None else None


def _text_key(raw: str | Decimal) -> str:
    if isinstance(raw, str):
        dec = bounded_decimal(raw) if raw[:1] in _NUMBER_START else None
        return number_text(dec) if dec is not None else normalise_label(raw)
    return number_text(raw)


# item_key of a string, and of a finite Decimal (equal ones, ``1`` and ``1.00``,
# have one key); at most _KEYS_KEPT of each kept, of _KEY_KEPT characters
_LABEL_KEYS: dict[str, str] = {}
_NUMBER_KEYS: dict[Decimal, str] = {}
_KEYS_KEPT = 4096
_KEY_KEPT = 64


_NONE: Mapping[str, Any] = MappingProxyType({})    # an empty mapping no one can fill


class ListKeys(NamedTuple):
    """The items of one artifact list and their keys: read once per artifact for
    every metric over that list with the same ``match_by``. (Named tuples, as
    :class:`ListRead`: made once per list and metric of every artifact.)"""
    missing: paths.Missing | None          # the list is absent (or not a list)
    items: list[Any]
    rows: tuple[tuple[str, int, bool], ...]   # (key, position, keyed) in list order; repeated keys left out
    dupes: int
    order: tuple[str, ...] = ()            # the rows' keys
    index: Mapping[str, int] = _NONE       # keyed item's key -> its position in the list


def list_keys(data: Any, path: paths.FieldPath, match_by: str | None,
              head: paths.FieldPath | None = None) -> ListKeys:
    """The items of the list a ``[*]`` path points into, keyed by position or by
    ``match_by`` (an item without a usable key is ``#i``, not keyed; a repeated
    key keeps its first item). ``head``: the path before the ``[*]`` when
    already split."""
    raw_items = paths.get(data, head) if head is not None else None
    if type(raw_items) is not list:
        raw_items = paths.list_items(data, path)    # (and why there is no list)
    if isinstance(raw_items, paths.Missing):
        return ListKeys(raw_items, [], (), 0)
    if not match_by:
        return ListKeys(None, raw_items, *_positions(len(raw_items)))
    rows: list[tuple[str, int, bool]] = []
    order: list[str] = []
    keys = _item_keys(raw_items, match_by)
    index = _first_positions(keys)
    dupes = 0
    for i, key in enumerate(keys):
        if key is None:
            key = f"#{i}"
            rows.append((key, i, False))
        elif index[key] != i:
            dupes += 1
            continue
        else:
            rows.append((key, i, True))
        order.append(key)
    return ListKeys(None, raw_items, tuple(rows), dupes, tuple(order), index)


def key_index(items: list[Any], match_by: str | None) -> Mapping[str, int]:
    """The ``index`` of :func:`list_keys` for the items of a list, alone (no
    rows, no order): each key's position, the first item's where keys repeat."""
    if not match_by:
        return _positions(len(items))[3]
    return _first_positions(_item_keys(items, match_by))


def _item_keys(items: list[Any], match_by: str) -> list[str | None]:
    """Each item's key (:func:`item_key` of its ``match_by`` field), None for an item without one."""
    return [item_key(item.get(match_by)) if isinstance(item, dict) else None for item in items]


def _first_positions(keys: list[str | None]) -> dict[str, int]:
    """Each key's first position among ``keys`` (None left out)."""
    index: dict[str, int] = {}
    for i, key in enumerate(keys):
        if key is not None and key not in index:
            index[key] = i
    return index


def _positional(n: int) -> tuple[tuple[tuple[str, int, bool], ...], int, tuple[str, ...], Mapping[str, int]]:
    """The rows, dupes, order and index of a list of ``n`` items keyed by position."""
    order = tuple(str(i) for i in range(n))
    return (tuple((k, i, True) for i, k in enumerate(order)), 0, order,
            MappingProxyType({k: i for i, k in enumerate(order)}))


_positional_kept = lru_cache(maxsize=256)(_positional)


def _positions(n: int) -> tuple[tuple[tuple[str, int, bool], ...], int, tuple[str, ...], Mapping[str, int]]:
    # the same for every list of n items: kept for the lengths met last
    return _positional_kept(n) if n <= 1024 else _positional(n)


class ListRead(NamedTuple):
    status: str                      # ok | missing
    detail: str | None
    text: Any                        # list of texts, or mapping key -> text (made with ``texts``)
    order: tuple[str, ...]           # every item's key in list order (``#i`` for an item without one)
    index: Mapping[str, int] = _NONE     # key -> position in the artifact's list
    texts: Mapping[str, Any] = _NONE     # key -> value text (made with ``texts``)
    # key -> value, for the items read as ``ok``: a JSON number as its (finite)
    # Decimal, read exactly where it is scored; otherwise the Fraction or label
    ok: Mapping[str, Any] = _NONE
    bad: Mapping[str, str] = _NONE       # key -> status, for the other keyed items


def read_list(metric, data: Any, want: str, texts: bool = True, keys: ListKeys | None = None,
              inner: paths.FieldPath | None = None) -> ListRead:
    """A list metric's values, keyed; ``keys`` is :func:`list_keys` of the same
    data, list and ``match_by`` when already read, ``inner`` the path inside an
    item (after the ``[*]``) when already split."""
    if keys is None:
        keys = list_keys(data, metric.path, metric.match_by)
    if keys.missing is not None:
        return ListRead("missing", keys.missing.reason, None, ())
    if inner is None:
        inner = metric.path.split()[1]
    items = keys.items
    ok: dict[str, Any] = {}
    bad: dict[str, str] = {}
    by_key: dict[str, Any] = {}     # the value's text (as ``anchor_text``), None when absent
    segments = inner.segments
    field_name = segments[0] if len(segments) == 1 and segments[0].__class__ is str else None   # ``[*].name``
    for key, i, keyed in keys.rows:
        item = items[i]
        if field_name is not None:
            raw = item[field_name] if item.__class__ is dict and field_name in item else paths.get(item, inner)
        else:
            raw = paths.get(item, inner) if segments else item
        if type(raw) is Decimal and raw.is_finite():     # the common case: a JSON number
            value, status = raw, "ok"
            if texts and keyed:
                by_key[key] = number_text(raw)
        else:
            value, status, _ = read_scalar(raw, want, False)
            if texts and keyed:
                by_key[key] = anchor_text(value) if value is not None else None
        if not keyed:
            continue
        if status == "ok":
            ok[key] = value
        else:
            bad[key] = status
    detail = f"{keys.dupes} item(s) with a repeated {metric.match_by!r} ignored" if keys.dupes else None
    if not texts:
        return ListRead("ok", detail, None, keys.order, keys.index, _NONE, ok, bad)
    text = by_key if metric.match_by else list(by_key.values())
    return ListRead("ok", detail, text, keys.order, keys.index, by_key, ok, bad)
