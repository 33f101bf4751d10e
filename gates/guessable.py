"""Scored metrics a blind guess can hit: the audit's guessability checks.

Design notes: docs/architecture.md, `gates/guessable.py`.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from fractions import Fraction
from math import ceil, floor
from typing import Iterator

from mmverify.reading import paths
from mmverify.reading.numbers import fraction_text
from mmverify.tasks import DIRECTIONAL

from .audit_model import Finding
from .compile import sub_schemas
from .model import Gate

SMALL_SPACE = 12
COVER_LIMIT = Fraction(1, 6)
HALF = Fraction(1, 2)
# a statement bound read "about right": the bound and ten per cent either side
NUDGES = (Fraction(1), Fraction(9, 10), Fraction(11, 10))


@dataclass(frozen=True)
class Span:
    """The values a field may take: bounds (None: open) and whether it is whole."""

    lo: Fraction | None
    hi: Fraction | None
    integer: bool

    @property
    def bounded(self) -> bool:
        return self.lo is not None and self.hi is not None

    def count(self) -> int | None:
        """How many whole numbers the span holds (integer fields, both bounds)."""
        if not self.integer or not self.bounded:
            return None
        return max(0, floor(self.hi) - ceil(self.lo) + 1)

    def cover(self, lo: Fraction, hi: Fraction) -> Fraction | None:
        """The share of the span the interval ``[lo, hi]`` covers (None: unbounded span)."""
        if not self.bounded:
            return None
        lo, hi = max(lo, self.lo), min(hi, self.hi)
        if self.integer:
            total = self.count() or 0
            hits = max(0, floor(hi) - ceil(lo) + 1)
            return Fraction(hits, total) if total else None
        if self.hi == self.lo:
            return None
        return max(Fraction(0), hi - lo) / (self.hi - self.lo)


def _reads(gate: Gate, metric) -> bool:
    return any(paths.matches(metric.path, p) or p.text == metric.path.text for p in gate.inputs)


def span_of(task, metric, gates: tuple[Gate, ...]) -> Span:
    """The tightest bounds the schema and the hard range gates put on the field
    (for a whole-number field, the least and greatest whole numbers allowed)."""
    lows: list[tuple[Fraction, bool]] = []     # (bound, strict)
    highs: list[tuple[Fraction, bool]] = []
    integer = False
    for node in sub_schemas(task.artifact_schema, metric.path):
        if node.get("type") == "integer":
            integer = True
        for key, into, strict in (("minimum", lows, False), ("exclusiveMinimum", lows, True),
                                  ("maximum", highs, False), ("exclusiveMaximum", highs, True)):
            if key in node and not isinstance(node[key], bool):
                into.append((Fraction(str(node[key])), strict))
    for g in gates:
        if not g.hard or not _reads(g, metric):
            continue
        if g.form == "integer":
            integer = True
            if g.binary:
                lows.append((Fraction(0), False))
                highs.append((Fraction(1), False))
        elif g.form == "range":
            if g.lower is not None:
                lows.append((g.lower.value, g.lower.strict))
            if g.upper is not None:
                highs.append((g.upper.value, g.upper.strict))
    if integer:
        lo = max((Fraction(floor(v) + 1 if strict else ceil(v)) for v, strict in lows), default=None)
        hi = min((Fraction(ceil(v) - 1 if strict else floor(v)) for v, strict in highs), default=None)
    else:
        lo = max((v for v, _ in lows), default=None)
        hi = min((v for v, _ in highs), default=None)
    return Span(lo, hi, integer)


def _anchor_groups(task, metric) -> dict[str, list[Fraction]]:
    """The panel's numeric anchors of a metric, by list item (key, position; ``""`` for a scalar)."""
    groups: dict[str, list[Fraction]] = {}
    for paper in task.panel:
        value = paper.values.get(metric.id)
        if value is None:
            continue
        if metric.match_by:
            items = [(str(k), v) for k, v in value]
        elif metric.is_list:
            items = [(str(i), v) for i, v in enumerate(value)]
        else:
            items = [("", value)]
        for key, v in items:
            if isinstance(v, Fraction):
                groups.setdefault(key, []).append(v)
    return groups


