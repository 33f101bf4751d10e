"""The emitted Lean subset: printer and parser agree, evaluation is exact, typing rules hold."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mmverify.lean_gen import syntax
from mmverify.lean_gen.syntax import INT, NAT, Lit, Rel


def terms(ty: str):
    lit = (st.integers(0, 10**12) if ty == NAT else st.integers(-10**12, 10**12)).map(lambda v: Lit(v, ty))

    def extend(children):
        add = st.lists(children, min_size=2, max_size=4).map(syntax.total)
        mul = st.lists(children, min_size=2, max_size=4).map(syntax.product)
        out = add | mul
        if ty == INT:
            out = out | st.tuples(children, children).map(lambda p: syntax.Sub(*p))
        return out

    return st.recursive(lit, extend, max_leaves=8)


def rels(ty: str):
    return st.tuples(st.sampled_from(syntax.REL_OPS), terms(ty), terms(ty)).map(lambda t: Rel(*t))


def props():
    base = st.sampled_from([NAT, INT]).flatmap(rels)
    return st.recursive(base, lambda ch: (
        st.lists(ch, min_size=2, max_size=3).map(syntax.conj)
        | st.lists(ch, min_size=2, max_size=3).map(syntax.disj)
        | ch.map(syntax.Not)), max_leaves=6)


@settings(max_examples=150, deadline=None)
@given(props())
def test_print_parse_round_trip(p):
    text = syntax.print_prop(p)
    back = syntax.parse_prop(text)
    assert syntax.print_prop(back) == text
    assert back == p
    assert syntax.eval_prop(back) == syntax.eval_prop(p)


@settings(max_examples=100, deadline=None)
@given(terms(INT))
def test_eval_matches_python_arithmetic(t):
    # an independent evaluation through Python's own parser of the printed text
    text = syntax.print_term(t).replace(" : Int)", ")").replace(" : Nat)", ")")
    assert eval(text, {"__builtins__": {}}) == syntax.eval_term(t)  # noqa: S307 - digits and + - * ( ) only


def test_examples():
    p = syntax.parse_prop("1246266 * 1604793 ≤ 2 * 1000000 * 1000000")
    assert syntax.eval_prop(p) is True
    q = syntax.parse_prop("¬ (1406276 * 1604793 ≤ 2 * 1000000 * 1000000)")
    assert syntax.eval_prop(q) is True
    assert isinstance(q, syntax.Not)


def test_negative_literals_are_ascribed_int():
    assert syntax.print_term(Lit(-3, INT)) == "(-3 : Int)"
    assert syntax.print_term(Lit(3, INT)) == "(3 : Int)"
    with pytest.raises(ValueError):
        Lit(-1, NAT)
    with pytest.raises(TypeError):
        Lit(True)  # a boolean is not a literal


@pytest.mark.parametrize("text", [
    "1 ≤ 2 ∧",                       # dangling connective
    "1 ≥ 2",                         # ≥ is outside the subset
    "¬ 1 ≤ 2",                       # negation always takes parentheses
    "(1 ≤ 2)",                       # a parenthesised single relation is never emitted
    "(1 : Real) ≤ 2",                # only Int and Nat ascriptions
    "(-0 : Int) ≤ (1 : Int)",        # no negative zero
    "01 ≤ 2",                        # leading zero
    "x ≤ 2",                         # identifiers are not terms
    "1 ≤ 2 := by decide",
    "1 - 2 + 3 = 2",                 # ambiguous without parentheses
    "1 / 2 = 0",
    "2 ^ 3 = 8",
])
def test_parser_rejects_outside_subset(text):
    with pytest.raises(syntax.ParseError):
        syntax.parse_prop(text)


def test_long_nat_relations_are_ascribed():
    short = syntax.parse_prop("1246266 * 1604793 ≤ 2 * 1000000 * 1000000")
    assert syntax.print_prop(short) == "1246266 * 1604793 ≤ 2 * 1000000 * 1000000"
    long = syntax.Rel("=", syntax.total([Lit(i) for i in range(1, 8)]), Lit(28))
    text = syntax.print_prop(long)
    assert text == " + ".join(f"({i} : Nat)" for i in range(1, 8)) + " = (28 : Nat)"
    assert syntax.parse_prop(text) == long
    # a bare long relation parses but is not canonical
    bare = " + ".join(str(i) for i in range(1, 8)) + " = 28"
    assert syntax.print_prop(syntax.parse_prop(bare)) != bare


def test_type_rules():
    assert syntax.check_types(syntax.parse_prop("(1 : Int) ≤ 2")) != []          # mixed
    assert syntax.check_types(syntax.parse_prop("3 - 2 ≤ 5")) != []              # Nat subtraction truncates
    assert syntax.check_types(syntax.parse_prop("(3 : Int) - (2 : Int) ≤ (5 : Int)")) == []
    assert syntax.check_types(syntax.parse_prop("3 * 2 ≤ 5 + 1 ∧ (1 : Int) < (2 : Int)")) == []


def test_flattening_constructors():
    a, b, c = Lit(1), Lit(2), Lit(3)
    assert syntax.product([syntax.product([a, b]), c]) == syntax.Mul((a, b, c))
    assert syntax.total([a, syntax.total([b, c])]) == syntax.Add((a, b, c))
    assert syntax.product([a]) == a and syntax.total([a]) == a and syntax.conj([Rel("=", a, a)]) == Rel("=", a, a)
