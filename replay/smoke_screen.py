"""Replay of CUMCM 2025 A (smoke screen): shielded time from each bomb's plan.

Witness (per bomb, the strategy fields of q1-q5): ``uav`` (FY1-FY5),
``target_missile`` (M1-M3), ``heading_deg`` (counter-clockwise from +x),
``speed_mps``, ``drop_time_s`` (after the task is received) and
``fuse_time_s``. Everything else comes from the statement: missiles fly at
300 m/s straight at the decoy (origin); a UAV flies level from its start at
constant heading and speed; the bomb keeps the UAV's horizontal velocity and
falls under g = 9.8 m/s^2 until the fuse fires; the cloud (radius 10 m) sinks
at 3 m/s and works for 20 s after the burst, and only while its missile is
still in flight; the real target is the cylinder of radius 7 m and height
10 m on (0, 200, 0). A bomb whose fuse fires at or below the ground makes no
cloud.

A cloud blocks a line of sight when the segment from the missile to a target
point passes within 10 m of the cloud centre. Two criteria are replayed:

* ``sampled`` (the published reference's): the target counts as hidden when
  at least a quarter of 27 fixed target points (the axis at z = 0, 5, 10 and
  8 points every 45 deg on each of the rims z = 0, 10 and the ring z = 5) are
  blocked, i.e. 7 of 27.
* ``full_target`` (the statement's strict reading, 避免来袭导弹发现真目标):
  every point of the cylinder is blocked. The set of points whose segment to
  the missile meets a ball is convex, so the solid cylinder is hidden exactly
  when both rims are; the rims are sampled every 2 deg (180 points each).

Shielding is decided per cloud, as in the reference: a question's shielded
time for a missile is the measure of the union of the intervals in which one
of the clouds aimed at it hides the target. Intervals are found on a grid of
``STEP_S`` inside each cloud's working window, each change of state refined
by bisection to below 1e-9 s; an interval shorter than the grid step can be
missed (at most ``STEP_S`` each). Values are rounded to ``PLACES`` decimals.

Besides each duration the replay derives its *grid slack*: 0.1 s (the
reference's time step) times the number of maximal shielded intervals. The
reference counts instants on a 0.1 s grid; an interval of length L holds
between L/0.1 - 1 and L/0.1 + 1 grid instants, so its count times 0.1 s is
within 0.1 s of L, and a union of k intervals within k * 0.1 s.
"""
from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction
from typing import Any, Mapping

import numpy as np

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


DERIVED = tuple(n for q in QUESTIONS for c in CRITERIA for pair in _names(q, c).values() for n in pair)


def load_official(data_dir: str) -> None:
    """Statement-only task: every constant is in the statement."""
    return None


# --------------------------------------------------------------------------- geometry

def _target_points() -> dict[str, np.ndarray]:
    x0, y0, _ = TARGET_BASE
    sampled = [(x0, y0, TARGET_HEIGHT / 2), (x0, y0, 0.0), (x0, y0, TARGET_HEIGHT)]
    for z in (0.0, TARGET_HEIGHT, TARGET_HEIGHT / 2):
        for k in range(8):
            th = 2 * math.pi * k / 8
            sampled.append((x0 + TARGET_RADIUS * math.cos(th), y0 + TARGET_RADIUS * math.sin(th), z))
    th = 2 * np.pi * np.arange(RIM_POINTS) / RIM_POINTS
    rims = [np.column_stack([x0 + TARGET_RADIUS * np.cos(th), y0 + TARGET_RADIUS * np.sin(th),
                             np.full(RIM_POINTS, z)]) for z in (0.0, TARGET_HEIGHT)]
    return {"sampled": np.array(sampled), "full_target": np.vstack(rims)}