def paying_intervals(metric, anchors: list[Fraction]) -> list[tuple[Fraction, Fraction, Fraction]]:
    """For each anchor ``a`` of one item: ``(a, lo, hi)``, the values scoring r >= 1/2
    against it under the ``verified`` ruleset (see the module docstring)."""
    from mmverify.scoring.rules import band_width

    if metric.direction == "exact_value" or metric.band is None:
        return [(a, a, a) for a in anchors]
    out = []
    higher = metric.direction == "higher_is_better"
    best = (max(anchors) if higher else min(anchors)) if metric.direction in DIRECTIONAL else None
    for a in anchors:
        half = band_width(metric, a, None).width / 2
        if best is None:
            out.append((a, a - half, a + half))
            continue
        reach = 3 * band_width(metric, best, None).width / 2
        out.append((a, a - half, best + reach) if higher else (a, best - reach, a + half))
    return out


# ------------------------------------------------------------------ pinned

def _pinned(task, metric, gates: tuple[Gate, ...], span: Span) -> str | None:
    for g in gates:
        if not g.hard or not _reads(g, metric):
            continue
        if g.form == "identity" and g.identity is not None and g.identity.relation == "==" \
                and len(g.identity.var_names) == 1:
            return f"hard identity gate {g.id} ({g.identity.expr}) leaves one value"
        if g.form == "range" and g.lower is not None and g.upper is not None and g.lower.value == g.upper.value:
            return f"hard range gate {g.id} has min == max == {g.lower.text}"
    if span.bounded and span.lo == span.hi:
        if span.integer:
            return f"the field's bounds leave one whole number, {fraction_text(span.lo)}"
        return f"the field's bounds have min == max == {fraction_text(span.lo)}"
    return None


# --------------------------------------------------------------- guessable

def _labels(task, metric, gates: tuple[Gate, ...]) -> int | None:
    """The size of a label field's answer set (enum, boolean or hard finite domain), if known."""
    sizes = []
    for node in sub_schemas(task.artifact_schema, metric.path):
        if isinstance(node.get("enum"), list):
            sizes.append(len(node["enum"]))
        elif node.get("type") == "boolean":
            sizes.append(2)
    for g in gates:
        if g.hard and g.form == "finite_domain" and _reads(g, metric):
            sizes.append(len(g.domain))
    return min(sizes) if sizes else None


def _guessable(task, metric, gates: tuple[Gate, ...], span: Span) -> tuple[str | None, bool]:
    """Why a blind guess can hit the metric (None: it cannot), and whether the
    reason is a small answer space (rather than a wide paying set)."""
    if metric.direction == "exact_value":
        size = _labels(task, metric, gates)
        if size is not None and size <= SMALL_SPACE:
            what = "a label list over" if metric.is_list else "a label from"
            return f"{what} an answer set of {size} member(s)", True
    count = span.count()
    if count is not None and count <= SMALL_SPACE:
        return (f"an integer-valued field with {count} whole number(s) in "
                f"[{fraction_text(span.lo)}, {fraction_text(span.hi)}]"), True
    worst = None
    for anchors in _anchor_groups(task, metric).values():
        for a, lo, hi in paying_intervals(metric, anchors):
            share = span.cover(lo, hi)
            if share is not None and share > COVER_LIMIT and (worst is None or share > worst[0]):
                worst = (share, a, lo, hi)
    if worst is None:
        return None, False
    share, a, lo, hi = worst
    return (f"values scoring r >= 1/2 against anchor {fraction_text(a)}, [{_show(lo)}, {_show(hi)}], cover "
            f"{float(share):.0%} of the field's range [{fraction_text(span.lo)}, {fraction_text(span.hi)}] "
            f"(limit {COVER_LIMIT})"), False


def _show(x: Fraction) -> str:
    return f"{float(x):.6g}"


# ----------------------------------------------------------- printed bounds

def _literals(expr: str) -> Iterator[Fraction]:
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError:
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
                and not isinstance(node.value, bool):
            yield Fraction(str(node.value))


