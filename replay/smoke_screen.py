"""Replay of CUMCM 2025 A (smoke screen): shielded time from each bomb's plan.

Not split (about 560 lines): one task's replay reads as one piece, the plan's
rules, the cloud geometry and the interval search in the order a step uses
them.

The model, its witness, its rules and its rounding: `docs/replays.md`.
"""
from __future__ import annotations

import math
from bisect import bisect_right
from decimal import Decimal
from fractions import Fraction
from itertools import compress
from operator import not_
from typing import Any, Mapping

from .base import Derived

TASK_ID = "cumcm-2025-a-smoke-screen"

G = 9.8
MISSILE_SPEED = 300.0
CLOUD_RADIUS = 10.0
SINK_SPEED = 3.0
CLOUD_LIFE_S = 20.0
TARGET_RADIUS = 7.0
TARGET_HEIGHT = 10.0
TARGET_BASE = (0.0, 200.0, 0.0)
MISSILES = {"M1": (20000.0, 0.0, 2000.0), "M2": (19000.0, 600.0, 2100.0), "M3": (18000.0, -600.0, 1900.0)}
UAVS = {"FY1": (17800.0, 0.0, 1800.0), "FY2": (12000.0, 1400.0, 1400.0), "FY3": (6000.0, -3000.0, 700.0),
        "FY4": (11000.0, 2000.0, 1800.0), "FY5": (13000.0, -2000.0, 1300.0)}
SPEED_RANGE = (70.0, 140.0)
MAX_TIME_S = 1000.0          # a drop or fuse later than this is not a plan (every missile lands by 67 s)

STEP_S = 0.01                # search grid inside a cloud's window
BISECTIONS = 30              # 0.01 s / 2**30 < 1e-11 s
PLACES = 6
REFERENCE_STEP = Fraction(1, 10)
SAMPLED_MIN_BLOCKED = 7      # ceil(0.25 * 27)
RIM_POINTS = 180

# questions: (witness list path, single bomb?, missiles whose union is claimed, most bombs allowed)
QUESTIONS = {"q1": ("strategy", True, ("M1",), 1), "q2": ("strategy", True, ("M1",), 1),
             "q3": ("strategies", False, ("M1",), 3), "q4": ("strategies", False, ("M1",), 3),
             "q5": ("strategies", False, ("M1", "M2", "M3"), 15)}
CRITERIA = ("sampled", "full_target")


def _claim_keys(q: str) -> tuple[str, ...]:
    if QUESTIONS[q][1]:
        return ("",)
    return QUESTIONS[q][2] + ("total",)


def _names(q: str, criterion: str) -> dict[str, tuple[str, str]]:
    """Claim key -> (duration name, slack name) for one question and criterion."""
    sfx = "" if criterion == "sampled" else "_full_target"
    out = {}
    for key in _claim_keys(q):
        if key == "":
            out[key] = (f"{q}.effective_duration{sfx}_s", f"{q}.grid_slack{sfx}_s")
        else:
            out[key] = (f"{q}.union_duration{sfx}_s.{key}", f"{q}.grid_slack{sfx}_s.{key}")
    return out


DURATIONS = tuple(n for q in QUESTIONS for c in CRITERIA for pair in _names(q, c).values() for n in pair)

# The statement's rules for a plan, each counted per question (a count of 0: the plan keeps the rule):
#   speed    无人机受领任务后，可根据需要瞬时调整飞行方向，然后以70~140 m/s 的速度等高度匀速直线飞行
#            (bombs whose UAV speed lies outside 70-140 m/s);
#   course   每架无人机的航向、速度可不相同，但一旦确定就不再调整
#            (per UAV, the number of its distinct (heading, speed) pairs beyond the first);
#   spacing  每架无人机投放两枚烟幕干扰弹至少间隔1 s
#            (pairs of drops of one UAV less than 1 s apart);
#   bombs    the question's UAVs and bomb counts: Q1/Q2 利用无人机FY1 投放1 枚; Q3 利用无人机FY1 投放3 枚;
#            Q4 利用FY1、FY2、FY3 等3 架无人机，各投放1 枚; Q5 利用5 架无人机，每架无人机至多投放3 枚
#            (the bombs by which the plan's count per UAV falls short of or exceeds what the question asks).
RULES = ("speed", "course", "spacing", "bombs")
# bombs each UAV must drop (exactly), or at most (Q5); UAVs not listed may drop none
QUESTION_UAVS = {"q1": ({"FY1": 1}, True), "q2": ({"FY1": 1}, True), "q3": ({"FY1": 3}, True),
                 "q4": ({"FY1": 1, "FY2": 1, "FY3": 1}, True),
                 "q5": ({u: 3 for u in ("FY1", "FY2", "FY3", "FY4", "FY5")}, False)}
