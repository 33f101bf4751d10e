"""Replay of CUMCM 2023 B (multibeam survey lines).

Not split (about 520 lines): one task's replay reads as one piece, the swath
geometry of Q1/Q2, then the Q3 closed form and the Q4 lines that build on it.

The model, its witness, its rules and its rounding: `docs/replays.md`.
"""
from __future__ import annotations

import csv
import math
import os
import threading
from dataclasses import dataclass
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
    "q4.line_count",
    "q4.total_length_nmi",
    "q4.missed_area_pct",
    "q4.overlap_over_20pct_length_nmi",
    "q4.missed_area_slack_pct",
    "q4.overlap_slack_nmi",
) + tuple(f"q4.{kind}.{name}" for kind in ("claim_error", "contradicted")
                for name in ("total_length_nmi", "missed_area_pct", "overlap_over_20pct_length_nmi"))

PLACES = {"q3.min_overlap_pct": 4, "q3.max_overlap_pct": 4, "q3.missed_area_pct": 4,
          "q4.total_length_nmi": 6, "q4.missed_area_pct": 3, "q4.overlap_over_20pct_length_nmi": 3}

Q3_POSITIONS = ("reproduced", "problem3_line_positions_m")

# Q4 attachment geometry and work bounds
Q4_X_NMI, Q4_Y_NMI = 4.0, 5.0          # statement: E-W 4 nmi, S-N 5 nmi; attachment axes x (W->E), y (S->N)
Q4_STEP_NMI = 0.02                     # attachment grid step; also the raster cell and the station spacing
Q4_MAX_SEGMENTS = 400
Q4_MAX_TOTAL_NMI = 1500.0              # 2.4x the reference layout (622 nmi); a station count bound
Q4_MIN_PARALLEL = 0.5                  # neighbouring strips: lines within 60 deg of parallel
Q4_SEGMENTS = ("reproduced", "problem4_lines")
# Q4 claims compared with the replay of the artifact's own lines, whenever lines are given
Q4_CLAIMS = {"total_length_nmi": ("reproduced", "problem4_summary", "total_length_nautical_miles"),
             "missed_area_pct": ("reproduced", "problem4_summary", "missed_area_pct"),
             "overlap_over_20pct_length_nmi": ("reproduced", "problem4_summary",
                                               "overlap_over_20pct_length_nautical_miles")}


# ------------------------------------------------------------------ helpers

def _rounded(x: float, places: int) -> Fraction:
    """The exact value of ``x`` rounded half-even to ``places`` decimals (-0 -> 0)."""
    return Fraction(Decimal(f"{x:.{places}f}")) + 0


