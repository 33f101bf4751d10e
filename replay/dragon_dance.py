"""Replay of CUMCM 2024 A (bench dragon): every number from the statement's geometry.

Geometry (statement): 223 benches, head board 3.41 m, body/tail boards 2.20 m,
width 0.30 m, handle holes 0.275 m from each board end, so consecutive handle
centres are 2.86 m (head) and 1.65 m (body, tail) apart; 224 handles. Coiling in
runs clockwise on the Archimedean spiral r = b*theta, b = pitch/(2*pi), point
(b*theta*cos(theta), b*theta*sin(theta)); point A on turn 16 is theta = 32*pi
(r = 8.8 m at pitch 0.55 m); the head's front handle moves at 1 m/s.

Method (floats, numpy, fixed sizes from the statement only; the simulation is
in :mod:`dragon_dance_geometry`):

* head: its arc length along the spiral, s(theta) = b/2*(theta*sqrt(1+theta^2)
  + asinh(theta)), inverted by 80 bisection steps (to machine precision);
* handle recursion: handle i+1 is the first point behind handle i on the path
  at chord distance 2.86 / 1.65 m, by safeguarded Newton (6 steps, residual
  below 1e-12 m^2, then 60 bisection steps wherever Newton did not converge);
* speeds: exact rigid-bar relation v[i+1] = v[i] * (D.T[i]) / (D.T[i+1]),
  D = handle i - handle i+1, T the unit direction of motion (no differencing);
* collision: every bench is a 2*hl x 0.30 m rectangle (hl = half the handle
  spacing + 0.275 m); the clearance of two benches is their signed separating-
  axis gap (> 0 apart, < 0 overlapping); the dragon's clearance is the least
  gap between the innermost INNER benches and every non-adjacent bench among
  the first WINDOW handles (the innermost benches are where the spiral is
  tightest; tests check the restriction against all 24,753 pairs);
* turn-around (Q4/Q5): pitch 1.7 m, turn circle radius 4.5 m; the S-curve of
  two arcs (radius ratio 2:1) tangent to the coiling-in spiral at r = 4.5 m,
  to each other, and to the centrally symmetric coiling-out spiral.

Every derived value is a statement quantity: none depends on an artifact. They
are computed once by :func:`dragon_dance_geometry.statement_quantities` (about
8 s of one core) and kept in ``data/statement_reference.json``; a test
recomputes them. So this module, which an artifact's scoring imports, needs
neither numpy nor the simulation, and a replay costs a file read per process.

The claimed minimum pitch (Q3) is checked against the replayed minimum pitch
(gate ``q3.claimed_pitch_feasible_replayed``: claimed >= replayed). That is
the same verdict as simulating the coil-in at the claimed pitch: the least
clearance changes sign once in pitch (a test samples 0.2-1.7 m and the
neighbourhood of the root; below 0.3 m the turns are narrower than a bench is
wide, and the clearance grows with the pitch above the root). A claim rounded
to 6 places within 0.5e-6 m below the true root passes, as it did when the
clearance itself was rounded to 6 places.

Derived values are rounded to documented places (6 for lengths, ratios and
speeds as in the statement, 4 for seconds) and returned as exact Fractions of
that decimal text, so the same bytes in give the same values out.
"""
from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import Any, Mapping

from .base import Derived

TASK_ID = "cumcm-2024-a-dragon-dance"
DERIVED = (
    "q2.terminal_time_s",
    "q3.minimum_pitch_m",
    "q4.base_turn_length_m",
    "q5.max_speed_ratio",
    "q5.max_head_speed_mps",
)
REFERENCE_FILE = "statement_reference.json"
PLACES = {"q2.terminal_time_s": 4, "q3.minimum_pitch_m": 6, "q4.base_turn_length_m": 6,
          "q5.max_speed_ratio": 6, "q5.max_head_speed_mps": 6}


def load_official(data_dir: str) -> Mapping[str, float]:
    """The statement quantities, read from ``data/statement_reference.json``
    (the output of :func:`dragon_dance_geometry.statement_quantities`)."""
    import json
    import os

    with open(os.path.join(data_dir, REFERENCE_FILE), encoding="utf-8") as fh:
        raw = json.load(fh)
    return {name: float(raw["values"][name]) for name in DERIVED if name in raw["values"]}


def exact(name: str, x: float) -> Fraction:
    """``x`` rounded to the documented places of ``name``, as an exact Fraction."""
    return Fraction(Decimal(f"{x:.{PLACES[name]}f}"))


def replay(data: Mapping[str, Any], official: Mapping[str, float]) -> Derived:
    """The statement quantities (the artifact is not read)."""
    return Derived({name: exact(name, official[name]) for name in DERIVED if name in official}, {})