RULE_MAX_BOMBS = 100         # a longer list is not read for its rules (work bound)
# a single bomb can break neither the course nor the spacing rule: Q1 and Q2 are read for the other two
QUESTION_RULES = {q: RULES if not QUESTIONS[q][1] else ("speed", "bombs") for q in QUESTIONS}
RULE_NAMES = tuple(f"{q}.rule_breaks.{r}" for q in QUESTIONS for r in QUESTION_RULES[q])

DERIVED = DURATIONS + RULE_NAMES


def load_official(data_dir: str) -> None:
    """Statement-only task: every constant is in the statement."""
    return None


# --------------------------------------------------------------------------- geometry

Point = tuple[float, float, float]


def _target_points() -> dict[str, tuple[Point, ...]]:
    x0, y0, _ = TARGET_BASE
    sampled = [(x0, y0, TARGET_HEIGHT / 2), (x0, y0, 0.0), (x0, y0, TARGET_HEIGHT)]
    for z in (0.0, TARGET_HEIGHT, TARGET_HEIGHT / 2):
        for k in range(8):
            th = 2 * math.pi * k / 8
            sampled.append((x0 + TARGET_RADIUS * math.cos(th), y0 + TARGET_RADIUS * math.sin(th), z))
    rims = [(x0 + TARGET_RADIUS * math.cos(2 * math.pi * k / RIM_POINTS),
             y0 + TARGET_RADIUS * math.sin(2 * math.pi * k / RIM_POINTS), z)
            for z in (0.0, TARGET_HEIGHT) for k in range(RIM_POINTS)]
    return {"sampled": tuple(sampled), "full_target": tuple(rims)}


