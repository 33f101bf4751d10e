from fractions import Fraction

import pytest
from hypothesis import given, strategies as st

from mmverify.scoring.multibo import bo_term, multi_bo

unit = st.fractions(min_value=0, max_value=1, max_denominator=1000)


@given(o=unit, f=unit)
def test_bo_term_bounds(o, f):
    b = bo_term("t", o, f).b
    assert -1 <= b <= 1


@given(f=unit)
def test_baseline_against_itself_scores_one(f):
    assert multi_bo([bo_term("t", f, f), bo_term("u", f, f)]) == 1


def test_gap_closed_and_clip():
    assert bo_term("t", Fraction(1, 2), Fraction(0)).b == Fraction(1, 2)
    assert bo_term("t", Fraction(3, 4), Fraction(1, 2)).b == Fraction(1, 2)
    assert bo_term("t", Fraction(0), Fraction(3, 4)).b == -1          # clipped at -1
    assert bo_term("t", Fraction(1, 4), Fraction(1, 2)).b == Fraction(-1, 2)


def test_baseline_perfect():
    assert bo_term("t", Fraction(1), Fraction(1)).b == 0
    assert bo_term("t", Fraction(99, 100), Fraction(1)).b == -1
    assert bo_term("t", Fraction(99, 100), Fraction(1)).rule == "baseline_perfect"


def test_forced_fail_and_mean():
    terms = [bo_term("a", Fraction(1), Fraction(1, 2)), bo_term("b", Fraction(1), Fraction(1, 2), forced_fail=True)]
    assert terms[1].b == -1
    assert multi_bo(terms) == 1 + (1 + -1) / Fraction(2)


def test_rejects_out_of_range_and_empty():
    with pytest.raises(ValueError):
        bo_term("t", Fraction(2), Fraction(0))
    with pytest.raises(ValueError):
        multi_bo([])
