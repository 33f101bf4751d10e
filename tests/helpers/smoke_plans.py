"""Seeded random smoke-screen witnesses for the replay's regression table.

Most bombs are the oracle's plans moved a little (so clouds still shield, and
interval edges land at new places); some are drawn at random over the whole
plan space (late bursts cut off by impact, bursts underground, clouds that
never come near a sight line). Values carry 3 decimals, as artifacts print them.
"""
from __future__ import annotations

import json
import random
from decimal import Decimal
from pathlib import Path

# the reference's own plans (the oracle before its plans were repaired to keep the statement's rules),
# frozen so that the seeded plans and the regression table do not move with the oracle
ORACLE = Path(__file__).resolve().parent / "smoke_reference_plans.json"
FIELDS = ("uav", "target_missile", "heading_deg", "speed_mps", "drop_time_s", "fuse_time_s")
UAVS = ("FY1", "FY2", "FY3", "FY4", "FY5")
MISSILES = ("M1", "M2", "M3")


def _d(x: float) -> Decimal:
    return Decimal(f"{x:.3f}")


def _moved(rng: random.Random, b: dict) -> dict:
    s = rng.choice((0.05, 0.2, 0.5))
    h = (float(b["heading_deg"]) + rng.gauss(0, 2 * s)) % 360
    return {"uav": b["uav"], "target_missile": b["target_missile"], "heading_deg": _d(min(h, 359.999)),
            "speed_mps": _d(min(140, max(70, float(b["speed_mps"]) + rng.gauss(0, 8 * s)))),
            "drop_time_s": _d(max(0.0, float(b["drop_time_s"]) + rng.gauss(0, 1.5 * s))),
            "fuse_time_s": _d(max(0.0, float(b["fuse_time_s"]) + rng.gauss(0, s)))}


def _drawn(rng: random.Random, uav: str | None = None, missile: str | None = None) -> dict:
    return {"uav": uav or rng.choice(UAVS), "target_missile": missile or rng.choice(MISSILES),
            "heading_deg": _d(rng.uniform(0, 359.999)), "speed_mps": _d(rng.uniform(70, 140)),
            "drop_time_s": _d(rng.uniform(0, 60)), "fuse_time_s": _d(rng.uniform(0, 20))}


def random_plan(seed: int) -> dict:
    """The strategy sections q1-q5 of one artifact, with Decimal numbers."""
    rng = random.Random(seed)
    oracle = json.loads(ORACLE.read_text(encoding="utf-8"), parse_float=Decimal)
    out = {}
    for q in ("q1", "q2", "q3", "q4", "q5"):
        single = "strategy" in oracle[q]
        bombs = [oracle[q]["strategy"]] if single else list(oracle[q]["strategies"])
        bombs = [{k: b[k] for k in FIELDS} for b in bombs]
        moved = [_moved(rng, b) if rng.random() < 0.85 else _drawn(rng, "FY1" if q != "q5" else None,
                                                                  "M1" if q != "q5" else None)
                 for b in bombs]
        if not single:
            most = 15 if q == "q5" else 3
            while len(moved) < most and rng.random() < 0.4:
                moved.append(_drawn(rng, None, None if q == "q5" else "M1"))
        out[q] = {"strategy": moved[0]} if single else {"strategies": moved}
    return out