POINTS = _target_points()
TARGET_CENTRE = (TARGET_BASE[0], TARGET_BASE[1], TARGET_HEIGHT / 2)
# every target point lies within REACH of the centre, so a cloud farther than
# CLOUD_RADIUS + REACH from the sight line to the centre blocks no sight line at all
REACH = math.hypot(TARGET_RADIUS, TARGET_HEIGHT / 2) + 1e-6
PMAX = max(math.hypot(*q) for pts in POINTS.values() for q in pts) + 1e-6   # |P| for every target point
# chord between rim points k apart, k = 0 .. RIM_POINTS / 2 (increasing)
CHORDS = tuple(2 * TARGET_RADIUS * math.sin(math.pi * k / RIM_POINTS) for k in range(RIM_POINTS // 2 + 1))
# a distance computed farther than EPS from the radius keeps its side under any rounding
# (the rounding error of a computed distance is below 1e-9 m at these magnitudes)
EPS = 1e-6
HORIZONS = (0.01, 0.05, 0.5)     # seconds: spans tried for a certificate
MIN_SPAN = 0.002                      # seconds: least span asked of a whole-rim certificate


def _impact_time(m: str) -> float:
    return math.sqrt(sum(c * c for c in MISSILES[m])) / MISSILE_SPEED


def _heading(m: str) -> Point:
    x, y, z = MISSILES[m]
    n = math.sqrt(x * x + y * y + z * z)
    return (-x / n, -y / n, -z / n)


def _seg_dist(a: Point, b: Point, c: Point) -> tuple[float, float]:
    """Distance from c to the segment a-b, and its foot's place on it (0 at a, 1 at b).

    The operations and their order are those of the vectorised form this replaced,
    so every distance is the same float.
    """
    abx, aby, abz = b[0] - a[0], b[1] - a[1], b[2] - a[2]
    acx, acy, acz = c[0] - a[0], c[1] - a[1], c[2] - a[2]
    h = (acx * abx + acy * aby + acz * abz) / max(abx * abx + aby * aby + abz * abz, 1e-12)
    h = 0.0 if h < 0.0 else 1.0 if h > 1.0 else h
    ex, ey, ez = c[0] - (a[0] + h * abx), c[1] - (a[1] + h * aby), c[2] - (a[2] + h * abz)
    return math.sqrt(ex * ex + ey * ey + ez * ez), h


def _rates(r0: float, w0: float) -> list[tuple[float, float]]:
    """(span, L) for each of HORIZONS: L bounds |d'| for every target point P within span of a time.

    d is the distance from the cloud centre c to the segment from P to the missile m;
    r0 = |c - C| and w0 = |m - C| at that time, C the target centre. By the envelope
    theorem d' = u . (c' - s m'), u the unit vector from the foot to c and s in [0, 1]
    the foot's place from P. Unless the foot is at m, which needs |c - P| >= |m - P|,
    u is normal to m - P and s <= |c - P| / |m - P|; m' points at the decoy, so its
    part normal to m - P is at most 300 |P| / |m - P|.
    """
    out = []
    near, far = r0 + REACH, w0 - REACH      # r0 + REACH + SINK_SPEED * span is (r0 + REACH) + ...: same floats
    for span, sink, fly in _HORIZON_MOVES:
        r = near + sink
        w = far - fly
        if r >= w:
            out.append((span, MISSILE_SPEED + SINK_SPEED))
        else:
            x = r * PMAX / (w * w)
            out.append((span, SINK_SPEED + MISSILE_SPEED * (x if x < 1.0 else 1.0)))
    return out


# (span, how far the cloud sinks and the missile flies in it) for each of HORIZONS
_HORIZON_MOVES = tuple((span, SINK_SPEED * span, MISSILE_SPEED * span) for span in HORIZONS)


class _Cloud:
    """Whether one cloud hides the target from missile m, decided with certificates.

    ``decide(t)`` gives (hidden, lo, hi): the state at t, and an interval around t on
    which every time has that state. A distance computed at t with margin
    mu = |d - radius| keeps its side within (mu - EPS) / L of t (L from ``_rates``), so a
    point is evaluated only when no earlier evaluation covers the time asked; the
    state is always the one evaluating every point would give.
    """

    def __init__(self, burst: Point, t_burst: float, m: str, criterion: str):
        self.burst, self.t_burst, self.full = burst, t_burst, criterion == "full_target"
        self.start, self.dir = MISSILES[m], _heading(m)
        self.points = POINTS[criterion]
        n = len(self.points)
        self.lo, self.hi, self.blocked = [1.0] * n, [0.0] * n, [False] * n   # per point
        self.last = (False, 1.0, 0.0)
        self.fail = -1              # full_target: the rim point found unblocked last
        self.rim = (1.0, 0.0, ())   # full_target: whole-rim certificate (lo, hi, weak points)
        self.crit = 0               # full_target: least margin of the last walk
        self.rates: list[tuple[float, float]] = []
        self.mu = 0.0

    def decide(self, t: float) -> tuple[bool, float, float]:
        if self.last[1] <= t <= self.last[2]:
            return self.last
        p, u, b = self.start, self.dir, self.burst
        k = MISSILE_SPEED * t
        mis = (p[0] + k * u[0], p[1] + k * u[1], p[2] + k * u[2])
        centre = (b[0], b[1], b[2] - (t - self.t_burst) * SINK_SPEED)
        d, _ = _seg_dist(mis, TARGET_CENTRE, centre)
        w0 = math.dist(mis, TARGET_CENTRE)
        self.rates = _rates(math.dist(centre, TARGET_CENTRE), w0)
        if d > CLOUD_RADIUS + REACH:          # no sight line comes near the cloud
            s = self._span(d - CLOUD_RADIUS - REACH)
            self.last = (False, t - s, t + s)
            return self.last
        cm = (centre[0] - mis[0], centre[1] - mis[1], centre[2] - mis[2])
        gap = math.hypot(*cm)
        if gap <= CLOUD_RADIUS - EPS:         # the missile is inside the cloud: every sight line starts there
            s = max(0.0, (CLOUD_RADIUS - EPS - gap) / (MISSILE_SPEED + SINK_SPEED))
            self.last = (True, t - s, t + s)
        elif (cm[0] * (TARGET_CENTRE[0] - mis[0]) + cm[1] * (TARGET_CENTRE[1] - mis[1])
              + cm[2] * (TARGET_CENTRE[2] - mis[2])) < -gap * (REACH + 1e-9 * w0):
            # the cloud is behind the missile for every target point: each point's foot is
            # the missile, so each distance is computed as the same float as d
            self.last = (d <= CLOUD_RADIUS, t, t)
        elif self.full:
            self.last = self._full(t, mis, centre)
        else:
            self.last = self._sampled(t, mis, centre)
        return self.last

    def _span(self, mu: float) -> float:
        """Time either side of now in which a distance with margin mu keeps its side."""
        x, best = mu - EPS, 0.0
        for hz, rate in self.rates:     # rates grow with the horizon: the first uncapped span is the last to try
            if x < hz * rate:
                x /= rate
                return x if x > best else best
            best = hz
        return best

    def _point(self, i: int, t: float, mis: Point, centre: Point) -> float:
        """Evaluate point i at t and store its certificate; returns the foot's place.

        The body is ``_seg_dist(mis, point, centre)`` and ``_span`` written out (the
        innermost step of the replay): the same operations in the same order."""
        p = self.points[i]
        mx, my, mz = mis
        abx, aby, abz = p[0] - mx, p[1] - my, p[2] - mz
        acx, acy, acz = centre[0] - mx, centre[1] - my, centre[2] - mz
        n2 = abx * abx + aby * aby + abz * abz
        h = (acx * abx + acy * aby + acz * abz) / (n2 if n2 >= 1e-12 else 1e-12)
        h = 0.0 if h < 0.0 else 1.0 if h > 1.0 else h
        ex, ey, ez = centre[0] - (mx + h * abx), centre[1] - (my + h * aby), centre[2] - (mz + h * abz)
        d = math.sqrt(ex * ex + ey * ey + ez * ez)
        self.mu = mu = CLOUD_RADIUS - d
        x, s = (mu if mu >= 0 else -mu) - EPS, 0.0
        for hz, rate in self.rates:
            if x < hz * rate:
                x /= rate
                if x > s:
                    s = x
                break
            s = hz
        self.lo[i] = t - s
        self.hi[i] = t + s
        self.blocked[i] = d <= CLOUD_RADIUS
        return h

    def _sampled(self, t: float, mis: Point, centre: Point) -> tuple[bool, float, float]:
        """At least SAMPLED_MIN_BLOCKED points blocked.

        Points no certificate covers at t are evaluated. The state then holds while k
        of the certificates on its side still cover: from the k-th earliest start to
        the k-th latest end.
        """
        lo, hi, blocked, point = self.lo, self.hi, self.blocked, self._point
        for i, start in enumerate(lo):
            if not start <= t <= hi[i]:
                point(i, t, mis, centre)
        if blocked.count(True) >= SAMPLED_MIN_BLOCKED:
            k = SAMPLED_MIN_BLOCKED
            return (True, sorted(compress(lo, blocked))[k - 1], sorted(compress(hi, blocked))[-k])
        k = len(lo) - SAMPLED_MIN_BLOCKED + 1
        return (False, sorted(compress(lo, map(not_, blocked)))[k - 1],
                sorted(compress(hi, map(not_, blocked)))[-k])

    def _full(self, t: float, mis: Point, centre: Point) -> tuple[bool, float, float]:
        """Every rim point blocked: the point that failed last is tried first."""
        f = self.fail
        if f >= 0:
            if not self.lo[f] <= t <= self.hi[f]:
                self._point(f, t, mis, centre)
            if not self.blocked[f]:
                return (False, self.lo[f], self.hi[f])
        lo, hi, weak = self.rim
        if not lo <= t <= hi:
            return self._walk(t, mis, centre)
        plo, phi, blocked = self.lo, self.hi, self.blocked
        for i in weak:
            a, b = plo[i], phi[i]
            if not a <= t <= b:
                self._point(i, t, mis, centre)
                a, b = plo[i], phi[i]
            if not blocked[i]:
                self.fail = i
                return (False, a, b)
            if a > lo:          # lo, hi = max(lo, a), min(hi, b)
                lo = a
            if b < hi:
                hi = b
        return (True, lo, hi)

    def _walk(self, t: float, mis: Point, centre: Point) -> tuple[bool, float, float]:
        """Certify every rim point blocked for tau either side of t, or find one that is not.

        A point blocked with margin mu whose foot lies at h from the missile bounds its
        neighbours: moving P by x moves that foot's point by h x, so a rim point within
        (mu - EPS - L tau) / h of it stays blocked for tau either side. tau is half what
        the first point's margin allows, at least MIN_SPAN; a point with a margin below
        L tau (weak) keeps its own certificate instead.
        """
        tau = rate = -1.0
        weak = []
        lo, hi = -math.inf, math.inf
        first, start = divmod(self.crit, RIM_POINTS)
        least = math.inf
        plo, phi, blocked, point = self.lo, self.hi, self.blocked, self._point
        for rim in (first, 1 - first):
            j = 0
            while j < RIM_POINTS:
                i = rim * RIM_POINTS + (start + j) % RIM_POINTS
                h = point(i, t, mis, centre)
                if not blocked[i]:
                    self.fail = i
                    return (False, plo[i], phi[i])
                mu = self.mu
                if mu < least:
                    least, self.crit = mu, i
                if rate < 0:            # the span the first point (least margin last time) allows
                    tau, rate = max(((min(hz, max((mu - EPS) / (2 * r), MIN_SPAN)), r) for hz, r in self.rates),
                                    key=lambda c: (c[0], -c[1]))
                reach = mu - EPS - rate * tau
                if reach < 0:
                    weak.append(i)
                    if plo[i] > lo:     # lo, hi = max(lo, plo[i]), min(hi, phi[i])
                        lo = plo[i]
                    if phi[i] < hi:
                        hi = phi[i]
                    j += 1
                elif h * CHORDS[-1] <= reach:
                    j = RIM_POINTS
                else:
                    j += bisect_right(CHORDS, reach / h)
        self.fail = -1
        self.rim = (t - tau, t + tau, tuple(weak))
        return (True, max(lo, t - tau), min(hi, t + tau))


def _intervals(cloud: tuple[Point, float], m: str, criterion: str) -> list[tuple[float, float]]:
    """Maximal time intervals in which one cloud hides the target from missile m."""
    burst, t_burst = cloud
    a, b = t_burst, min(t_burst + CLOUD_LIFE_S, _impact_time(m))
    if burst[2] <= 0 or b <= a:
        return []
    n = max(1, math.ceil((b - a) / STEP_S))
    span = b - a
    cloud_state = _Cloud(burst, t_burst, m, criterion).decide
    last = cloud_state(a)[0]
    points = [a] if last else []
    k = 0
    while k <= n:
        s, _, hi = cloud_state(a + span * k / n)
        if s != last:               # a change between grid times k - 1 and k: bisect it
            lo, up = a + span * (k - 1) / n, a + span * k / n
            for _ in range(BISECTIONS):
                mid = (lo + up) / 2
                if cloud_state(mid)[0] == s:      # mid already in the new state: the change is at or before mid
                    up = mid
                else:
                    lo = mid
            points.append((lo + up) / 2)
            last = s
            s, _, hi = cloud_state(a + span * k / n)
        j = min(n, max(k, int((hi - a) / span * n)))   # the last grid time the state covers
        while j > k and a + span * j / n > hi:
            j -= 1
        while j < n and a + span * (j + 1) / n <= hi:
            j += 1
        k = j + 1
    if last:
        points.append(b)
    return list(zip(points[0::2], points[1::2]))


def _union(intervals: list[tuple[float, float]]) -> tuple[float, int]:
    """Measure of a union of intervals and the number of its maximal pieces."""
    total, count, end = 0.0, 0, -math.inf
    start = None
    for a, b in sorted(intervals):
        if start is None or a > end:
            if start is not None:
                total += end - start
            start, end, count = a, b, count + 1
        else:
            end = max(end, b)
    if start is not None:
        total += end - start
    return total, count


def _exact(x: float) -> Fraction:
    return Fraction(Decimal(f"{x:.{PLACES}f}"))


# --------------------------------------------------------------------------- witness

def _number(bomb: Mapping[str, Any], key: str, lo: float, hi: float, where: str) -> float:
    v = bomb.get(key)
    if v is None:
        raise _Gap(f"witness absent: {where}.{key}")
    if isinstance(v, bool) or not isinstance(v, (Decimal, int)):
        raise _Gap(f"witness malformed: {where}.{key} is not a number")
    if not (Decimal(str(lo)) <= v <= Decimal(str(hi))):
        raise _Gap(f"witness out of range: {where}.{key} not in [{lo}, {hi}]")
    return float(v)


class _Gap(Exception):
    pass


def _bomb(bomb: Any, where: str) -> tuple[str, str, tuple[Point, float]]:
    if not isinstance(bomb, dict):
        raise _Gap(f"witness malformed: {where} is not an object")
    uav, m = bomb.get("uav"), bomb.get("target_missile")
    for key, v, allowed in (("uav", uav, UAVS), ("target_missile", m, MISSILES)):
        if v is None:
            raise _Gap(f"witness absent: {where}.{key}")
        if not isinstance(v, str) or v not in allowed:
            raise _Gap(f"witness malformed: {where}.{key} is not one of {', '.join(allowed)}")
    heading = math.radians(_number(bomb, "heading_deg", 0.0, 360.0, where))
    speed = _number(bomb, "speed_mps", *SPEED_RANGE, where)
    drop = _number(bomb, "drop_time_s", 0.0, MAX_TIME_S, where)
    fuse = _number(bomb, "fuse_time_s", 0.0, MAX_TIME_S, where)
    x0, y0, z0 = UAVS[uav]
    vx, vy = speed * math.cos(heading), speed * math.sin(heading)
    burst = (x0 + vx * (drop + fuse), y0 + vy * (drop + fuse), z0 - G * fuse * fuse / 2)
    return uav, m, (burst, drop + fuse)


def _bombs(data: Mapping[str, Any], q: str) -> list[tuple[str, str, tuple[Point, float]]]:
    key, single, _, most = QUESTIONS[q]
    section = data.get(q)
    if not isinstance(section, dict) or key not in section:
        raise _Gap(f"witness absent: {q}.{key}")
    raw = section[key]
    if single:
        return [_bomb(raw, f"{q}.{key}")]
    if not isinstance(raw, list):
        raise _Gap(f"witness malformed: {q}.{key} is not a list")
    if len(raw) > most:
        raise _Gap(f"witness malformed: {q}.{key} has {len(raw)} bombs, the statement allows at most {most}")
    return [_bomb(b, f"{q}.{key}[{i}]") for i, b in enumerate(raw)]


def _rule_number(bomb: Mapping[str, Any], key: str, where: str) -> Decimal:
    v = bomb.get(key)
    if v is None:
        raise _Gap(f"witness absent: {where}.{key}")
    if isinstance(v, bool) or not isinstance(v, (Decimal, int)) or not Decimal(v).is_finite():
        raise _Gap(f"witness malformed: {where}.{key} is not a number")
    return Decimal(v)


def rule_breaks(data: Mapping[str, Any], q: str) -> dict[str, int]:
    """How often question q's plan breaks each rule of ``RULES`` (exact, order-free).

    Reads only the plan's labels and numbers (``uav``, ``heading_deg``,
    ``speed_mps``, ``drop_time_s``); raises _Gap when they are absent or malformed.
    """
    key, single, _, _ = QUESTIONS[q]
    section = data.get(q)
    if not isinstance(section, dict) or key not in section:
        raise _Gap(f"witness absent: {q}.{key}")
    raw = [section[key]] if single else section[key]
    if not isinstance(raw, list):
        raise _Gap(f"witness malformed: {q}.{key} is not a list")
    if len(raw) > RULE_MAX_BOMBS:
        raise _Gap(f"witness malformed: {q}.{key} has more than {RULE_MAX_BOMBS} bombs")
    lo, hi = (Decimal(str(v)) for v in SPEED_RANGE)
    by_uav: dict[str, list[tuple[Decimal, Decimal, Decimal]]] = {}
    speed = 0
    for i, bomb in enumerate(raw):
        where = f"{q}.{key}" if single else f"{q}.{key}[{i}]"
        if not isinstance(bomb, dict):
            raise _Gap(f"witness malformed: {where} is not an object")
        uav = bomb.get("uav")
        if uav is None:
            raise _Gap(f"witness absent: {where}.uav")
        if not isinstance(uav, str) or uav not in UAVS:
            raise _Gap(f"witness malformed: {where}.uav is not one of {', '.join(UAVS)}")
        v = _rule_number(bomb, "speed_mps", where)
        course = (_rule_number(bomb, "heading_deg", where) % 360, v)   # 360 deg is the heading 0 deg
        by_uav.setdefault(uav, []).append((*course, _rule_number(bomb, "drop_time_s", where)))
        speed += not lo <= v <= hi
    course = sum(len({(h, v) for h, v, _ in rows}) - 1 for rows in by_uav.values())
    spacing = sum(1 for rows in by_uav.values() for a in range(len(rows)) for b in range(a)
                  if abs(rows[a][2] - rows[b][2]) < 1)
    wanted, exact = QUESTION_UAVS[q]
    bombs = 0
    for uav in UAVS:
        n, k = len(by_uav.get(uav, ())), wanted.get(uav, 0)
        bombs += abs(n - k) if exact else max(0, n - k)
    return {"speed": speed, "course": course, "spacing": spacing, "bombs": bombs}


def replay(data: Mapping[str, Any], official: object = None) -> Derived:
    values: dict[str, Fraction] = {}
    gaps: dict[str, str] = {}
    known: dict[tuple, list[tuple[float, float]]] = {}   # the same plan recurs across questions

    def intervals(cloud: tuple[Point, float], m: str, criterion: str) -> list[tuple[float, float]]:
        if (cloud, m, criterion) not in known:
            known[cloud, m, criterion] = _intervals(cloud, m, criterion)
        return known[cloud, m, criterion]

    for q, (_, single, missiles, _) in QUESTIONS.items():
        try:
            breaks = rule_breaks(data, q)
            values.update({f"{q}.rule_breaks.{r}": Fraction(breaks[r]) for r in QUESTION_RULES[q]})
        except _Gap as why:
            gaps.update({f"{q}.rule_breaks.{r}": str(why) for r in QUESTION_RULES[q]})
        try:
            bombs = _bombs(data, q)
        except _Gap as why:
            for c in CRITERIA:
                for pair in _names(q, c).values():
                    gaps.update({n: str(why) for n in pair})
            continue
        for c in CRITERIA:
            names = _names(q, c)
            total, pieces = Fraction(0), 0
            for m in missiles:
                # Q1-Q4 are about M1 only: every cloud counts against M1; in Q5 a cloud
                # counts against the missile it is aimed at (the result3 template's column)
                spans = [iv for _, tm, cloud in bombs if single or q != "q5" or tm == m
                         for iv in intervals(cloud, m, c)]
                measure, count = _union(spans)
                key = "" if single else m
                values[names[key][0]] = _exact(measure)
                values[names[key][1]] = REFERENCE_STEP * count
                total += _exact(measure)
                pieces += count
            if not single:
                values[names["total"][0]] = total
                values[names["total"][1]] = REFERENCE_STEP * pieces
    return Derived(values=values, gaps=gaps)
