"""Geometry of the bench dragon (CUMCM 2024 A) in floats with numpy: the
simulation behind the replay module :mod:`dragon_dance` (method in its docstring).

Only the statement quantities need it; they do not depend on an artifact and
are kept in ``data/statement_reference.json`` (a test recomputes them), so
scoring an artifact never imports this module or numpy."""
from __future__ import annotations

import math
from functools import lru_cache
from typing import Mapping

import numpy as np

N_HANDLES = 224
D_HEAD = 3.41 - 2 * 0.275
D_BODY = 2.20 - 2 * 0.275
HALF_WIDTH = 0.15
END = 0.275
PITCH_Q1 = 0.55
THETA_A = 32 * math.pi
TURN_RADIUS = 4.5
PITCH_Q4 = 1.7
SPEED_LIMIT = 2.0
INNER = 8          # benches 0..7 checked against the others
WINDOW = 64        # handles kept for collision checks (>= 1.9 turns at r = 8.8 m, pitch 0.55 m)
TWO_PI = 2 * math.pi
Q3_BRACKET = (0.30, 0.55)   # board width .. statement pitch (feasible: clearance +0.099 m)
Q3_TURNS = 2.0              # coiling-in positions checked: the last two turns before r = 4.5 m


def _spacing(i: int) -> float:
    return D_HEAD if i == 0 else D_BODY


def _arc(theta, b):
    return 0.5 * b * (theta * np.sqrt(theta * theta + 1.0) + np.arcsinh(theta))


def _invert_arc(target, b, hi):
    lo = np.zeros_like(target)
    hi = np.full_like(target, hi)
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        big = _arc(mid, b) > target
        hi = np.where(big, mid, hi)
        lo = np.where(big, lo, mid)
    return 0.5 * (lo + hi)


# --- paths: pos(q) -> x, y, tx, ty, w  (unit direction of motion T, |dQ/dq| = w) ---

class _Spiral:
    """Coiling in on r = b*theta: path parameter q = -theta (q grows with the motion)."""

    def __init__(self, pitch: float):
        self.b = pitch / TWO_PI

    def pos(self, q):
        th = -q
        c, s = np.cos(th), np.sin(th)
        b = self.b
        dx, dy = b * (c - th * s), b * (s + th * c)
        w = np.hypot(dx, dy)
        return b * th * c, b * th * s, -dx / w, -dy / w, w


class _Turn:
    """Q4 path: coiling-in spiral (q < 0, theta = theta_e - q), arc 1 (0 <= q < L1),
    arc 2 (L1 <= q <= L) and the centrally symmetric coiling-out spiral
    (q > L, theta = theta_e + q - L); arcs are parametrised by arc length."""

    def __init__(self, pitch: float = PITCH_Q4, radius: float = TURN_RADIUS, ratio: float = 2.0):
        self.b = b = pitch / TWO_PI
        self.te = te = radius / b
        ex, ey, ux, uy, _ = self._in(np.array([te]))
        ex, ey, ux, uy = float(ex[0]), float(ey[0]), float(ux[0]), float(uy[0])
        nx, ny = -uy, ux
        en = ex * nx + ey * ny
        side = -math.copysign(1.0, en)
        r2 = -(radius * radius) / ((ratio + 1) * side * en)
        r1 = ratio * r2
        c1 = (ex + r1 * side * nx, ey + r1 * side * ny)
        c2 = (-ex - r2 * side * nx, -ey - r2 * side * ny)
        dx, dy = c2[0] - c1[0], c2[1] - c1[1]
        dist = math.hypot(dx, dy)
        tp = (c1[0] + r1 * dx / dist, c1[1] + r1 * dy / dist)
        self.o1 = math.copysign(1.0, (ex - c1[0]) * uy - (ey - c1[1]) * ux)
        self.a1 = math.atan2(ey - c1[1], ex - c1[0])
        self.a2 = math.atan2(tp[1] - c2[1], tp[0] - c2[0])
        sweep = (self.o1 * (math.atan2(tp[1] - c1[1], tp[0] - c1[0]) - self.a1)) % TWO_PI
        self.r1, self.r2, self.c1, self.c2 = r1, r2, c1, c2
        self.l1 = r1 * sweep
        self.length = (r1 + r2) * sweep

    def _in(self, th):
        c, s = np.cos(th), np.sin(th)
        b = self.b
        dx, dy = b * (c - th * s), b * (s + th * c)
        w = np.hypot(dx, dy)
        return b * th * c, b * th * s, -dx / w, -dy / w, w

    def pos(self, q):
        q = np.asarray(q, float)
        out = [np.empty_like(q) for _ in range(5)]
        m0 = q < 0
        m1 = (q >= 0) & (q < self.l1)
        m2 = (q >= self.l1) & (q <= self.length)
        m3 = q > self.length
        for o, v in zip(out, self._in(self.te - q[m0])):
            o[m0] = v
        for m, c, r, a0, sense, q0 in ((m1, self.c1, self.r1, self.a1, self.o1, 0.0),
                                       (m2, self.c2, self.r2, self.a2, -self.o1, self.l1)):
            ang = a0 + sense * (q[m] - q0) / r
            out[0][m] = c[0] + r * np.cos(ang)
            out[1][m] = c[1] + r * np.sin(ang)
            out[2][m] = -sense * np.sin(ang)
            out[3][m] = sense * np.cos(ang)
            out[4][m] = 1.0
        x, y, tx, ty, w = self._in(self.te + (q[m3] - self.length))
        out[0][m3], out[1][m3], out[2][m3], out[3][m3], out[4][m3] = -x, -y, tx, ty, w
        return tuple(out)

    def head(self, t):
        """Path parameter of the head's front handle t seconds after entering the turn."""
        t = np.asarray(t, float)
        q = t.copy()
        s_e = float(_arc(self.te, self.b))
        m0 = t < 0
        m3 = t > self.length
        if m0.any():
            q[m0] = self.te - _invert_arc(s_e - t[m0], self.b, self.te + 400.0)
        if m3.any():
            q[m3] = self.length + _invert_arc(s_e + (t[m3] - self.length), self.b, self.te + 400.0) - self.te
        return q


