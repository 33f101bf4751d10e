"""Replay of CUMCM 2023 A (heliostat field): annual optical efficiency and output.

The model, its witness, its rules and its rounding: `docs/replays.md`.
"""
from __future__ import annotations

import csv
import math
import os
from collections import Counter
from decimal import Decimal
from fractions import Fraction
from typing import Any, Mapping, Sequence

from .base import Derived

TASK_ID = "cumcm-2023-a-heliostat-field"

# a layout of 3,000 6 m mirrors replays in 4-5 s CPU, one of 8,300 2 m mirrors
# in about 3 s: a cap of 60 s keeps an honest layout from timing out on a
# loaded machine (a time-out leaves its claims unwitnessed)
TIME_CAP_S = 60.0

# The statement's layout rules as bounds on the derived numbers (the task's
# hard gates ``q3.layout_*`` read the same bounds; a contract test holds them
# equal). The optics of a layout that breaks one are not computed: such a
# layout is infeasible whatever its optics, and computing them costs seconds.
RULES = {"min_side_m": (2, None), "max_side_m": (None, 8), "min_width_minus_height_m": (0, None),
         "min_mount_m": (2, None), "max_mount_m": (None, 6), "min_ground_clearance_m": (0, None),
         "min_spacing_margin_m": (0, None), "min_tower_distance_m": (100, None), "max_field_radius_m": (None, 350)}

FIELD_RADIUS_M = 350
MAX_MIRRORS = 9100         # hexagonal packing at the least spacing (2 m + 5 m) fills 384,845 m2 with < 9,070
COORD_BOUND = Decimal(10000)
Q1_SIZE, Q1_MOUNT = 6.0, 4.0

OPTICS = ("annual_optical_efficiency", "annual_cosine_efficiency", "annual_shadow_blocking_efficiency",
          "annual_truncation_efficiency", "annual_atmospheric_efficiency", "annual_thermal_power_mw",
          "unit_area_power_kw_m2")
LAYOUT = ("mirror_count", "mirror_area_m2", "min_side_m", "max_side_m", "min_width_minus_height_m",
          "min_mount_m", "max_mount_m", "min_ground_clearance_m", "min_spacing_margin_m",
          "min_tower_distance_m", "max_field_radius_m")

# Q1's field is the attachment's, so its values depend on no artifact; but the
# statement leaves modelling choices open (the tower's body, the receiver test,
# the sun's disc, surface sampling) that move published values by several per
# cent, so the replay refutes a Q1 claim beyond its written tolerance and does
# not decide one within it (no STATEMENT names: closeness to the panel grades it)
DERIVED = tuple(f"q1.{n}" for n in OPTICS) + tuple(f"{q}.{n}" for q in ("q2", "q3") for n in OPTICS + LAYOUT)

EFF_PLACES = 6
PLACES = {"annual_thermal_power_mw": 4, "unit_area_power_kw_m2": 6, "mirror_area_m2": 4,
          "min_spacing_margin_m": 4, "min_tower_distance_m": 4, "max_field_radius_m": 4}


def _rounded(x: float, places: int) -> Fraction:
    return Fraction(Decimal(f"{x:.{places}f}")) + 0


def _number(v: Any) -> Decimal | None:
    """A finite JSON number (never a bool), else None."""
    if isinstance(v, bool) or not isinstance(v, (Decimal, int, float)):
        return None
    d = Decimal(v)
    return d if d.is_finite() else None


def _optics_values(q: str, a: Any) -> dict[str, Fraction]:
    out = {f"{q}.annual_{k}_efficiency": _rounded(getattr(a, k), EFF_PLACES)
           for k in ("optical", "cosine", "shadow_blocking", "truncation", "atmospheric")}
    out[f"{q}.annual_thermal_power_mw"] = _rounded(a.power_mw, PLACES["annual_thermal_power_mw"])
    out[f"{q}.unit_area_power_kw_m2"] = _rounded(a.unit_power_kw_m2, PLACES["unit_area_power_kw_m2"])
    return out


# ------------------------------------------------------------------ witness

def _design(data: Mapping[str, Any], index: int) -> Any:
    rep = data.get("reproduced") if isinstance(data, dict) else None
    ds = rep.get("design_summary") if isinstance(rep, dict) else None
    if not isinstance(ds, list) or len(ds) <= index or not isinstance(ds[index], dict):
        return None
    return ds[index]


