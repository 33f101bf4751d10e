"""Identity sides evaluated on Decimals: the verdict path's half of
:mod:`.identity`, whose checked trees (step 1) and once-per-text memo it uses.

The verdict path (a reward) reads artifact numbers as the Decimals the parser
made. A side without division is a polynomial, so it is evaluated on them
with ``EXACT`` as the current context: a precision no artifact number can
reach in practice, with every rounding trapped, so that a result is either
exact or raises, and then the verdict is left to the pair closures of
:mod:`.identity`.
The sides are written with Python's operators (``+ - * **``, unary ``-``):
on Decimals each is the context's own operation (``EXACT.add`` and the
rest), at a fraction of a method call's cost; on ints and Fractions, exact
arithmetic of their own; a Decimal meeting a Fraction raises TypeError.
"""
from __future__ import annotations

import ast
import decimal
import operator
from decimal import Decimal
from fractions import Fraction
from typing import Callable, Mapping, Sequence

from mmverify.reading.numbers import exact_decimal

from .identity import MAX_EXPR_LENGTH, _checked, _once_per_text, _segment, _Undefined

EXACT = decimal.Context(prec=100_000, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN,
                         traps=[decimal.Inexact, decimal.Rounded, decimal.InvalidOperation, decimal.Overflow,
                                decimal.Underflow, decimal.Subnormal, decimal.Clamped])
UNDECIDED = (decimal.DecimalException, TypeError)
# A Fraction (a replayed value) becomes its equal Decimal by ``QUOTIENT.divide(Decimal(numerator),
# denominator)``: exact, or a trapped signal where the expansion does not end within 200 digits
# (EXACT would carry every division to its full precision first: some 50 us each).
QUOTIENT = decimal.Context(prec=200, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN, traps=EXACT.traps.copy())
_OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*"}


class _Sides:
    """Writes the sides of an identity as Python source over the variables'
    sources, in two passes over the same trees: the first counts the parts
    (by their canonical text), the second writes them. A part that occurs
    twice is computed once: its first occurrence assigns a temporary
    (``(t := ...)``), the later ones read it (Python evaluates operands left
    to right, the order the source is written in). A square ``x ** 2`` is
    written ``x * x`` (the same exact value; one multiplication costs half a
    power)."""

    def __init__(self, text: str, variables: Sequence[str], index: Mapping[str, int],
                 name: Callable[[Decimal], str], temp: Callable[[], str]) -> None:
        self.text, self.variables, self.index, self.name, self.temp = text, variables, index, name, temp
        self.counts: dict[str, int] = {}
        self.counting = True
        self.assigned: dict[str, str] = {}

    def constant(self, value: Fraction) -> tuple[str | None, str | None, Fraction]:
        folded = exact_decimal(value)
        if not isinstance(folded, Decimal):
            return None, None, value
        canonical = f"[{folded}]"
        return canonical, canonical if self.counting else self.name(folded), value

    def compound(self, canonical: str, source: str) -> tuple[str, str, None]:
        if self.counting:
            self.counts[canonical] = self.counts.get(canonical, 0) + 1
        elif self.counts.get(canonical, 0) > 1:
            if canonical in self.assigned:
                return canonical, self.assigned[canonical], None
            t = self.assigned[canonical] = self.temp()
            return canonical, f"({t} := {source})", None
        return canonical, source, None

    def node(self, node: ast.AST) -> tuple[str | None, str | None, Fraction | None]:
        """(the canonical text of the part and its source, over the variables'
        sources, or None twice; the exact value of a part without variables,
        else None). No source for a division or a negative power with a
        variable in it (the pair closures decide those); a part without
        variables is folded once into its exact value, named by ``name`` as a
        Decimal when it terminates (``489/100`` is ``4.89``). _Undefined for a
        constant division by zero."""
        if isinstance(node, ast.Name):
            v = self.variables[self.index[node.id]]
            return v, v, None
        if isinstance(node, ast.Constant):
            return self.constant(Fraction(_segment(self.text, node)))
        if isinstance(node, ast.UnaryOp):
            canonical, source, const = self.node(node.operand)
            if not isinstance(node.op, ast.USub):
                return canonical, source, const
            if const is not None:
                return self.constant(-const)
            return (None, None, None) if canonical is None else self.compound(f"(-{canonical})", f"(-{source})")
        assert isinstance(node, ast.BinOp)
        lc, ls, lconst = self.node(node.left)
        if isinstance(node.op, ast.Pow):
            exp = node.right
            sign = -1 if isinstance(exp, ast.UnaryOp) and isinstance(exp.op, ast.USub) else 1
            while isinstance(exp, ast.UnaryOp):
                exp = exp.operand
            e = sign * exp.value
            if lconst is not None:
                if lconst == 0 and e < 0:
                    raise _Undefined
                return self.constant(lconst ** e)
            if lc is None or e < 0:
                return None, None, None
            if e != 2:      # (Decimal 0 ** 0 is InvalidOperation: undecided there)
                return self.compound(f"({lc} ** {int(e)})", f"({ls} ** {int(e)})")
            if "(" not in ls:     # a variable or a name
                return self.compound(f"({lc} ** 2)", f"({ls} * {ls})")
            if lc in self.assigned:   # (ls assigns it: the part occurs again)
                return self.compound(f"({lc} ** 2)", f"({ls} * {self.assigned[lc]})")
            t = self.temp()
            return self.compound(f"({lc} ** 2)", f"(({t} := {ls}) * {t})")
        rc, rs, rconst = self.node(node.right)
        op = type(node.op)
        if lconst is not None and rconst is not None:
            if op is ast.Div and rconst == 0:
                raise _Undefined
            return self.constant({ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
                                  ast.Div: operator.truediv}[op](lconst, rconst))
        if op is ast.Div or lc is None or rc is None:
            return None, None, None
        return self.compound(f"({lc} {_OPERATORS[op]} {rc})", f"({ls} {_OPERATORS[op]} {rs})")