def _chain(path, q_head, count: int):
    """Path parameters (count x T) of the first `count` handles behind the head."""
    qs = [np.asarray(q_head, float)]
    for i in range(count - 1):
        d = _spacing(i)
        x0, y0, _, _, w0 = path.pos(qs[-1])
        q = qs[-1] - d / w0
        for _ in range(6):
            x, y, tx, ty, w = path.pos(q)
            ex, ey = x - x0, y - y0
            f = ex * ex + ey * ey - d * d
            df = 2.0 * (ex * tx + ey * ty) * w       # d/dq of the squared chord (dQ/dq = w*T)
            step = np.where(np.abs(df) > 1e-12, f / np.where(df == 0, 1.0, df), 0.0)
            q = q - np.clip(step, -0.5, 0.5)
        x, y, _, _, _ = path.pos(q)
        bad = (np.abs((x - x0) ** 2 + (y - y0) ** 2 - d * d) > 1e-12) | (q >= qs[-1])
        if bad.any():
            q = q.copy()
            q[bad] = _bisect_back(path, qs[-1][bad], x0[bad], y0[bad], d)
        qs.append(q)
    return np.array(qs)


def _bisect_back(path, q0, x0, y0, d):
    hi = q0.copy()
    lo = q0 - 0.25
    found = np.zeros(len(q0), bool)
    for _ in range(200):
        x, y, _, _, _ = path.pos(lo)
        found |= np.hypot(x - x0, y - y0) >= d
        if found.all():
            break
        hi = np.where(found, hi, lo)
        lo = np.where(found, lo, lo - 0.25)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        x, y, _, _, _ = path.pos(mid)
        big = np.hypot(x - x0, y - y0) >= d
        lo = np.where(big, mid, lo)
        hi = np.where(big, hi, mid)
    return 0.5 * (lo + hi)


def _speeds(path, qs):
    x, y, tx, ty, _ = (a.reshape(qs.shape) for a in path.pos(qs.ravel()))
    v = [np.ones(qs.shape[1])]
    for i in range(qs.shape[0] - 1):
        dx, dy = x[i] - x[i + 1], y[i] - y[i + 1]
        v.append(v[-1] * (dx * tx[i] + dy * ty[i]) / (dx * tx[i + 1] + dy * ty[i + 1]))
    return np.array(v)


# --- collision -------------------------------------------------------------

def _clearance(path, qs):
    """Least separating-axis gap (m) between inner benches and non-adjacent benches, per column."""
    x, y = (a.reshape(qs.shape) for a in path.pos(qs.ravel())[:2])
    dx, dy = x[1:] - x[:-1], y[1:] - y[:-1]
    length = np.hypot(dx, dy)
    ux, uy = dx / length, dy / length
    cx, cy = 0.5 * (x[1:] + x[:-1]), 0.5 * (y[1:] + y[:-1])
    hl = 0.5 * length + END
    nb = qs.shape[0] - 1
    pairs = [(i, j) for i in range(min(INNER, nb)) for j in range(i + 2, nb)]
    I = np.array([p[0] for p in pairs])
    J = np.array([p[1] for p in pairs])
    best = np.full((len(pairs), qs.shape[1]), -np.inf)
    for ax, ay in ((ux[I], uy[I]), (-uy[I], ux[I]), (ux[J], uy[J]), (-uy[J], ux[J])):
        gap = np.abs((cx[J] - cx[I]) * ax + (cy[J] - cy[I]) * ay)
        ri = hl[I] * np.abs(ux[I] * ax + uy[I] * ay) + HALF_WIDTH * np.abs(-uy[I] * ax + ux[I] * ay)
        rj = hl[J] * np.abs(ux[J] * ax + uy[J] * ay) + HALF_WIDTH * np.abs(-uy[J] * ax + ux[J] * ay)
        best = np.maximum(best, gap - ri - rj)
    return best.min(axis=0)


