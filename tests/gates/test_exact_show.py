"""Rendering of exact numbers (``mmverify.gates.exact.show``): exact when the
decimal terminates, marked when it is cut."""
from fractions import Fraction

from mmverify.gates.exact import show


def test_show_is_exact_when_the_decimal_terminates():
    assert show(Fraction(1406276, 10**6) * Fraction(1604793, 10**6)) == "2.256781880868"
    assert show(Fraction(224)) == "224"
    assert show(Fraction(-1, 8)) == "-0.125"


def test_show_marks_a_truncated_value():
    assert show(Fraction(1, 3)) == "0.333333333333..."
    assert show(Fraction(-2, 3)).startswith("-0.666")
    assert show(Fraction(1, 30000)).endswith("...")