def printed_constants(task, metric, gates: tuple[Gate, ...]) -> list[tuple[Fraction, str]]:
    """Every number an agent reads next to the field: what each gate reading it
    prints (hard or soft) and the field's schema bounds, with where it is from."""
    out: list[tuple[Fraction, str]] = []
    for node in sub_schemas(task.artifact_schema, metric.path):
        for key in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
            if key in node and not isinstance(node[key], bool):
                out.append((Fraction(str(node[key])), f"schema {key}"))
    for g in gates:
        if not _reads(g, metric):
            continue
        where = f"{g.severity} gate {g.id}"
        if g.form == "range":
            out += [(b.value, where) for b in (g.lower, g.upper) if b is not None]
        elif g.form == "identity" and g.identity is not None:
            out += [(v, where) for v in _literals(g.identity.expr)]
            lhs, rhs = g.identity.lhs, g.identity.rhs
            for side in (lhs, rhs):
                if not side.free_symbols:
                    out.append((Fraction(str(side)), where))
        elif g.form == "finite_domain":
            out += [(v, where) for v in g.domain_numbers if v is not None]
        elif g.form == "partition_sum" and g.total_value is not None:
            out.append((g.total_value, where))
    seen, unique = set(), []
    for value, where in out:
        if (value, where) not in seen:
            seen.add((value, where))
            unique.append((value, where))
    return unique


def _printed_in_band(task, metric, gates: tuple[Gate, ...]) -> list[str]:
    from mmverify.scoring.kernels import kernel_score
    from mmverify.scoring.rules import band_width, ceiling

    if metric.band is None and metric.direction != "exact_value":
        return []
    groups = _anchor_groups(task, metric)
    hits = []
    for value, where in printed_constants(task, metric, gates):
        for nudge in NUDGES:
            x = value * nudge
            hit = None
            for anchors in groups.values():
                cap = ceiling(metric, anchors)
                for a in anchors:
                    w = band_width(metric, a, None).width if metric.band is not None else None
                    r = kernel_score(metric.direction, x, a, w)
                    if cap is not None:
                        r *= cap.factor(x)
                    if r >= HALF:
                        hit = (a, r)
                        break
                if hit:
                    break
            if hit:
                shown = fraction_text(value) if nudge == 1 else f"{fraction_text(value)} x {fraction_text(nudge)}"
                hits.append(f"{shown} = {_show(x)} ({where}) scores r = {float(hit[1]):.3f} against anchor "
                            f"{fraction_text(hit[0])}")
                break
    return hits


# ------------------------------------------------------------------ entry

def guess_findings(task, gates: tuple[Gate, ...]) -> list[Finding]:
    """Every pinned, guessable or printed-bound finding of ``task``."""
    from mmverify.scoring.rules import incomparable

    out: list[Finding] = []
    judged = {p.text for g in gates if g.decides for p in g.verifies}
    for metric in task.metrics:
        if incomparable(task, metric) is not None:
            continue    # removed for everyone: it pays no one
        if metric.path.text in judged:
            # a deciding claim gate judges it: a value off the replay (beyond the
            # gate's written tolerance) is refuted and scores 0, whatever a band says
            continue
        reason = metric.guess_reason
        span = span_of(task, metric, gates)
        note = f" [guess_reason: {reason}]" if reason else ""
        pinned = _pinned(task, metric, gates, span)
        if pinned:
            out.append(Finding("pinned_metric", task.id, metric.id, None, "audited" if reason else "problem",
                               f"every artifact passing the hard gates holds this value: {pinned}; "
                               f"remove the metric or give a guess_reason{note}"))
            continue
        small, space = _guessable(task, metric, gates, span)
        if small:
            sev = "audited" if reason else ("info" if metric.supported_by else "problem")
            tie = f" [supported_by: {', '.join(metric.supported_by)}]" if metric.supported_by else ""
            out.append(Finding("guessable_metric", task.id, metric.id, None, sev,
                               f"a blind guess can hit it: {small}{tie}{note}"))
        if space:
            continue    # every member of a small answer space is printed somewhere: the finding above covers it
        for hit in _printed_in_band(task, metric, gates):
            out.append(Finding("printed_bound_in_band", task.id, metric.id, None,
                               "audited" if reason else "problem",
                               f"a constant an agent reads pays: {hit}{note}"))
    return out
