"""Metric kernels: one-sidedness, monotonicity, bounds (property tests) and cases."""
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given, strategies as st

from mmverify.reading.numbers import exact_decimal
from mmverify.scoring.kernels import DIRECTIONS, exact_match, kernel_score

fracs = st.fractions(min_value=-10**6, max_value=10**6, max_denominator=10**6)
pos = st.fractions(min_value=Fraction(1, 10**6), max_value=10**6, max_denominator=10**6)


@given(a=fracs, w=pos, beyond=st.fractions(min_value=0, max_value=10**6, max_denominator=1000))
def test_higher_is_better_scores_one_at_and_beyond_anchor(a, w, beyond):
    assert kernel_score("higher_is_better", a, a, w) == 1
    assert kernel_score("higher_is_better", a + beyond, a, w) == 1


@given(a=fracs, w=pos, beyond=st.fractions(min_value=0, max_value=10**6, max_denominator=1000))
def test_lower_is_better_scores_one_at_and_beyond_anchor(a, w, beyond):
    assert kernel_score("lower_is_better", a, a, w) == 1
    assert kernel_score("lower_is_better", a - beyond, a, w) == 1


@given(a=fracs, w=pos, x1=fracs, x2=fracs)
def test_directional_scores_monotone_towards_anchor(a, w, x1, x2):
    lo, hi = sorted((x1, x2))
    # moving up never hurts a higher-is-better metric, moving down never hurts lower-is-better
    assert kernel_score("higher_is_better", lo, a, w) <= kernel_score("higher_is_better", hi, a, w)
    assert kernel_score("lower_is_better", hi, a, w) <= kernel_score("lower_is_better", lo, a, w)


@given(direction=st.sampled_from(["higher_is_better", "lower_is_better", "target_value"]), a=fracs, w=pos, x=fracs)
def test_every_score_in_unit_interval(direction, a, w, x):
    assert 0 <= kernel_score(direction, x, a, w) <= 1


@given(a=fracs, w=pos, d=st.fractions(min_value=0, max_value=10**6, max_denominator=1000))
def test_target_value_is_two_sided_and_symmetric(a, w, d):
    assert kernel_score("target_value", a + d, a, w) == kernel_score("target_value", a - d, a, w)
    if d > 0:
        assert kernel_score("target_value", a + d, a, w) < 1


def test_linear_fall_over_band():
    # anchor 10, band 2: shortfall 0.5 -> 0.75; shortfall 2 or more -> 0
    assert kernel_score("higher_is_better", Fraction(19, 2), Fraction(10), Fraction(2)) == Fraction(3, 4)
    assert kernel_score("higher_is_better", Fraction(8), Fraction(10), Fraction(2)) == 0
    assert kernel_score("higher_is_better", Fraction(-100), Fraction(10), Fraction(2)) == 0
    assert kernel_score("lower_is_better", Fraction(21, 2), Fraction(10), Fraction(2)) == Fraction(3, 4)
    assert kernel_score("target_value", Fraction(21, 2), Fraction(10), Fraction(2)) == Fraction(3, 4)


def test_exact_value_numbers_and_labels():
    assert exact_match(Fraction(224), Fraction(224)) == 1
    assert exact_match(Fraction(2241, 10), Fraction(224)) == 0
    assert exact_match("  Yes ", "yes") == 1
    assert exact_match("Plan  A", "plan a") == 1
    assert exact_match("no", "yes") == 0
    assert exact_match(Fraction(1), "1") == 0  # a number never equals a label


def test_registry_declares_direction_properties():
    assert DIRECTIONS["higher_is_better"].one_sided and DIRECTIONS["lower_is_better"].one_sided
    assert not DIRECTIONS["target_value"].one_sided
    assert not DIRECTIONS["exact_value"].needs_band


def test_kernel_refuses_missing_band():
    with pytest.raises(ValueError):
        kernel_score("target_value", Fraction(1), Fraction(1), None)


def test_direction_and_ruleset_literals_are_the_registries():
    import json
    from importlib import resources
    from typing import get_args

    from mmverify.commands.score import score
    from mmverify.scoring.kernels import DIRECTIONS, ONE_SIDED, DirectionName
    from mmverify.scoring.rules import DEFAULT_RULESET, RULESETS, Ruleset

    schema = json.loads(resources.files("mmverify.schemas").joinpath("task.schema.json").read_text("utf-8"))
    assert list(get_args(DirectionName)) == list(DIRECTIONS) == schema["$defs"]["metric"]["properties"]["direction"]["enum"]
    assert ONE_SIDED == ("higher_is_better", "lower_is_better")
    rules = next(p for p in score.params if p.name == "ruleset")
    assert list(get_args(Ruleset)) == list(RULESETS) == list(rules.type.choices)
    assert DEFAULT_RULESET in RULESETS and rules.default == DEFAULT_RULESET