def _layout(design: Mapping[str, Any]) -> tuple[list[tuple[Decimal, ...]] | None, tuple[Decimal, Decimal] | None, str | None]:
    """Witness rows as (x, y, width, height, mount) and the tower, or why not."""
    raw = design.get("heliostats")
    if raw is None:
        return None, None, "witness absent"
    if not isinstance(raw, list) or not raw:
        return None, None, "witness malformed: heliostats is not a non-empty list"
    if len(raw) > MAX_MIRRORS:
        return None, None, f"witness malformed: more than {MAX_MIRRORS} mirrors (no layout can keep the spacing rule)"
    tower = design.get("tower_xy")
    if not isinstance(tower, list) or len(tower) != 2 or any(_number(v) is None for v in tower):
        return None, None, "witness malformed: tower_xy is not [x, y]"
    txy = (_number(tower[0]), _number(tower[1]))
    common = None
    rows: list[tuple[Decimal, ...]] = []
    for k, row in enumerate(raw):
        if not isinstance(row, list) or len(row) not in (2, 5):
            return None, None, f"witness malformed: heliostats[{k}] is not [x, y] or [x, y, width, height, mount]"
        nums = [_number(v) for v in row]
        if any(v is None for v in nums):
            return None, None, f"witness malformed: heliostats[{k}] holds a value that is not a finite number"
        if len(nums) == 2:
            if common is None:
                common = [_number(design.get(key)) for key in
                          ("mirror_width_m", "mirror_height_m", "installation_height_m")]
                if any(v is None for v in common):
                    return None, None, (f"witness malformed: heliostats[{k}] gives no size and the design's "
                                        "mirror_width_m / mirror_height_m / installation_height_m are not all numbers")
            nums = nums + common
        if any(abs(v) > COORD_BOUND for v in nums):
            return None, None, f"witness malformed: heliostats[{k}] has a value beyond {COORD_BOUND} m"
        rows.append(tuple(nums))
    return rows, txy, None


GEOMETRY = ("min_tower_distance_m", "max_field_radius_m", "min_spacing_margin_m")   # the rules numpy measures


def _rules(q: str, rows: list[tuple[Decimal, ...]], tower: tuple[Decimal, Decimal], values: dict, gaps: dict,
           stored: Mapping[str, Fraction] | None = None) -> None:
    """The statement's rules as numbers; the ``GEOMETRY`` ones from ``stored``
    when the layout's values are stored (see :meth:`Official.stored`)."""
    values[f"{q}.mirror_count"] = Fraction(len(rows))
    sizes = Counter((w, h) for _, _, w, h, _ in rows)      # exact, and one product per distinct size
    values[f"{q}.mirror_area_m2"] = sum((n * Fraction(w) * Fraction(h) for (w, h), n in sizes.items()), Fraction(0))
    values[f"{q}.min_side_m"] = Fraction(min(min(w, h) for _, _, w, h, _ in rows))
    values[f"{q}.max_side_m"] = Fraction(max(max(w, h) for _, _, w, h, _ in rows))
    values[f"{q}.min_width_minus_height_m"] = Fraction(min(w - h for _, _, w, h, _ in rows))
    values[f"{q}.min_mount_m"] = Fraction(min(z for *_, z in rows))
    values[f"{q}.max_mount_m"] = Fraction(max(z for *_, z in rows))
    values[f"{q}.min_ground_clearance_m"] = Fraction(min(z - h / 2 for _, _, _, h, z in rows))
    if stored is not None:
        values.update({f"{q}.{n}": stored[f"{q}.{n}"] for n in GEOMETRY})
        return
    _geometry(q, rows, tower, values, gaps)


def _geometry(q: str, rows: list[tuple[Decimal, ...]], tower: tuple[Decimal, Decimal], values: dict,
              gaps: dict) -> None:
    import numpy as np

    from .heliostat_optics import _pairs

    arr = np.array([[float(v) for v in r] for r in rows])
    xy, width = arr[:, :2], arr[:, 2]
    tx, ty = float(tower[0]), float(tower[1])
    values[f"{q}.min_tower_distance_m"] = _rounded(float(np.hypot(xy[:, 0] - tx, xy[:, 1] - ty).min()),
                                                   PLACES["min_tower_distance_m"])
    values[f"{q}.max_field_radius_m"] = _rounded(float(np.hypot(xy[:, 0], xy[:, 1]).max()),
                                                 PLACES["max_field_radius_m"])
    if len(rows) < 2:
        gaps[f"{q}.min_spacing_margin_m"] = "one mirror: no pair"
        return
    reach = max(float(width.max()), 0.0) + 5.0 + 1.0
    centres = np.column_stack([xy, np.zeros(len(xy))])
    i, j = _pairs(centres, reach)
    while not len(i):          # no pair near enough to matter; the nearest pair still gives the minimum
        reach *= 4
        i, j = _pairs(centres, reach)
    margin = np.hypot(*(xy[i] - xy[j]).T) - 5.0 - np.maximum(width[i], width[j])
    values[f"{q}.min_spacing_margin_m"] = _rounded(float(margin.min()), PLACES["min_spacing_margin_m"])