def _spiral_head(t, pitch: float = PITCH_Q1):
    """Path parameter (-theta) of the head t seconds after leaving point A at 1 m/s."""
    b = pitch / TWO_PI
    t = np.asarray(t, float)
    return -_invert_arc(float(_arc(THETA_A, b)) - t, b, THETA_A)


def _coil_clearance(pitch: float, q_head):
    path = _Spiral(pitch)
    return _clearance(path, _chain(path, q_head, WINDOW))


def _zoom_extreme(f, lo: float, hi: float, sign: float, points: int = 41, rounds: int = 3) -> tuple[float, float]:
    """(argument, value) of the extreme of sign*f on [lo, hi]: a grid, then `rounds`
    zooms of `points` samples on +/- one step around the best sample."""
    xs = np.linspace(lo, hi, points)
    for r in range(rounds + 1):
        vals = sign * f(xs)
        k = int(np.argmax(vals))
        if r == rounds:
            return float(xs[k]), float(sign * vals[k])
        step = xs[1] - xs[0]
        xs = np.linspace(max(lo, xs[k] - step), min(hi, xs[k] + step), points)
    raise AssertionError


# --- statement quantities ----------------------------------------------------

def terminal_time(step: float = 0.5, slope: float = 0.25) -> float:
    """First instant (s) at which two benches touch on the pitch-0.55 m spiral.

    Grid of `step` s from 0 to the time the head would reach the centre; an
    interval is certified collision-free when c[k] + c[k+1] > slope*step (the
    clearance changes by at most `slope` m/s: measured maximum 0.112 m/s on a
    0.5 s grid and 0.041 m/s on a 0.01 s grid near the end); uncertified
    intervals are resampled 20 times finer; the first negative sample is then
    bracketed and bisected to 1e-7 s."""
    t_end = float(_arc(THETA_A, PITCH_Q1 / TWO_PI))
    f = lambda ts: _coil_clearance(PITCH_Q1, _spiral_head(ts))   # noqa: E731
    ts = np.arange(0.0, t_end, step)
    c = f(ts)
    for _ in range(2):
        neg = np.nonzero(c < 0)[0]
        first = int(neg[0]) if len(neg) else len(c)
        doubt = [k for k in range(min(first, len(c) - 1)) if c[k] + c[k + 1] <= slope * (ts[k + 1] - ts[k])]
        if not doubt:
            break
        extra = np.concatenate([np.linspace(ts[k], ts[k + 1], 21)[1:-1] for k in doubt])
        ts = np.concatenate([ts, extra])
        order = np.argsort(ts, kind="stable")
        ts, c = ts[order], np.concatenate([c, f(extra)])[order]
    neg = np.nonzero(c < 0)[0]
    if not len(neg):
        return t_end
    lo, hi = float(ts[neg[0] - 1]), float(ts[neg[0]])
    while hi - lo > 1e-7:
        mid = 0.5 * (lo + hi)
        if f(np.array([mid]))[0] < 0:
            hi = mid
        else:
            lo = mid
    return 0.5 * (lo + hi)


def coil_in_clearance(pitch: float) -> float:
    """Least bench clearance (m) while the head coils in over the last Q3_TURNS
    turns before reaching the 4.5 m turn-around circle, at this pitch."""
    b = pitch / TWO_PI
    th_end = TURN_RADIUS / b
    span = Q3_TURNS * TWO_PI
    f = lambda th: _coil_clearance(pitch, -(th_end + th))   # noqa: E731
    xs = np.arange(0.0, span + 1e-12, 0.02)
    vals = f(xs)
    k = int(np.argmin(vals))
    _, value = _zoom_extreme(f, float(xs[max(k - 1, 0)]), float(xs[min(k + 1, len(xs) - 1)]), -1.0, 21, 2)
    return min(value, float(vals[k]))


def minimum_pitch(tol: float = 1e-8) -> float:
    """Smallest pitch in Q3_BRACKET whose coil-in clearance is >= 0 (Illinois
    regula falsi on the clearance, which changes sign once in the bracket)."""
    a, b = Q3_BRACKET
    fa, fb = coil_in_clearance(a), coil_in_clearance(b)
    side = 0
    for _ in range(40):
        c = (a * fb - b * fa) / (fb - fa)
        fc = coil_in_clearance(c)
        if fc >= 0:
            b, fb = c, fc
            if side == -1:
                fa *= 0.5
            side = -1
        else:
            a, fa = c, fc
            if side == 1:
                fb *= 0.5
            side = 1
        if b - a < tol or abs(fc) < 1e-10:
            break
    return b