@given(x=fracs, a=fracs, w=pos, direction=st.sampled_from(sorted(DIRECTIONS)))
def test_kernel_made_against_an_anchor_equals_kernel_score(x, a, w, direction):
    from mmverify.scoring.kernels import anchored

    made = anchored(direction, a, w if DIRECTIONS[direction].needs_band else None)
    assert made is not None
    r = made(x.numerator, x.denominator)
    assert r == kernel_score(direction, x, a, w if DIRECTIONS[direction].needs_band else None)
    assert type(r) is Fraction


def test_no_kernel_made_where_kernel_score_takes_another_path():
    from mmverify.scoring.kernels import anchored

    assert anchored("exact_value", "yes", None) is None                   # a label: exact_match
    assert anchored("target_value", Fraction(1), None) is None            # no band: kernel_score raises
    assert anchored("higher_is_better", Fraction(1), Fraction(0)) is None
    assert anchored("exact_value", Fraction(3, 2), None)(3, 2) == 1
    assert anchored("exact_value", Fraction(3, 2), None)(2, 1) == 0


decimals = st.decimals(min_value=-10**6, max_value=10**6, allow_nan=False, allow_infinity=False, places=6)


@given(x=st.one_of(decimals, fracs.map(lambda f: exact_decimal(f)).filter(lambda d: isinstance(d, Decimal))),
       a=st.one_of(fracs, decimals.map(Fraction)), w=pos, direction=st.sampled_from(sorted(DIRECTIONS)))
def test_full_at_says_exactly_where_the_kernel_scores_one(x, a, w, direction):
    # a Decimal read value compared with the anchor as an exact Decimal (or the
    # Fraction where it does not terminate): the comparison the verdict path
    # makes before the value's ratio
    import operator
    from mmverify.scoring.kernels import anchored

    compare = {"==": operator.eq, ">=": operator.ge, "<=": operator.le}[DIRECTIONS[direction].full_at]
    r = anchored(direction, a, w if DIRECTIONS[direction].needs_band else None)(*x.as_integer_ratio())
    assert compare(x, exact_decimal(a)) == (r == 1)


def test_full_at_at_the_edges():
    import operator
    from mmverify.scoring.kernels import anchored

    third = Fraction(1, 3)
    for direction, x, a, full in [("target_value", Decimal("1.50"), Fraction(3, 2), True),
                                  ("target_value", Decimal("0.3333333333333333333333333333"), third, False),
                                  ("higher_is_better", Decimal("0.3333333333333333333333333334"), third, True),
                                  ("lower_is_better", Decimal("0.3333333333333333333333333334"), third, False),
                                  ("lower_is_better", Decimal("-0"), Fraction(0), True),
                                  ("exact_value", Decimal("2E+3"), Fraction(2000), True)]:
        compare = {"==": operator.eq, ">=": operator.ge, "<=": operator.le}[DIRECTIONS[direction].full_at]
        assert compare(x, exact_decimal(a)) is full, (direction, x)
        w = Fraction(1, 10) if DIRECTIONS[direction].needs_band else None
        assert (anchored(direction, a, w)(*x.as_integer_ratio()) == 1) is full


@given(x=fracs, a=fracs, w=pos, direction=st.sampled_from(["higher_is_better", "lower_is_better", "target_value"]))
def test_the_written_shortfall_is_the_kernels(x, a, w, direction):
    # the source text a generated reader scores a band kernel with (on the
    # value's n/d, the anchor's an/ad): 1 where it is <= 0, else
    # clamp(1 - s * wd / (ad * wn * d), 0, 1)
    from mmverify.scoring.kernels import anchored

    n, d, an, ad = x.numerator, x.denominator, a.numerator, a.denominator
    s = eval(DIRECTIONS[direction].shortfall, {"abs": abs}, {"n": n, "d": d, "an": an, "ad": ad}) * w.denominator
    written = 1 if s <= 0 else max(Fraction(0), 1 - Fraction(s, ad * w.numerator * d))
    assert written == anchored(direction, a, w)(n, d)
    assert DIRECTIONS["exact_value"].shortfall is None
