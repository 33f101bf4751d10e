"""The table of the panel's verdict path, generated once per task as straight code.

Design notes: docs/architecture.md, `scoring/panelcode.py`.
"""
from __future__ import annotations

from decimal import Decimal
from math import gcd
from typing import Any, Callable

from mmverify.reading.labels import normalise_label
from mmverify.reading.numbers import pair_fraction
from mmverify.reading.pathcode import PathWriter

from .kernels import DIRECTIONS, ONE, ZERO
from .reads import key_index


def generate(plan, general: Callable[..., Any]) -> tuple[str, dict[str, Any]]:
    """The source of ``table`` for ``plan`` and the namespace it runs in.
    ``general(mp, view, verified, lists)`` scores one metric in full."""
    w = PathWriter(dict(Decimal=Decimal, ONE=ONE, ZERO=ZERO, NL=normalise_label, PF=pair_fraction, GEN=general,
                        IX=key_index, GCD=gcd))
    helpers: list[list[str]] = []      # a function per list metric
    for mp in plan:
        m = w.const(mp, "M")
        fallback = f"GEN({m}, view, verified, lists)"
        if mp.fixed is not None:
            w.lines.append(f"    t.append({w.const(mp.fixed, 'F')})")
        elif mp.quick is not None:
            segments, kernels, anchors, reach = mp.quick
            v = w.walk(segments)
            per_paper = [None if k is None else (w.const(k, "K"), w.const(a, "A")) for k, a in zip(kernels, anchors)]
            full = " and ".join(f"{v} {mp.full_at} {ka[1]}" for ka in per_paper if ka) or "True"
            ones = ", ".join("None" if ka is None else "ONE" for ka in per_paper)
            row = ", ".join("None" if ka is None else f"{ka[0]}(n, d)" for ka in per_paper)
            finite = f"{v}.__class__ is Decimal and {v}.is_finite()"
            if reach is not None:       # past one band beyond the panel's best: the general scoring
                finite += f" and (not guarded or {v} {mp.within} {w.const(reach, 'R')})"
            # (the Decimal compared exactly with the anchors)
            _or_general(w, finite, [f"if {full}:", f"    t.append([{ones}])", "else:",
                                    f"    n, d = {v}.as_integer_ratio()", f"    t.append([{row}])"], fallback)
        elif mp.quick_label is not None:
            segments, labels = mp.quick_label
            v = w.walk(segments)
            row = ", ".join("None" if a is None else f"ONE if x == {w.const(a, 'A')} else ZERO" for a in labels)
            _or_general(w, f"{v}.__class__ is str", [f"x = NL({v})", f"t.append([{row}])"], fallback)
        elif mp.quick_items is not None:
            name = f"L{len(helpers)}"
            helpers.append(_list_function(w, name, mp))
            items, index = _keyed_list(w, mp)
            w.lines.append(f"    rs = {name}({items}, {index}, guarded)")
            w.lines.append(f"    t.append(rs if rs is not None else {fallback})")
        else:
            w.lines.append(f"    t.append({fallback})")
    w.lines.append("    return t")
    head = ["def table(view, guarded, verified, lists):", "    t = []"]
    return "\n".join([line for lines in helpers for line in lines] + head + w.lines) + "\n", w.names


def _or_general(w: PathWriter, condition: str, body: list[str], fallback: str) -> None:
    """The lines scoring a metric by ``body`` where ``condition`` holds, else
    by the general scoring (``fallback``)."""
    w.lines.append(f"    if {condition}:")
    w.lines += [f"        {line}" for line in body]
    w.lines += ["    else:", f"        t.append({fallback})"]


def _keyed_list(w: PathWriter, mp) -> tuple[str, str]:
    """The locals holding a list metric's list (``MISSING`` or any value where
    there is none) and its key index (:func:`.reads.key_index`; None where the
    value is not a list), read once for every metric over the same list and
    ``match_by``."""
    items = w.walk(mp.head.segments)
    at = ("index", mp.head.segments, mp.metric.match_by)
    if at not in w.reads:
        index = w.reads[at] = f"ix{len(w.reads)}"
        match_by = w.const(mp.metric.match_by, "MB")
        w.lines.append(f"    {index} = IX({items}, {match_by}) if {items}.__class__ is list else None")
    return items, w.reads[at]


def _list_function(w: PathWriter, name: str, mp) -> list[str]:
    """The lines of ``name(it, ix, guarded)``: a list metric's r per paper (see
    :attr:`MetricPlan.quick_items`) when the list is there and every item an
    anchor pairs with holds a finite JSON number (within one band of the
    panel's best for that item, with the ceiling on), the mean of the kernels
    on their exact ratios as the report's list scoring gives it (an item not
    supplied scores 0); None for anything else. A loop per paper over its
    anchor items as (anchor, reach, an, ad, wd, aw): an item at or beyond its
    anchor (``full_at``) scores 1 without its ratio, any other the band
    kernel written out (:attr:`.kernels.Direction.shortfall`; exact_value: 0)."""
    field, entries = mp.quick_items
    shortfall = DIRECTIONS[mp.metric.direction].shortfall
    capped = any(item[2] is not None for anchors in entries if anchors for item in anchors)
    lines = [f"def {name}(it, ix, guarded):", "    if ix is None:", "        return None", "    rs = []"]
    for anchors in entries:
        if anchors is None or not anchors:
            lines.append(f"    rs.append({'None' if anchors is None else 'ZERO'})")
            continue
        # (the reach only where a ceiling may apply, the band's integers only for a band kernel)
        items = tuple((k, a) + ((c,) if capped else ()) + ((an, ad, wd, aw) if shortfall else ())
                      for k, a, c, an, ad, wd, aw in anchors)
        names = "key, a" + (", c" if capped else "") + (", an, ad, wd, aw" if shortfall else "")
        lines.append("    sn, sd = 0, 1")       # the mean, summed on integers and reduced once
        lines.append(f"    for {names} in {w.const(items, 'P')}:")
        lines += ["        i = ix.get(key)", "        if i is None:", "            continue", "        v = it[i]"]
        if field is not None:
            lines.append(f"        v = v.get({field!r}, MISSING) if v.__class__ is dict else MISSING")
        lines += ["        if v.__class__ is not Decimal or not v.is_finite():", "            return None"]
        if capped:
            lines += [f"        if guarded and c is not None and not v {mp.within} c:", "            return None"]
        lines += [f"        if v {mp.full_at} a:", "            sn += sd", "            continue"]
        if shortfall:         # r = 1 - s / d where 0 < s < d, reduced, added to sn / sd; 0 past the band
            lines += ["        n, d = v.as_integer_ratio()", f"        s = ({shortfall}) * wd",
                      "        if s <= 0:", "            sn += sd", "            continue",
                      "        d *= aw", "        if s < d:", "            s = d - s", "            g = GCD(s, d)",
                      "            d //= g", "            sn, sd = sn * d + s // g * sd, sd * d"]
        lines.append(f"    rs.append(PF(sn, sd * {len(anchors)}))")
    lines.append("    return rs")
    return lines


def compile_table(plan, general: Callable[..., Any]) -> Callable[..., list] | None:
    """``table`` for ``plan`` compiled (see :func:`generate`); None when the
    interpreter cannot compile it (a task past the compiler's limits)."""
    source, names = generate(plan, general)
    namespace = dict(names, __builtins__={"len": len, "dict": dict, "list": list, "str": str, "abs": abs})
    try:
        exec(compile(source, "<panel verdict table>", "exec"), namespace)
    except (SyntaxError, RecursionError, MemoryError, ValueError, OverflowError):
        return None
    return namespace["table"]