def _broken_rule(q: str, values: Mapping[str, Fraction]) -> str | None:
    """The first statement rule (``RULES``) the layout's numbers break, as the
    reason its optics are not computed; None when it keeps them all."""
    for name, (lo, hi) in RULES.items():
        v = values.get(f"{q}.{name}")
        if v is not None and ((lo is not None and v < lo) or (hi is not None and v > hi)):
            return f"the layout breaks the statement's rule on {name} ({v} outside " \
                   f"[{'-inf' if lo is None else lo}, {'inf' if hi is None else hi}]): its optics are not computed"
    return None


def _optics_problem(rows: list[tuple[Decimal, ...]], tower: tuple[Decimal, Decimal]) -> str | None:
    """Why the optics cannot be computed for these rows (a geometry no mirror
    of any field could have), else None; the statement's rules are gated apart."""
    for k, (x, y, w, h, z) in enumerate(rows):
        if not (0 < w <= 100 and 0 < h <= 100):
            return f"heliostats[{k}]: a side is not in (0, 100] m"
        if not (0 < z < 76):
            return f"heliostats[{k}]: mounting height not in (0, 76) m (below the receiver)"
        if (x - tower[0]) ** 2 + (y - tower[1]) ** 2 < 1:
            return f"heliostats[{k}]: within 1 m of the tower's foot"
    return None


def witness_digest(rows: list[tuple[Decimal, ...]], tower: tuple[Decimal, Decimal]) -> str:
    """sha256 of a layout's canonical text: the tower, then one line per row
    (x, y, width, height, mount after the design's common sizes are filled
    in), every number in one exact canonical form, rows in the witness's
    order. Two witnesses have the same digest exactly when they state the same
    numbers (``6``, ``6.0``, ``6.000`` and ``0.6E+1`` are one number)."""
    import hashlib

    text = "\n".join([",".join(map(_canonical, tower))] + [",".join(map(_canonical, r)) for r in rows]) + "\n"
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def _canonical(v: Decimal) -> str:
    """An exact, unique text of a finite Decimal: its significant digits
    without trailing zeros and its exponent (``150.00`` and ``1.5E+2`` are
    both ``15e1``); no context, so nothing is rounded."""
    sign, digits, exp = v.as_tuple()
    n = len(digits)
    while n > 1 and digits[n - 1] == 0:
        n -= 1
        exp += 1
    if not any(digits[:n]):
        return "0"
    return ("-" if sign else "") + "".join(map(str, digits[:n])) + f"e{exp}"


def compute_design(q: str, rows: list[tuple[Decimal, ...]], tower: tuple[Decimal, Decimal], sun: Any) -> dict[str, Fraction]:
    """A layout's optics (``OPTICS`` names under ``q``), computed (about 3.5-5 s for 3,000 mirrors)."""
    import numpy as np

    from .heliostat_optics import Field, annual

    arr = np.array([[float(v) for v in r] for r in rows])
    field = Field(arr[:, :2], arr[:, 2], arr[:, 3], arr[:, 4], np.array([float(tower[0]), float(tower[1])]))
    return _optics_values(q, annual(field, sun))


def _designed(q: str, index: int, data: Mapping[str, Any], official: "Official", values: dict, gaps: dict) -> None:
    names = [n for n in DERIVED if n.startswith(q + ".")]
    design = _design(data, index)
    where = f"reproduced.design_summary[{index}].heliostats"
    if design is None:
        gaps.update({n: f"witness absent: reproduced.design_summary[{index}]" for n in names})
        return
    rows, tower, why = _layout(design)
    if why:
        gaps.update({n: f"{why}: {where}" for n in names})
        return
    stored = official.stored(q, rows, tower)
    _rules(q, rows, tower, values, gaps, stored)
    why = _optics_problem(rows, tower)
    if why:
        gaps.update({f"{q}.{n}": f"witness malformed: {where}: {why}" for n in OPTICS})
        return
    why = _broken_rule(q, values)
    if why:
        gaps.update({f"{q}.{n}": f"{where}: {why}" for n in OPTICS})
        return
    values.update({f"{q}.{n}": stored[f"{q}.{n}"] for n in OPTICS} if stored is not None
                  else compute_design(q, rows, tower, official.sun()))


