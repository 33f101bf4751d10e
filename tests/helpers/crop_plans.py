"""Seeded perturbations of the crop-planting oracle's plans, for the replay's regression table.

Each seed picks a few edits of both q1 plans: rows dropped or repeated, areas
moved at the 6th decimal (up: a plot may overflow; down: a row may fall under
the 0.3 mu minimum), areas scaled (more surplus, less production), a crop moved
to a neighbouring year or plot, a row with a malformed area or an unknown plot,
a plan left out. ``record(seed)`` is what the table holds for a seed: the
replay's derived values and gaps, and per plan its full list of violations and
its profit under both surplus rules (infeasible plans included).

    python -m tests.helpers.crop_plans     # rewrite the table (only for an intended change)
"""
from __future__ import annotations

import copy
import csv
import hashlib
import json
import os
import random
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ANCHOR = ROOT / "anchors" / "cumcm-2024-c-crop-planting"
TABLE = Path(__file__).resolve().parent / "crop_planting_table.json"
SEEDS = tuple(range(1, 31))
UNIT = Decimal("0.000001")
with open(ANCHOR / "data" / "plots.csv", encoding="utf-8", newline="") as _fh:
    PLOT_AREA = {r["plot"]: Decimal(r["area_mu"]) for r in csv.DictReader(_fh)}


def oracle() -> dict:
    from mmverify.reading.artifact import parse_bytes
    return parse_bytes((ANCHOR / "oracle.json").read_bytes()).data


def _edit(rng: random.Random, plan: list[dict]) -> str:
    kind = rng.choice(("drop", "repeat", "up6", "down6", "scale", "shift_year", "swap_plot",
                       "small", "int_area", "up6", "down6"))
    k = rng.randrange(len(plan))
    row = plan[k]
    cap = PLOT_AREA[row["plot"]]
    if kind == "drop":
        del plan[k]
    elif kind == "repeat":
        plan.append(dict(row))
    elif kind == "up6":
        row["area_mu"] = min(cap, Decimal(row["area_mu"]) + UNIT * rng.randint(1, 9))
    elif kind == "down6":
        row["area_mu"] = Decimal(row["area_mu"]) - UNIT * rng.randint(1, 9)
    elif kind == "scale":
        row["area_mu"] = min(cap, (Decimal(row["area_mu"]) * Decimal(rng.choice(("0.5", "0.75", "1.25", "1.5")))
                                   ).quantize(UNIT))
    elif kind == "shift_year":
        row["year"] = min(2030, max(2024, int(row["year"]) + rng.choice((-1, 1))))
    elif kind == "swap_plot":
        row["plot"] = rng.choice([p for p, a in PLOT_AREA.items() if a >= Decimal(row["area_mu"])])
    elif kind == "small":
        row["area_mu"] = Decimal(rng.choice(("0.299999", "0.3", "0.1")))
    elif kind == "int_area":
        row["area_mu"] = int(Decimal(row["area_mu"])) or 1
    return kind


def _malform(rng: random.Random, plan: list[dict]) -> str:
    kind = rng.choice(("seven_places", "negative", "unknown_plot", "year_2031", "float_area"))
    row = plan[rng.randrange(len(plan))]
    if kind == "seven_places":
        row["area_mu"] = Decimal(row["area_mu"]) + Decimal("0.0000001")
    elif kind == "negative":
        row["area_mu"] = -Decimal(row["area_mu"])
    elif kind == "unknown_plot":
        row["plot"] = "Z9"
    elif kind == "year_2031":
        row["year"] = 2031
    else:
        row["area_mu"] = float(row["area_mu"])
    return kind


def perturbed(seed: int) -> tuple[dict, list[str]]:
    """The oracle with both q1 plans edited by ``seed``, and the edits made."""
    rng = random.Random(seed)
    data = copy.deepcopy(oracle())
    q1 = data["experiment_result"]["q1"]
    edits = []
    for field_ in ("waste_plan", "discount_plan"):
        r = rng.random()
        if r < 0.06:
            del q1[field_]
            edits.append(f"{field_}: absent")
            continue
        plan = q1[field_]
        if r < 0.16:
            edits.append(f"{field_}: {_malform(rng, plan)}")
        for _ in range(rng.choice((0, 1, 1, 2, 3, 8))):
            edits.append(f"{field_}: {_edit(rng, plan)}")
    return data, edits


def digest(data: dict) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=repr).encode()).hexdigest()[:16]


def record(data: dict) -> dict:
    """The regression row of one artifact: replay output, violations and both profits per plan."""
    from mmverify.replay import crop_planting as cp
    official = _official()
    derived = cp.replay(data, official)
    row: dict = {"values": {k: str(v) for k, v in sorted(derived.values.items())},
                 "gaps": dict(sorted(derived.gaps.items())), "plans": {}}
    for field_ in cp.PLAN_FIELD.values():
        raw = data["experiment_result"]["q1"].get(field_)
        try:
            plan = cp.parse_plan(raw, official)
        except cp.Malformed as exc:
            row["plans"][field_] = {"malformed": str(exc)}
            continue
        row["plans"][field_] = {"violations": cp.witness_violations(raw, official),
                                "profit": {case: str(cp.plan_profit(plan, official, case)) for case in cp.CASES}}
    return row


_OFFICIAL: list = []


def _official():
    if not _OFFICIAL:
        from mmverify.replay import crop_planting as cp
        _OFFICIAL.append(cp.load_official(os.path.join(ANCHOR, "data")))
    return _OFFICIAL[0]


def write_table() -> None:
    table = {"oracle": record(oracle()), "seeds": []}
    for seed in SEEDS:
        data, edits = perturbed(seed)
        table["seeds"].append({"seed": seed, "edits": edits, "digest": digest(data), **record(data)})
    TABLE.write_text(json.dumps(table, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    write_table()