def _rounded_up(x: float, places: int) -> Fraction:
    """``x`` >= 0 rounded up to ``places`` decimals (a slack never shrinks by rounding)."""
    return Fraction(math.ceil(Decimal(repr(x)).scaleb(places)), 10 ** places)


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
    seabed of cross-track slope ``slope`` (radians, >= 0) at ``depth`` metres
    (floats, as in Q3, or numpy arrays, as on the Q4 grid)."""
    if isinstance(depth, float) and isinstance(slope, float):
        cos = math.cos
    else:
        import numpy as np

        cos = np.cos
    k = depth * math.sin(HALF_OPENING) * cos(slope)
    return k / cos(HALF_OPENING + slope), k / cos(HALF_OPENING - slope)


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

        def ok(x: float, west: float = west, east: float = east) -> bool:
            e, w = q3_strip(x)
            return overlap_pct(west, west - east, e, w - e) >= target_pct

        xs.append(_last_cm(ok, float(xs[-1]), Q3_WIDTH_M))
    return xs


# ------------------------------------------------------------------ Q4

@dataclass(frozen=True)
class DepthGrid:
    """The attachment's depths (m) on nodes ``(i * step, j * step)`` nmi,
    ``depth[j, i]`` (j: south to north, i: west to east), and the depth
    gradient (m per m) by central differences (one-sided on the border)."""

    depth: Any          # numpy arrays, read-only
    grad_x: Any
    grad_y: Any


def _bilinear(grid: Any, x_nmi: Any, y_nmi: Any) -> Any:
    import numpy as np

    ny, nx = grid.shape
    fx = np.clip(x_nmi / Q4_STEP_NMI, 0.0, nx - 1.0)
    fy = np.clip(y_nmi / Q4_STEP_NMI, 0.0, ny - 1.0)
    i = np.minimum(fx.astype(int), nx - 2)
    j = np.minimum(fy.astype(int), ny - 2)
    u, v = fx - i, fy - j
    return ((1 - u) * (1 - v) * grid[j, i] + u * (1 - v) * grid[j, i + 1]
            + (1 - u) * v * grid[j + 1, i] + u * v * grid[j + 1, i + 1])


def _segments(raw: Any) -> tuple[list[tuple[float, float, float, float]] | None, str | None]:
    """Witness segments as (x0, y0, x1, y1) nmi, or a reason they are malformed."""
    if not isinstance(raw, list) or not raw:
        return None, "not a non-empty list of segments"
    if len(raw) > Q4_MAX_SEGMENTS:
        return None, f"more than {Q4_MAX_SEGMENTS} segments"
    out, total = [], 0.0
    for k, seg in enumerate(raw):
        ends = [seg.get(key) if isinstance(seg, dict) else None for key in ("start_nmi", "end_nmi")]
        if not all(isinstance(e, list) and len(e) == 2 for e in ends):
            return None, f"segment {k}: needs start_nmi and end_nmi, each [x, y]"
        nums = [_number(v) for e in ends for v in e]
        if any(v is None for v in nums):
            return None, f"segment {k}: a coordinate is not a number"
        x0, y0, x1, y1 = nums
        if not all(0 <= x <= Decimal("4") for x in (x0, x1)) or not all(0 <= y <= Decimal("5") for y in (y0, y1)):
            return None, f"segment {k}: an end lies outside the area [0, 4] x [0, 5] nmi"
        x0, y0, x1, y1 = (float(v) for v in (x0, y0, x1, y1))
        length = math.hypot(x1 - x0, y1 - y0)
        if length == 0.0:
            return None, f"segment {k}: zero length"
        total += length
        out.append((x0, y0, x1, y1))
    if total > Q4_MAX_TOTAL_NMI:
        return None, f"total length above {Q4_MAX_TOTAL_NMI:g} nmi"
    return out, None


@dataclass(frozen=True)
class _Line:
    a: Any              # start (m), unit direction, left normal, length (m)
    t: Any
    n: Any
    length: float
    stations: int       # equal pieces of at most Q4_STEP_NMI; one station at each piece's middle
    left: Any           # strip reach (m) at each station, to the left / right of the line
    right: Any


def _line(grid: DepthGrid, seg: tuple[float, float, float, float]) -> _Line:
    import numpy as np

    x0, y0, x1, y1 = seg
    a = np.array([x0, y0]) * NMI_M
    d = np.array([x1 - x0, y1 - y0]) * NMI_M
    length = float(math.hypot(*d))
    t = d / length
    n = np.array([-t[1], t[0]])
    k = max(1, math.ceil(length / (Q4_STEP_NMI * NMI_M) - 1e-9))
    mid = (np.arange(k) + 0.5) / k
    px, py = (x0 + mid * (x1 - x0)), (y0 + mid * (y1 - y0))
    depth = _bilinear(grid.depth, px, py)
    cross = _bilinear(grid.grad_x, px, py) * n[0] + _bilinear(grid.grad_y, px, py) * n[1]
    deep, shallow = swath_reach(depth, np.arctan(np.abs(cross)))
    left = np.where(cross >= 0, deep, shallow)                     # depth grows to the left: deep side left
    right = np.where(cross >= 0, shallow, deep)
    return _Line(a, t, n, length, k, left, right)


def _coverage_missed_pct(lines: list[_Line]) -> tuple[float, float]:
    """Share (%) of raster cells (0.02 nmi, by their centres) no strip covers,
    and its slack (%): the share of cells on the border between covered and
    uncovered cells (a cell with a 4-neighbour of the other state). Only a
    cell that a strip's edge cuts can be judged wrongly by its centre, and the
    strips (at least about 70 m wide) are wider than a cell (37 m), so such a
    cell has a neighbour judged the other way."""
    import numpy as np

    nx, ny = round(Q4_X_NMI / Q4_STEP_NMI), round(Q4_Y_NMI / Q4_STEP_NMI)
    cx = (np.arange(nx) + 0.5) * Q4_STEP_NMI * NMI_M
    cy = (np.arange(ny) + 0.5) * Q4_STEP_NMI * NMI_M
    px, py = np.meshgrid(cx, cy)
    px, py = px.ravel(), py.ravel()
    covered = np.zeros(px.shape, dtype=bool)
    for ln in lines:
        rx, ry = px - ln.a[0], py - ln.a[1]
        s = rx * ln.t[0] + ry * ln.t[1]
        u = rx * ln.n[0] + ry * ln.n[1]
        inside = (s >= 0) & (s <= ln.length)
        k = np.clip((s / ln.length * ln.stations).astype(int), 0, ln.stations - 1)
        covered |= inside & (u <= ln.left[k]) & (u >= -ln.right[k])
    grid = covered.reshape(ny, nx)
    border = np.zeros(grid.shape, dtype=bool)
    vert = grid[1:, :] != grid[:-1, :]
    border[1:, :] |= vert
    border[:-1, :] |= vert
    horz = grid[:, 1:] != grid[:, :-1]
    border[:, 1:] |= horz
    border[:, :-1] |= horz
    return (100.0 * float(np.count_nonzero(~covered)) / covered.size,
            100.0 * float(np.count_nonzero(border)) / covered.size)


def _overlap_over_20_m(lines: list[_Line]) -> tuple[float, float]:
    """Length (m) along the lines where a strip overlaps its nearest neighbour
    strip by more than 20 %, and the slack (m) of that length.

    At each station of a line, the nearest other line on each side (crossed by
    the station's normal, within 60 deg of parallel), searched among *all* other
    lines, is its neighbour there; the station's piece counts for that pair when
    the two strips, measured along the normal, overlap by more than 20 %. A pair
    of lines is counted once: along the one of the two on which its length is
    the larger (for near-parallel neighbours the two are nearly equal), so the
    value does not depend on the order in which the lines are listed. Sums are
    exactly rounded (``math.fsum``).

    The slack is one piece per change, along a line and side, of the pair whose
    overlap is above 20 % (a change inside a piece is placed at its middle).
    """
    import numpy as np

    along: dict[tuple[int, int], float] = {}
    slack: list[float] = []
    if not lines:
        return 0.0, 0.0
    # Two strips overlap only when the station's normal meets the other line within
    # reach_i + reach_j / cos <= 3 * widest reach (cos >= Q4_MIN_PARALLEL = 0.5) of the
    # station; a line farther than that from every station (by bounding boxes, which
    # never overstate a distance) can neither overlap nor be the nearest of one that
    # does, so it is left out of the search. The result is that of searching all lines.
    reach = max(float(max(ln.left.max(), ln.right.max())) for ln in lines)
    far = reach * (1.0 + 1.0 / Q4_MIN_PARALLEL) + 1.0
    ends = np.array([[ln.a, ln.a + ln.t * ln.length] for ln in lines])          # (L, 2, 2)
    box_lo, box_hi = ends.min(axis=1), ends.max(axis=1)                         # (L, 2)
    for i, li in enumerate(lines):
        gap = np.maximum(0.0, np.maximum(box_lo - box_hi[i], box_lo[i] - box_hi))    # (L, 2)
        near = np.hypot(gap[:, 0], gap[:, 1]) <= far
        idx = [j for j in np.nonzero(near)[0].tolist() if j != i]
        if not idx:
            continue
        others = [lines[j] for j in idx]
        mid = (np.arange(li.stations) + 0.5) / li.stations
        p = li.a[None, :] + (mid * li.length)[:, None] * li.t[None, :]          # (m, 2)
        a = np.array([o.a for o in others])                                     # (n, 2)
        d = np.array([o.t * o.length for o in others])
        c = d @ li.t / np.array([o.length for o in others])                     # cos between the lines
        den = li.n[0] * d[:, 1] - li.n[1] * d[:, 0]                             # cross(n_i, d_j)
        ok = np.abs(c) >= Q4_MIN_PARALLEL
        den = np.where(ok, den, 1.0)
        ap = a[None, :, :] - p[:, None, :]                                      # (m, n, 2)
        u = (ap[..., 0] * d[None, :, 1] - ap[..., 1] * d[None, :, 0]) / den     # offset along n_i (m)
        s = (ap[..., 0] * li.n[1] - ap[..., 1] * li.n[0]) / den                 # fraction along j
        hit = ok[None, :] & (s >= 0) & (s <= 1)
        lo_i, hi_i = -li.right[:, None], li.left[:, None]
        lo_j = np.empty(u.shape)
        hi_j = np.empty(u.shape)
        for jj, o in enumerate(others):
            kj = np.clip((s[:, jj] * o.stations).astype(int), 0, o.stations - 1)
            cj = abs(c[jj]) if ok[jj] else 1.0       # (a near-perpendicular line is never hit: no division by 0)
            l_j, r_j = (o.left[kj], o.right[kj]) if c[jj] > 0 else (o.right[kj], o.left[kj])
            lo_j[:, jj] = u[:, jj] - r_j / cj
            hi_j[:, jj] = u[:, jj] + l_j / cj
        over = np.minimum(hi_i, hi_j) - np.maximum(lo_i, lo_j)
        rate = 100.0 * over / (0.5 * ((hi_i - lo_i) + (hi_j - lo_j)))
        piece = li.length / li.stations
        rows = np.arange(li.stations)
        for side in (u > 0, u < 0):
            cand = hit & side
            dist = np.where(cand, np.abs(u), np.inf)
            nearest = np.argmin(dist, axis=1)
            above = np.isfinite(dist[rows, nearest]) & (rate[rows, nearest] > 20.0)
            key = np.where(above, nearest, -1)
            for jj, n in zip(*np.unique(key[above], return_counts=True)):
                pair = (i, idx[int(jj)])
                along[pair] = along.get(pair, 0.0) + piece * int(n)
            changes = int(np.count_nonzero(key[1:] != key[:-1]))
            slack.append(piece * changes)
    total = math.fsum(max(v, along.get((j, i), 0.0)) for (i, j), v in along.items()
                      if i < j or (j, i) not in along)
    return total, math.fsum(slack)


def _q4(data: Mapping[str, Any], source: GridFile | None, values: dict, gaps: dict) -> None:
    names = [n for n in DERIVED if n.startswith("q4.")]
    raw = _at(data, Q4_SEGMENTS)
    where = ".".join(Q4_SEGMENTS)
    if raw is None:
        gaps.update({n: f"witness absent: {where}" for n in names})
        _q4_claims(data, values, gaps, given=False)
        return
    segs, why = _segments(raw)
    if why:
        gaps.update({n: f"witness malformed: {where}: {why}" for n in names})
        return
    values["q4.line_count"] = Fraction(len(segs))
    values["q4.total_length_nmi"] = _rounded(sum(math.hypot(x1 - x0, y1 - y0) for x0, y0, x1, y1 in segs),
                                             PLACES["q4.total_length_nmi"])
    if source is None:
        for n in ("q4.missed_area_pct", "q4.overlap_over_20pct_length_nmi", "q4.missed_area_slack_pct",
                  "q4.overlap_slack_nmi"):
            gaps[n] = "official depth grid absent"
        _q4_claims(data, values, gaps)
        return
    grid = source.grid()
    lines = [_line(grid, seg) for seg in segs]
    missed, missed_slack = _coverage_missed_pct(lines)
    values["q4.missed_area_pct"] = _rounded(missed, PLACES["q4.missed_area_pct"])
    values["q4.missed_area_slack_pct"] = _rounded_up(missed_slack, PLACES["q4.missed_area_pct"])
    over, over_slack = _overlap_over_20_m(lines)
    values["q4.overlap_over_20pct_length_nmi"] = _rounded(over / NMI_M, PLACES["q4.overlap_over_20pct_length_nmi"])
    values["q4.overlap_slack_nmi"] = _rounded_up(over_slack / NMI_M, PLACES["q4.overlap_over_20pct_length_nmi"])
    _q4_claims(data, values, gaps)


# How far a Q4 claim may lie from the replay of its own lines: the replay's slack
# (derived, see the derived names) plus what printing the claim as B226 prints it allows.
Q4_PRINTED = {"total_length_nmi": Fraction(1, 20),           # one decimal (622.0); the replayed length is exact to 1e-6
              "missed_area_pct": Fraction(1, 200),           # two decimals (3.48)
              "overlap_over_20pct_length_nmi": Fraction(1, 20)}   # one decimal (30.0)
Q4_SLACK = {"total_length_nmi": None, "missed_area_pct": "q4.missed_area_slack_pct",
            "overlap_over_20pct_length_nmi": "q4.overlap_slack_nmi"}


def _q4_claims(data: Mapping[str, Any], values: dict, gaps: dict, given: bool = True) -> None:
    """Q4 claims against the replay of the artifact's own lines.

    ``q4.claim_error.<index>`` = claimed - replayed, and ``q4.contradicted.<index>``
    = 1 when that error exceeds the replay's slack plus the printing allowance
    (``Q4_PRINTED``), else 0. Q4 is compared *whenever lines are given*: B226
    publishes its indices without a layout, so an artifact without lines
    (``given`` False) has no plan for a claim to contradict (0, and its Q4 values
    stay closeness only), while a claim that comes with lines must be what they
    give. A claim absent, or not a number, contradicts nothing (it scores 0 as
    missing)."""
    for name, path in Q4_CLAIMS.items():
        err, bad = f"q4.claim_error.{name}", f"q4.contradicted.{name}"
        if not given:
            gaps[err] = "witness absent: " + ".".join(Q4_SEGMENTS)
            values[bad] = Fraction(0)
            continue
        claimed = _number(_at(data, path))
        slack_name = Q4_SLACK[name]
        if claimed is None:
            gaps[err] = f"claim absent or not a number: {'.'.join(path)}"
            values[bad] = Fraction(0)
        elif f"q4.{name}" in values and (slack_name is None or slack_name in values):
            e = Fraction(claimed) - values[f"q4.{name}"]
            allowed = Q4_PRINTED[name] + (values[slack_name] if slack_name else 0)
            values[err] = e
            values[bad] = Fraction(int(abs(e) > allowed))
        else:
            gaps[err] = gaps[bad] = gaps.get(f"q4.{name}", "not derived")


# ------------------------------------------------------------------ surface

class GridFile:
    """The depth-grid attachment, parsed on first use: an artifact without a
    Q4 witness (the oracle has none) never pays for the file or for numpy. A
    defect of the file then surfaces as a replay error (gaps), and
    ``grid()`` raises it again for the tests and the audit."""

    def __init__(self, path: str):
        self.path = path
        self._grid: list[DepthGrid] = []
        self._lock = threading.Lock()

    def grid(self) -> DepthGrid:
        with self._lock:
            if not self._grid:
                self._grid.append(_read_grid(self.path))
            return self._grid[0]


def _read_grid(path: str) -> DepthGrid:
    """``depth_grid.csv``: a header row of x in nmi, then one row per y: y in
    nmi and the depths in metres."""
    import numpy as np

    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    xs = [float(v) for v in rows[0][1:]]
    ys = [float(r[0]) for r in rows[1:]]
    depth = np.array([[float(v) for v in r[1:]] for r in rows[1:]])
    nx, ny = round(Q4_X_NMI / Q4_STEP_NMI) + 1, round(Q4_Y_NMI / Q4_STEP_NMI) + 1
    if depth.shape != (ny, nx) or xs[-1] != Q4_X_NMI or ys[-1] != Q4_Y_NMI:
        raise ValueError(f"{path}: expected a {ny} x {nx} grid over [0, 4] x [0, 5] nmi")
    gy, gx = np.gradient(depth, Q4_STEP_NMI * NMI_M)
    for arr in (depth, gx, gy):
        arr.setflags(write=False)
    return DepthGrid(depth, gx, gy)


def load_official(data_dir: str) -> GridFile | None:
    """The attachment's depth grid, to be parsed on first use (None when the
    task folder has no ``depth_grid.csv``)."""
    path = os.path.join(data_dir, "depth_grid.csv")
    return GridFile(path) if os.path.isfile(path) else None


def replay(data: Mapping[str, Any], official: GridFile | None) -> Derived:
    values: dict[str, Fraction] = {}
    gaps: dict[str, str] = {}
    _q3(data, values, gaps)
    _q4(data, official, values, gaps)
    return Derived(values, gaps)