def decimal_sides(expr: str, var_names: Sequence[str], variables: Sequence[str],
                  name: Callable[[Decimal], str], temp: Callable[[], str]) -> tuple[str, str, str] | None:
    """(relation, left, right): both sides of an identity as Python
    expressions over the sources ``variables`` (one per name of
    ``var_names``), each constant part folded into its exact Decimal and
    named by ``name(value)``, a part computed once named by ``temp()`` (a
    fresh local name each call). Evaluated with :data:`EXACT` as the
    current context on Decimal and int values, each side is exact or raises
    one of :data:`UNDECIDED`. None when a side divides by a variable, has a
    negative power of one, or a constant whose expansion does not terminate."""
    text, relation, left_tree, right_tree = _checked(expr, var_names)
    index = {n: k for k, n in enumerate(var_names)}
    sides = _Sides(text, variables, index, name, temp)
    try:
        if sides.node(left_tree)[0] is None or sides.node(right_tree)[0] is None:
            return None
        sides.counting = False
        left = sides.node(left_tree)[1]
        right = sides.node(right_tree)[1]
    except _Undefined:
        return None
    assert left is not None and right is not None
    return relation, left, right


@_once_per_text
def compile_decimal_check(expr: str, var_names: Sequence[str]):
    """``holds(values, tol)``: the identity's verdict (as :func:`relation_holds`)
    at parsed artifact numbers (Decimal or int, ``var_names`` order) when both
    sides are evaluated exactly in Decimal; None when it cannot be (a side
    divides, a value is a Fraction, the exact result is out of the context's
    reach): the caller then decides on the pair closures. ``tol`` is a Decimal
    or a Fraction (both compare exactly with a Decimal). None instead of a
    function when a side divides. The two sides are one compiled function,
    compiled once per text and variable names, as :func:`compile_identity`."""
    constants: dict[str, Decimal] = {}

    def name(value: Decimal) -> str:
        constants[f"c{len(constants)}"] = value
        return f"c{len(constants) - 1}"
    temps = iter(range(MAX_EXPR_LENGTH))
    sides_text = decimal_sides(expr, var_names, [f"v[{k}]" for k in range(len(var_names))], name,
                               lambda: f"t{next(temps)}")
    if sides_text is None:
        return None
    relation, left, right = sides_text
    namespace = dict(constants, __builtins__={})
    try:
        code = compile(f"def sides(v):\n    return {left}, {right}\n", "<identity>", "exec")
    except (SyntaxError, RecursionError, MemoryError):     # nested past the compiler's limits: the pairs decide
        return None
    exec(code, namespace)
    sides = namespace["sides"]
    # (every operation is parenthesised: a side without one reads a value or a constant as it is)
    arithmetic = "(" in left or "(" in right
    subtract = EXACT.subtract
    compare = COMPARE[relation]
    getcontext, setcontext = decimal.getcontext, decimal.setcontext

    def holds(values, tol) -> bool | None:
        for x in values:
            if x.__class__ is not Decimal and x.__class__ is not int:
                return None
        try:
            if arithmetic:
                prior = getcontext()
                setcontext(EXACT)
                try:
                    lhs, rhs = sides(values)
                finally:
                    setcontext(prior)
            else:
                lhs, rhs = sides(values)
            if not tol:
                return compare(lhs, rhs)
            diff = subtract(lhs, rhs)
        except UNDECIDED:
            return None
        if relation == "==":
            return diff.copy_abs() <= tol
        if relation == "<=":
            return diff <= tol
        if relation == "<":
            return diff < tol
        neg = tol.copy_negate() if tol.__class__ is Decimal else -tol    # (-tol would round a Decimal)
        return diff >= neg if relation == ">=" else diff > neg

    return holds


COMPARE = {"==": operator.eq, "<=": operator.le, "<": operator.lt, ">=": operator.ge, ">": operator.gt}
