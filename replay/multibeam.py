"""Replay of CUMCM 2023 B (multibeam survey lines).

Swath geometry (statement, Q1/Q2). A transducer at depth ``D`` above a seabed
whose cross-track slope is ``a`` sends its outer beams at half the opening
angle, ``h = 60 deg``, from the vertical. The outer beam on the deep side meets
the seabed at the horizontal distance ``D sin h cos a / cos(h + a)``, the one on
the shallow side at ``D sin h cos a / cos(h - a)``; the strip's horizontal width
``W`` is their sum (``2 D tan h`` on a flat bed). Adjacent strips ``i`` and
``j`` overlap by the width both cover; their overlap rate is that width over
the mean of their two widths, which is the statement's ``1 - d / W`` on a flat
bed (both widths equal ``W``, the overlap is ``W - d``).

Q3 (statement only). Area 2 nmi (N-S) x 4 nmi (E-W) = 3704 m x 7408 m, centre
depth 110 m, deep in the west, slope 1.5 deg. Witness: the positions of
north-south lines, in metres westward from the shallow east edge; each line
spans the whole 3704 m. Depth at ``x``: ``110 + (x - 3704) tan 1.5 deg``. The
strips are intervals across the area, so coverage and overlap are computed in
closed form (no sampling); the only floating-point error is rounding (about
1e-12 relative), far below the 4 decimal places reported.

Q4 (attachment). Depth grid of the 4 nmi (W-E) x 5 nmi (S-N) area, step
0.02 nmi, bilinear between nodes. Witness: straight line segments. See
``_q4`` for the sampled method and its error.

Derived values are exact Fractions of decimals rounded to the places named in
``PLACES``: the same witness bytes give the same values on any machine.
"""
from __future__ import annotations

import csv
import math
import os
from decimal import Decimal
from fractions import Fraction
from typing import Any, Mapping

from .base import Derived

TASK_ID = "cumcm-2023-b-multibeam-lines"

NMI_M = 1852.0                         # statement: 1 nmi = 1852 m
HALF_OPENING = math.radians(60.0)      # statement: opening angle 120 deg

# Q3 statement geometry
Q3_SPAN_M = 3704                       # N-S extent, 2 nmi: the length of each N-S line
Q3_WIDTH_M = 7408.0                    # E-W extent, 4 nmi
Q3_CENTRE_DEPTH_M = 110.0
Q3_SLOPE = math.radians(1.5)
Q3_MAX_LINES = 1000                    # the narrowest strip (east edge, ~21.6 m) needs < 400 lines

DERIVED = (
    "q3.line_count",
    "q3.total_length_m",
    "q3.last_position_m",
    "q3.min_overlap_pct",
    "q3.max_overlap_pct",
    "q3.missed_area_pct",
)

PLACES = {"q3.min_overlap_pct": 4, "q3.max_overlap_pct": 4, "q3.missed_area_pct": 4}

Q3_POSITIONS = ("reproduced", "problem3_line_positions_m")


# ------------------------------------------------------------------ helpers

def _rounded(x: float, places: int) -> Fraction:
    """The exact value of ``x`` rounded half-even to ``places`` decimals (-0 -> 0)."""
    return Fraction(Decimal(f"{x:.{places}f}")) + 0


