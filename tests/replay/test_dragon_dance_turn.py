"""Q4 of the bench dragon (CUMCM 2024 A): the S-curve's length over the radius ratio."""
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mmverify.replay import dragon_dance, dragon_dance_geometry as geo
from mmverify.replay.dragon_dance_geometry import shortest_turn_length, turn_length

DATA = Path(__file__).resolve().parents[2] / "anchors" / "cumcm-2024-a-dragon-dance" / "data"
BASE = 13.621244906821119
RATIO_GRID = tuple(2.0 ** (e / 16) for e in range(-96, 97))     # k = 1/64 .. 64, k = 2 on it


def closed_form(pitch=geo.PITCH_Q4, radius=geo.TURN_RADIUS):
    t = pitch / (geo.TWO_PI * radius)          # tan(psi)
    return radius * math.sqrt(1 + t * t) * (math.pi - 2 * math.atan(t))


def arc_points(turn, samples=4001):
    """Points of arc 1 and arc 2, sampled along their sweeps."""
    sweep = turn.l1 / turn.r1
    phi = np.linspace(0.0, sweep, samples)
    out = []
    for c, r, a0, sense in ((turn.c1, turn.r1, turn.a1, turn.o1), (turn.c2, turn.r2, turn.a2, -turn.o1)):
        a = a0 + sense * phi
        out.append((c[0] + r * np.cos(a), c[1] + r * np.sin(a)))
    return out


def test_base_length_at_ratio_two():
    assert turn_length(2.0) == BASE
    assert turn_length(2) == BASE
    assert turn_length(2.0) == geo._Turn().length


def test_base_length_is_the_stored_statement_quantity():
    official = dragon_dance.load_official(str(DATA))
    assert turn_length(2.0) == official["q4.base_turn_length_m"]


def test_base_length_is_the_recomputed_statement_quantity():
    quantities = geo.statement_quantities()
    assert turn_length(2.0) == quantities["q4.base_turn_length_m"]
    assert quantities["q4.shortest_turn_length_m"] == pytest.approx(turn_length(2.0), abs=1e-12)


def test_length_over_the_ratio_grid_is_constant():
    assert 2.0 in RATIO_GRID and min(RATIO_GRID) < 0.02 and max(RATIO_GRID) > 60
    lengths = np.array([turn_length(k) for k in RATIO_GRID])
    assert np.all(np.abs(lengths - closed_form()) < 1e-12)
    assert np.ptp(lengths) < 1e-12


def test_shortest_turn_is_the_base_length():
    assert min(turn_length(k) for k in RATIO_GRID) == pytest.approx(BASE, abs=1e-12)
    shortest = shortest_turn_length()
    assert shortest == min(turn_length(k) for k in geo.Q4_RATIOS)
    assert shortest == pytest.approx(BASE, abs=1e-12) and shortest <= BASE


def test_radius_sum_and_sweep_do_not_depend_on_the_ratio():
    psi = math.atan(geo.PITCH_Q4 / (geo.TWO_PI * geo.TURN_RADIUS))
    for k in (0.1, 0.5, 1.0, 2.0, 3.0, 10.0):
        turn = geo._Turn(ratio=k)
        assert turn.r1 == pytest.approx(k * turn.r2, rel=1e-12)
        assert turn.r1 + turn.r2 == pytest.approx(geo.TURN_RADIUS / math.cos(psi), rel=1e-12)
        assert turn.l1 / turn.r1 == pytest.approx(math.pi - 2 * psi, rel=1e-12)


def test_joint_lies_on_the_diameter_through_the_entry():
    for k in (0.25, 2.0, 7.0):
        turn = geo._Turn(ratio=k)
        x, y, *_ = turn.pos(np.array([0.0, turn.l1, turn.length]))
        s = turn.r1 + turn.r2
        assert x[1] == pytest.approx(x[0] * (turn.r2 - turn.r1) / s, abs=1e-9)
        assert y[1] == pytest.approx(y[0] * (turn.r2 - turn.r1) / s, abs=1e-9)
        assert (x[2], y[2]) == pytest.approx((-x[0], -y[0]), abs=1e-9)


def test_both_arcs_stay_inside_the_turn_around_circle():
    for k in RATIO_GRID[::8]:
        for x, y in arc_points(geo._Turn(ratio=k)):
            assert np.max(np.hypot(x, y)) <= geo.TURN_RADIUS + 1e-9


def test_arcs_are_tangent_at_every_junction():
    turn = geo._Turn(ratio=3.0)
    eps = 1e-7
    for q in (0.0, turn.l1, turn.length):
        _, _, tx0, ty0, _ = turn.pos(np.array([q - eps]))
        _, _, tx1, ty1, _ = turn.pos(np.array([q + eps]))
        assert float(tx0[0] * tx1[0] + ty0[0] * ty1[0]) > 1 - 1e-9


@settings(max_examples=40, deadline=None)
@given(k=st.floats(min_value=0.01, max_value=100.0),
       pitch=st.floats(min_value=0.3, max_value=5.0),
       radius=st.floats(min_value=1.0, max_value=10.0))
def test_length_is_the_closed_form_for_any_ratio(k, pitch, radius):
    assert turn_length(k, pitch, radius) == pytest.approx(closed_form(pitch, radius), rel=1e-11)


def test_length_grows_with_the_entry_radius():
    lengths = [turn_length(2.0, geo.PITCH_Q4, r) for r in (2.0, 3.0, 4.0, 4.5)]
    assert lengths == sorted(lengths) and lengths[0] < lengths[-1]


@pytest.mark.parametrize("bad", [0, 0.0, -1.0, float("nan"), float("inf"), True, "2"])
def test_bad_ratio_is_refused(bad):
    with pytest.raises(ValueError):
        turn_length(bad)