# ------------------------------------------------------------------ surface

class Official:
    """The attachment's positions and the sun's 60 instants; Q1's values are
    read from ``Q1_FILE`` where it is stored (a test recomputes them from the
    positions and requires the same decimals), else computed once, on first
    use, and kept (they do not depend on an artifact). ``stored_q3`` maps a
    layout's digest to its optics and ``GEOMETRY`` rules (``Q3_FILE``: the Q3
    layouts the anchors hold), used only for a Q3 witness whose
    ``witness_digest`` is exactly one of them; any other layout is computed."""

    def __init__(self, positions: list[tuple[float, float]] | None,
                 stored_q1: Mapping[str, Fraction] | None = None,
                 stored_q3: Mapping[str, Mapping[str, Fraction]] | None = None):
        import threading

        self.positions = positions
        self._q1: list[dict[str, Fraction]] = [dict(stored_q1)] if stored_q1 else []
        self.stored_q3 = {d: dict(v) for d, v in (stored_q3 or {}).items()}
        self._lock = threading.Lock()
        self._sun: list[Any] = []

    def sun(self) -> Any:
        from .heliostat_optics import sun_instants

        with self._lock:
            if not self._sun:
                self._sun.append(sun_instants())
            return self._sun[0]

    def q1(self) -> dict[str, Fraction]:
        with self._lock:
            if self._q1:
                return dict(self._q1[0])
        values = compute_q1(self.positions, self.sun())
        with self._lock:
            if not self._q1:
                self._q1.append(values)
            return dict(self._q1[0])

    def stored(self, q: str, rows: list[tuple[Decimal, ...]], tower: tuple[Decimal, Decimal]
               ) -> dict[str, Fraction] | None:
        """A Q3 layout's stored optics and ``GEOMETRY`` rules when its digest is
        stored, else None (then computed: :func:`stored_values`)."""
        return self.stored_q3.get(witness_digest(rows, tower)) if q == "q3" and self.stored_q3 else None


def stored_values(q: str, rows: list[tuple[Decimal, ...]], tower: tuple[Decimal, Decimal], sun: Any
                  ) -> dict[str, Fraction]:
    """What ``Q3_FILE`` stores of a layout, computed: its optics and its
    ``GEOMETRY`` rules (a layout of one mirror has no spacing: not stored)."""
    values: dict[str, Fraction] = {}
    gaps: dict[str, str] = {}
    _geometry(q, rows, tower, values, gaps)
    if gaps:
        raise ValueError(f"a stored layout must have every rule: {gaps}")
    return dict(values, **compute_design(q, rows, tower, sun))


def compute_q1(positions: list[tuple[float, float]], sun: Any) -> dict[str, Fraction]:
    """Q1's values from the attachment's positions (about 1.4 s)."""
    import numpy as np

    from .heliostat_optics import Field, annual

    xy = np.array(positions, dtype=float)
    n = len(xy)
    field = Field(xy, np.full(n, Q1_SIZE), np.full(n, Q1_SIZE), np.full(n, Q1_MOUNT), np.zeros(2))
    return _optics_values("q1", annual(field, sun))


Q1_FILE = "q1_replayed.json"


def read_q1(path: str) -> dict[str, Fraction]:
    """``q1_replayed.json``: ``{"values": {name: decimal text}}`` for every Q1 name."""
    import json

    with open(path, encoding="utf-8") as fh:
        raw = json.load(fh)["values"]
    names = {n for n in DERIVED if n.startswith("q1.")}
    if set(raw) != names:
        raise ValueError(f"{path}: names differ from the replay's Q1 names")
    return {n: Fraction(Decimal(v)) for n, v in raw.items()}


def q1_file_text(values: Mapping[str, Fraction]) -> str:
    """The text of ``Q1_FILE`` for ``values`` (exact decimals, sorted names)."""
    import json

    body = {"about": "CUMCM 2023 A, question 1: the replay's values at the attachment's 1,745 positions "
                     "(6 m mirrors at 4 m, the tower at the centre); recomputed and compared by the tests",
            "values": {n: _decimal_text(values[n]) for n in sorted(values)}}
    return json.dumps(body, indent=2, ensure_ascii=False) + "\n"


Q3_FILE = "q3_replayed.json"