POINTS = _target_points()
TARGET_CENTRE = np.array([TARGET_BASE[0], TARGET_BASE[1], TARGET_HEIGHT / 2])
# every target point lies within this distance of the centre, so a cloud farther than
# CLOUD_RADIUS + REACH from the sight line to the centre blocks no sight line at all
REACH = math.hypot(TARGET_RADIUS, TARGET_HEIGHT / 2) + 1e-6


def _impact_time(m: str) -> float:
    return math.sqrt(sum(c * c for c in MISSILES[m])) / MISSILE_SPEED


def _missile_at(m: str, t: np.ndarray) -> np.ndarray:
    p = np.array(MISSILES[m])
    d = -p / np.linalg.norm(p)
    return p[None, :] + MISSILE_SPEED * t[:, None] * d[None, :]


def _seg_dist(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Distance from c to the segment a-b (broadcast over leading axes)."""
    ab = b - a
    ac = c - a
    h = np.clip((ac * ab).sum(-1) / np.maximum((ab * ab).sum(-1), 1e-12), 0.0, 1.0)
    return np.linalg.norm(c - (a + h[..., None] * ab), axis=-1)


def _hidden(cloud: tuple[np.ndarray, float], m: str, t: np.ndarray, criterion: str) -> np.ndarray:
    """Whether the cloud hides the target from missile m at times t (inside its window)."""
    burst, t_burst = cloud
    mis = _missile_at(m, t)
    centre = burst[None, :] - np.outer(t - t_burst, [0.0, 0.0, SINK_SPEED])
    out = np.zeros(len(t), dtype=bool)
    near = _seg_dist(mis, np.broadcast_to(TARGET_CENTRE, mis.shape), centre) <= CLOUD_RADIUS + REACH
    idx = np.flatnonzero(near)
    pts = POINTS[criterion]
    for lo in range(0, len(idx), 256):
        sel = idx[lo:lo + 256]
        d = _seg_dist(mis[sel][:, None, :], pts[None, :, :], centre[sel][:, None, :])
        blocked = d <= CLOUD_RADIUS
        out[sel] = blocked.all(1) if criterion == "full_target" else blocked.sum(1) >= SAMPLED_MIN_BLOCKED
    return out


def _intervals(cloud: tuple[np.ndarray, float], m: str, criterion: str) -> list[tuple[float, float]]:
    """Maximal time intervals in which one cloud hides the target from missile m."""
    burst, t_burst = cloud
    a, b = t_burst, min(t_burst + CLOUD_LIFE_S, _impact_time(m))
    if burst[2] <= 0 or b <= a:
        return []
    n = max(1, math.ceil((b - a) / STEP_S))
    t = a + (b - a) * np.arange(n + 1) / n
    s = _hidden(cloud, m, t, criterion)
    edges = np.flatnonzero(s[1:] != s[:-1])
    lo, hi = t[edges].copy(), t[edges + 1].copy()
    rising = ~s[edges]
    for _ in range(BISECTIONS):
        if not len(edges):
            break
        mid = (lo + hi) / 2
        sm = _hidden(cloud, m, mid, criterion)
        after = sm == rising          # mid already in the new state: the edge is at or before mid
        hi = np.where(after, mid, hi)
        lo = np.where(after, lo, mid)
    points = ([a] if s[0] else []) + [float(x) for x in (lo + hi) / 2] + ([b] if s[-1] else [])
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


def _bomb(bomb: Any, where: str) -> tuple[str, str, tuple[np.ndarray, float]]:
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
    burst = np.array([x0 + vx * (drop + fuse), y0 + vy * (drop + fuse), z0 - G * fuse * fuse / 2])
    return uav, m, (burst, drop + fuse)


def _bombs(data: Mapping[str, Any], q: str) -> list[tuple[str, str, tuple[np.ndarray, float]]]:
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


def replay(data: Mapping[str, Any], official: object = None) -> Derived:
    values: dict[str, Fraction] = {}
    gaps: dict[str, str] = {}
    for q, (_, single, missiles, _) in QUESTIONS.items():
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
                         for iv in _intervals(cloud, m, c)]
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