def max_speed_ratio(t_end: float = 400.0, step: float = 0.5, candidates: int = 2) -> tuple[float, float]:
    """(largest handle/head speed ratio, its time) on the Q4 path at head speed 1 m/s.

    Every handle, t in [0, t_end] s after the head enters the turn (before it,
    all handles are on the coiling-in spiral, where each handle is slower than
    the one ahead, so the head's 1 is the largest); grid of `step` s, then the
    `candidates` best local maxima are zoomed four times (11 samples each)."""
    path = _Turn()
    f = lambda ts: _speeds(path, _chain(path, path.head(ts), N_HANDLES)).max(axis=0)   # noqa: E731
    ts = np.arange(0.0, t_end + 1e-9, step)
    v = f(ts)
    peaks = [k for k in range(len(v)) if (k == 0 or v[k] >= v[k - 1]) and (k == len(v) - 1 or v[k] >= v[k + 1])]
    peaks = sorted(peaks, key=lambda k: -v[k])[:candidates]
    best = (1.0, 0.0)
    for k in peaks:
        t, value = _zoom_extreme(f, float(ts[max(k - 1, 0)]), float(ts[min(k + 1, len(ts) - 1)]), 1.0, 11, 4)
        if value > best[0]:
            best = (value, t)
    return best


# The handles and instants the statement asks to report in the paper for Q1:
# the head's front handle (0), the front handles of body benches 1, 51, 101,
# 151 and 201 (handles 1, 51, ...), and the tail's rear handle (223), at 0,
# 60, ..., 300 s.
Q1_HANDLES = (0, 1, 51, 101, 151, 201, N_HANDLES - 1)
Q1_TIMES = (0, 60, 120, 180, 240, 300)
# radius ratios sampled for Q4's "can the arcs be adjusted, still tangent, so
# that the turning curve is shorter?" (both arcs stay inside the 9 m circle)
Q4_RATIOS = (0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 8.0)


def q1_table() -> Mapping[tuple[int, int], tuple[float, float, float]]:
    """Q1's reported table: (second, handle) -> (x m, y m, speed m/s), the
    head's front handle leaving point A at t = 0 s at 1 m/s on the 0.55 m
    spiral (handle speeds by the rigid-bench relation)."""
    path = _Spiral(PITCH_Q1)
    ts = np.array(Q1_TIMES, float)
    qs = _chain(path, _spiral_head(ts), N_HANDLES)
    x, y = (a.reshape(qs.shape) for a in path.pos(qs.ravel())[:2])
    v = _speeds(path, qs)
    return {(int(t), h): (float(x[h, k]), float(y[h, k]), float(v[h, k]))
            for k, t in enumerate(Q1_TIMES) for h in Q1_HANDLES}


def turn_length(ratio: float) -> float:
    """Q4: length of the S-curve of two arcs with radius ratio ``ratio``, tangent
    to the coiling-in spiral at r = 4.5 m, to each other and to the coiling-out
    spiral. With the tangent points fixed on the turn-around circle, the
    tangency conditions give r1 + r2 = -R^2 / (side * e.n) whatever the ratio,
    and both arcs turn through the same angle, so the length (r1 + r2) * sweep
    does not depend on the ratio: adjusting the arcs cannot shorten the curve."""
    return _Turn(ratio=ratio).length


def shortest_turn_length() -> float:
    """Q4: the shortest S-curve over the sampled radius ratios (all equal to the
    2:1 curve's length up to rounding; a test checks the spread)."""
    return min(turn_length(k) for k in Q4_RATIOS)


# --- statement quantities ----------------------------------------------------

@lru_cache(maxsize=1)
def statement_quantities() -> Mapping[str, float]:
    """The statement's own quantities, recomputed (about 8 s of one core)."""
    ratio, _ = max_speed_ratio()
    out = {"q2.terminal_time_s": terminal_time(),
           "q3.minimum_pitch_m": minimum_pitch(),
           "q4.base_turn_length_m": _Turn().length,
           "q4.shortest_turn_length_m": shortest_turn_length(),
           "q5.max_speed_ratio": ratio,
           "q5.max_head_speed_mps": SPEED_LIMIT / ratio}
    for (t, h), (x, y, v) in q1_table().items():
        out[f"q1.t{t}.h{h}.x_m"], out[f"q1.t{t}.h{h}.y_m"], out[f"q1.t{t}.h{h}.speed_mps"] = x, y, v
    return out