def read_q3(path: str) -> dict[str, dict[str, Fraction]]:
    """``q3_replayed.json``: ``{"layouts": [{"artifact": label, "witness_sha256":
    digest, "values": {name: decimal text}}, ...]}``, every Q3 optics and
    ``GEOMETRY`` name in each; returns digest -> values."""
    import json

    with open(path, encoding="utf-8") as fh:
        raw = json.load(fh)
    out: dict[str, dict[str, Fraction]] = {}
    for entry in raw["layouts"]:
        digest, vals = entry["witness_sha256"], entry["values"]
        if not (isinstance(digest, str) and len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)):
            raise ValueError(f"{path}: witness_sha256 is not a sha256 hex digest")
        if set(vals) != {f"q3.{n}" for n in OPTICS + GEOMETRY}:
            raise ValueError(f"{path}: names differ from the replay's Q3 optics and geometry names")
        out[digest] = {n: Fraction(Decimal(v)) for n, v in vals.items()}
    return out


def q3_file_text(layouts: Sequence[tuple[str, str, Mapping[str, Fraction]]]) -> str:
    """The text of ``Q3_FILE`` for ``(artifact label, digest, values)`` of each stored layout."""
    import json

    body = {"about": "CUMCM 2023 A, question 3: the replay's optics and geometric rules of the Q3 layouts the anchors hold "
                     "(reproduced.design_summary[2] of the oracle, and of each panel paper's artifact), used "
                     "only for a witness with exactly that digest (witness_digest); recomputed and compared "
                     "by the tests",
            "layouts": [{"artifact": label, "witness_sha256": digest,
                         "values": {n: _decimal_text(values[n]) for n in sorted(values)}}
                        for label, digest, values in layouts]}
    return json.dumps(body, indent=2, ensure_ascii=False) + "\n"


def distinct_q3_layouts(artifacts: Sequence[tuple[str, Any]]) -> list[tuple[str, str, list, tuple]]:
    """``(label, digest, rows, tower)`` of each distinct Q3 layout among
    ``(label, parsed artifact data)`` (first label kept): what ``Q3_FILE``
    stores for the oracle and each panel paper's artifact."""
    out, seen = [], set()
    for label, data in artifacts:
        layout = design_witness(data, 2)
        digest = witness_digest(*layout) if layout is not None else None
        if digest is not None and digest not in seen:
            seen.add(digest)
            out.append((label, digest, *layout))
    return out


def _decimal_text(v: Fraction) -> str:
    places = max(EFF_PLACES, *PLACES.values())
    return format(Decimal(v.numerator) / Decimal(v.denominator), f".{places}f").rstrip("0").rstrip(".")


def design_witness(data: Mapping[str, Any], index: int) -> tuple[list[tuple[Decimal, ...]], tuple[Decimal, Decimal]] | None:
    """The parsed layout of ``design_summary[index]`` (rows and tower), or None."""
    design = _design(data, index)
    if design is None:
        return None
    rows, tower, why = _layout(design)
    return None if why else (rows, tower)


def read_positions(path: str) -> list[tuple[float, float]]:
    """``heliostat_positions.csv``: header ``x_m,y_m``, then one mirror per row."""
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    if rows[0] != ["x_m", "y_m"]:
        raise ValueError(f"{path}: header is not x_m,y_m")
    out = [(float(a), float(b)) for a, b in rows[1:]]
    if not all(math.isfinite(v) for p in out for v in p):
        raise ValueError(f"{path}: a coordinate is not finite")
    return out


def load_official(data_dir: str) -> Official:
    path = os.path.join(data_dir, "heliostat_positions.csv")
    if not os.path.isfile(path):
        return Official(None)
    stored = os.path.join(data_dir, Q1_FILE)
    stored_q3 = os.path.join(data_dir, Q3_FILE)
    return Official(read_positions(path), read_q1(stored) if os.path.isfile(stored) else None,
                    read_q3(stored_q3) if os.path.isfile(stored_q3) else None)


def replay(data: Mapping[str, Any], official: Official) -> Derived:
    values: dict[str, Fraction] = {}
    gaps: dict[str, str] = {}
    if official.positions is None:
        gaps.update({n: "official positions absent" for n in DERIVED if n.startswith("q1.")})
    else:
        values.update(official.q1())
    _designed("q2", 1, data, official, values, gaps)
    _designed("q3", 2, data, official, values, gaps)
    return Derived(values, gaps)


if __name__ == "__main__":   # python -m mmverify.replay.heliostat DATA_DIR: (re)write Q1_FILE
    import sys

    folder = sys.argv[1]
    fresh = Official(read_positions(os.path.join(folder, "heliostat_positions.csv")))
    with open(os.path.join(folder, Q1_FILE), "w", encoding="utf-8") as out:
        out.write(q1_file_text(fresh.q1()))
