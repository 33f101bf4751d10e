"""Dotted field paths: ``experiment_result.q5.max_head_speed_mps``, ``a.b[0].c``,
``a.items[*].value``.

A path is data written in an anchor (trusted), parsed once into a tuple of
segments; it is only ever used to walk a parsed artifact, never to open a file.
At most one ``[*]`` wildcard is allowed; it splits the path into the list
location and the path of the value inside each item.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Union
from mmverify.errors import MmverifyError

# ``$replay`` is the reserved root under which gates read replay-derived values
_KEY = re.compile(r"\$replay(?![A-Za-z0-9_\-])|[A-Za-z_][A-Za-z0-9_\-]*")
_INDEX = re.compile(r"\[(\d+|\*)\]")

Segment = Union[str, int]  # a key, or a list index; WILDCARD marks ``[*]``
WILDCARD = -1


class PathError(MmverifyError, ValueError):
    """A malformed path in an anchor (a task defect, not an artifact defect)."""


@dataclass(frozen=True)
class FieldPath:
    """A parsed field path into a JSON document (named apart from ``pathlib.Path``:
    it never names a file)."""

    text: str
    segments: tuple[Segment, ...]

    @property
    def is_list(self) -> bool:
        return WILDCARD in self.segments

    def split(self) -> tuple["FieldPath", "FieldPath"]:
        """For a list path: (path of the list, path of the value inside an item)."""
        return _split(self)


@lru_cache(maxsize=4096, typed=True)
def _split(path: FieldPath) -> tuple[FieldPath, FieldPath]:
    # a pure function of an immutable path, called for every list read: cached
    i = path.segments.index(WILDCARD)
    head, tail = path.segments[:i], path.segments[i + 1:]
    return FieldPath(render_segments(head), head), FieldPath(render_segments(tail), tail)


def render_segments(segments: tuple[Segment, ...]) -> str:
    """The text of a path from its segments (``[*]`` for the wildcard)."""
    out = ""
    for seg in segments:
        if isinstance(seg, str):
            out += ("." if out else "") + seg
        else:
            out += "[*]" if seg == WILDCARD else f"[{seg}]"
    return out


@lru_cache(maxsize=4096)
def parse_path(text: str) -> FieldPath:
    if not isinstance(text, str) or not text:
        raise PathError(f"empty path {text!r}")
    segments: list[Segment] = []
    pos = 0
    expect_key = True
    while pos < len(text):
        if expect_key:
            m = _KEY.match(text, pos)
            if not m:
                raise PathError(f"bad path {text!r}: expected a key at position {pos}")
            if m.group(0) == "$replay" and segments:
                raise PathError(f"bad path {text!r}: $replay can only be the first key")
            segments.append(m.group(0))
            pos = m.end()
            expect_key = False
            continue
        m = _INDEX.match(text, pos)
        if m:
            segments.append(WILDCARD if m.group(1) == "*" else int(m.group(1)))
            pos = m.end()
            continue
        if text[pos] == ".":
            pos += 1
            expect_key = True
            if pos == len(text):
                raise PathError(f"bad path {text!r}: trailing dot")
            continue
        raise PathError(f"bad path {text!r}: unexpected {text[pos]!r} at position {pos}")
    if segments.count(WILDCARD) > 1:
        raise PathError(f"bad path {text!r}: at most one [*] is allowed")
    return FieldPath(text, tuple(segments))


class Missing:
    """Sentinel for an absent value, with the reason."""

    __slots__ = ("reason",)

    def __init__(self, reason: str):
        self.reason = reason

    def __repr__(self) -> str:
        return f"Missing({self.reason!r})"


_NO = object()


def get(data: Any, path: FieldPath | str) -> Any:
    """The value at a non-wildcard path, or a :class:`Missing` saying where it stopped."""
    if isinstance(path, str):
        path = parse_path(path)
    cur = data
    for seg in path.segments:       # the common walk: every step present (else _stopped says where)
        if seg.__class__ is str:
            if cur.__class__ is not dict:
                return _stopped(data, path)
            cur = cur.get(seg, _NO)
            if cur is _NO:
                return _stopped(data, path)
        elif cur.__class__ is list and 0 <= seg < len(cur):
            cur = cur[seg]
        else:
            return _stopped(data, path)
    return cur


def _stopped(data: Any, path: FieldPath) -> Any:
    """:func:`get` step by step, for a walk that left the common case (a step
    absent, a subclass of dict or list, a wildcard): the value or the Missing."""
    cur = data
    for k, seg in enumerate(path.segments):
        if seg.__class__ is str:
            if isinstance(cur, dict) and seg in cur:
                cur = cur[seg]
                continue
            return Missing(f"no field {render_segments(path.segments[:k + 1])!r}")
        if seg == WILDCARD:
            raise PathError(f"get() on list path {path.text!r}; use items()")
        if isinstance(cur, list) and seg < len(cur):
            cur = cur[seg]
            continue
        return Missing(f"no element {render_segments(path.segments[:k + 1])!r}")
    return cur


_FRESH = object()  # put(): pad new list slots with an empty container of the kind the path needs


def _fresh_for(segments: tuple[Segment, ...], k: int):
    """A maker of the empty value segment ``k`` needs: None at the leaf, else an
    object or a list for the segment after it."""
    if k == len(segments) - 1:
        return lambda: None
    return dict if isinstance(segments[k + 1], str) else list


def put(data: Any, path: FieldPath | str, value: Any, *, pad: Any = _FRESH, replace: bool = True) -> bool:
    """Set ``value`` at a non-wildcard path, creating objects and list slots on
    the way. New list slots are padded with ``pad`` (by default an empty object
    or list where the path goes on through them, else None); a slot holding
    ``pad`` counts as empty. A scalar in the way is replaced when ``replace``,
    else nothing is written and False is returned (as for a wildcard path or a
    container of the wrong kind)."""
    if isinstance(path, str):
        path = parse_path(path)
    segments = path.segments
    if not segments or WILDCARD in segments:
        return False
    node = data
    for k, seg in enumerate(segments):
        last = k == len(segments) - 1

        fresh = _fresh_for(segments, k)
        if isinstance(seg, str):
            if not isinstance(node, dict):
                return False
            if last:
                node[seg] = value
                return True
            here = node.get(seg, pad)
        else:
            if not isinstance(node, list) or seg < 0:
                return False
            while len(node) <= seg:
                node.append(fresh() if pad is _FRESH else pad)
            if last:
                node[seg] = value
                return True
            here = node[seg]
        if here is pad or (replace and not isinstance(here, (dict, list))):
            node[seg] = here = fresh()
        elif not isinstance(here, (dict, list)):
            return False
        node = here
    return False


def list_items(data: Any, path: FieldPath | str) -> list[Any] | Missing:
    """The raw item objects of the list a ``[*]`` path points into."""
    if isinstance(path, str):
        path = parse_path(path)
    head, _ = path.split()
    container = get(data, head) if head.segments else data
    if isinstance(container, Missing):
        return container
    if not isinstance(container, list):
        return Missing(f"field {head.text!r} is not a list")
    return container


def items(data: Any, path: FieldPath | str) -> list[Any] | Missing:
    """For a ``[*]`` path: the list of item values (each possibly Missing)."""
    if isinstance(path, str):
        path = parse_path(path)
    container = list_items(data, path)
    if isinstance(container, Missing):
        return container
    _, tail = path.split()
    if len(tail.segments) == 1 and tail.segments[0].__class__ is str:   # items[*].key, the common shape
        key = tail.segments[0]
        return [item[key] if item.__class__ is dict and key in item else get(item, tail) for item in container]
    return [get(item, tail) for item in container] if tail.segments else list(container)


def concrete(path: FieldPath | str, index: int) -> str:
    """The concrete path of element ``index`` of a ``[*]`` path."""
    if isinstance(path, str):
        path = parse_path(path)
    return _concrete(path, index)


@lru_cache(maxsize=65536, typed=True)
def _concrete(path: FieldPath, index: int) -> str:
    # called once per element of every [*] read; cached (immutable inputs, str out)
    return render_segments(tuple(index if s == WILDCARD else s for s in path.segments))


def matches(pattern: FieldPath, path: FieldPath | str) -> bool:
    """Whether ``path`` is ``pattern`` with any ``[*]`` of the pattern at an index
    (or at ``[*]``). A path text that does not parse matches nothing."""
    if isinstance(path, str):
        try:
            path = parse_path(path)
        except PathError:
            return False
    return len(path.segments) == len(pattern.segments) and all(
        a == b or (a == WILDCARD and isinstance(b, int)) for a, b in zip(pattern.segments, path.segments))


def parent(data: Any, path: FieldPath) -> Any:
    """The object or list that holds the field at ``path`` (``data`` itself for a
    top-level field), or :class:`Missing`."""
    if len(path.segments) <= 1:
        return data
    return get(data, FieldPath("", path.segments[:-1]))