def _at(data: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = data
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def _number(v: Any) -> Decimal | None:
    """A finite JSON number (never a bool), else None."""
    if isinstance(v, bool) or not isinstance(v, (Decimal, int)):
        return None
    d = Decimal(v)
    return d if d.is_finite() else None


def swath_reach(depth: float, slope: float) -> tuple[float, float]:
    """Horizontal reach (deep side, shallow side) of the outer beams over a
    seabed of cross-track slope ``slope`` (radians, >= 0) at ``depth`` metres."""
    k = depth * math.sin(HALF_OPENING) * math.cos(slope)
    return k / math.cos(HALF_OPENING + slope), k / math.cos(HALF_OPENING - slope)


def overlap_pct(lo_right: float, lo_width: float, hi_left: float, hi_width: float) -> float:
    """Overlap rate (%) of two adjacent strips: the width both cover (negative:
    the gap between them) over the mean of their widths."""
    return 100.0 * (lo_right - hi_left) / (0.5 * (lo_width + hi_width))


# ------------------------------------------------------------------ Q3

def q3_depth(x: float) -> float:
    """Q3 seabed depth (m) at ``x`` metres west of the east edge."""
    return Q3_CENTRE_DEPTH_M + (x - Q3_WIDTH_M / 2) * math.tan(Q3_SLOPE)


def q3_strip(x: float) -> tuple[float, float]:
    """The strip of the N-S line at ``x``: (east edge, west edge), metres west of the area's east edge."""
    deep, shallow = swath_reach(q3_depth(x), Q3_SLOPE)
    return x - shallow, x + deep


def _q3(data: Mapping[str, Any], values: dict, gaps: dict) -> None:
    names = [n for n in DERIVED if n.startswith("q3.")]
    raw = _at(data, Q3_POSITIONS)
    where = ".".join(Q3_POSITIONS)
    if raw is None:
        gaps.update({n: f"witness absent: {where}" for n in names})
        return
    why = None
    if not isinstance(raw, list) or not raw:
        why = "not a non-empty list of positions"
    elif len(raw) > Q3_MAX_LINES:
        why = f"more than {Q3_MAX_LINES} lines"
    else:
        nums = [_number(v) for v in raw]
        if any(v is None for v in nums):
            why = "a position is not a number"
        elif any(not (0 <= v <= Decimal("7408")) for v in nums):
            why = "a position lies outside the area [0, 7408] m"
    if why:
        gaps.update({n: f"witness malformed: {where}: {why}" for n in names})
        return
    xs = sorted(nums)
    values["q3.line_count"] = Fraction(len(xs))
    values["q3.total_length_m"] = Fraction(Q3_SPAN_M * len(xs))
    values["q3.last_position_m"] = Fraction(xs[-1])
    strips = [q3_strip(float(x)) for x in xs]
    if len(strips) >= 2:
        rates = [overlap_pct(a[1], a[1] - a[0], b[0], b[1] - b[0]) for a, b in zip(strips, strips[1:])]
        values["q3.min_overlap_pct"] = _rounded(min(rates), PLACES["q3.min_overlap_pct"])
        values["q3.max_overlap_pct"] = _rounded(max(rates), PLACES["q3.max_overlap_pct"])
    else:
        gaps["q3.min_overlap_pct"] = gaps["q3.max_overlap_pct"] = "one line: no adjacent strips"
    missed, reach = 0.0, 0.0          # uncovered width of [0, 7408]; covered up to `reach`
    for east, west in strips:          # sorted by position, so by east edge too (strips widen westward)
        if east > reach:
            missed += min(east, Q3_WIDTH_M) - reach
        reach = max(reach, west)
        if reach >= Q3_WIDTH_M:
            break
    missed += max(0.0, Q3_WIDTH_M - reach)
    values["q3.missed_area_pct"] = _rounded(100.0 * missed / Q3_WIDTH_M, PLACES["q3.missed_area_pct"])


def _last_cm(ok, lo: float, hi: float) -> Decimal:
    """The largest whole-centimetre x in [lo, hi] with ok(x), ok monotone (true then false)."""
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    x = Decimal(math.floor(lo * 100)) / 100
    while not ok(float(x)):
        x -= Decimal("0.01")
    return x


def q3_greedy_positions(target_pct: float = 10.0) -> list[Decimal]:
    """Q3 lines laid east to west, each as far west as the overlap rate with
    the previous strip allows (>= ``target_pct``), positions floored to whole
    centimetres; the first line's strip reaches the east edge, the last one's
    the west edge. The rule the oracle's witness was rebuilt with."""
    xs = [_last_cm(lambda x: q3_strip(x)[0] <= 0.0, 0.0, Q3_WIDTH_M)]
    while q3_strip(float(xs[-1]))[1] < Q3_WIDTH_M and len(xs) < Q3_MAX_LINES:
        east, west = q3_strip(float(xs[-1]))

        def ok(x: float) -> bool:
            e, w = q3_strip(x)
            return overlap_pct(west, west - east, e, w - e) >= target_pct

        xs.append(_last_cm(ok, float(xs[-1]), Q3_WIDTH_M))
    return xs


# ------------------------------------------------------------------ surface

def load_official(data_dir: str) -> Any:
    return None


def replay(data: Mapping[str, Any], official: Any) -> Derived:
    values: dict[str, Fraction] = {}
    gaps: dict[str, str] = {}
    _q3(data, values, gaps)
    return Derived(values, gaps)
