"""Identity gates: restricted parsing of the relation (anchor text, trusted) and
exact evaluation at artifact values (untrusted, never parsed).

Parsing happens in two steps, so that the anchor text is checked before any of
it is evaluated:

1. a whitelist over Python's ``ast`` of the text: exactly one comparison
   (``==``, ``<=``, ``>=``, ``<``, ``>``); on each side only names declared in
   ``vars``, decimal literals, unary ``+``/``-``, binary ``+ - * /`` and ``**``
   with an integer literal exponent (|n| <= 64). Calls, attributes, subscripts,
   ``^``, strings, floats written as ``1e-3j`` etc. are rejected with a message;
2. each side is handed to ``sympy.parsing.sympy_parser.parse_expr`` with a
   restricted namespace: ``local_dict`` holds exactly one Symbol per declared
   variable, ``global_dict`` only ``Rational`` and empty ``__builtins__``, and
   the only transformation turns every numeric literal into
   ``Rational('<its text>')`` (exact; no Float, no auto-symbol, no auto-call).

Artifact values never reach the parser: they are substituted into the compiled
expression as ``sympy.Rational(p, q)`` built from an exact ``Fraction``.
"""
from __future__ import annotations

import ast
import re
from fractions import Fraction
from typing import Any, Mapping, Sequence
from mmverify.errors import MmverifyError

_REL = {ast.Eq: "==", ast.LtE: "<=", ast.GtE: ">=", ast.Lt: "<", ast.Gt: ">"}
_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}
_NUMBER = re.compile(r"(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?|(0|[1-9][0-9]*)?\.[0-9]+([eE][+-]?[0-9]+)?")
MAX_EXPONENT = 64
MAX_EXPR_LENGTH = 2000


class IdentityError(MmverifyError, ValueError):
    """A defect in an identity expression (reported as a TaskLoadError)."""


def _check(node: ast.AST, text: str, names: set[str], used: set[str]) -> None:
    if isinstance(node, ast.BinOp):
        if type(node.op) not in _BINOPS:
            sym = {ast.BitXor: "^ (use ** for powers)", ast.FloorDiv: "//", ast.Mod: "%"}.get(type(node.op))
            raise IdentityError(f"operator {sym or type(node.op).__name__} is not allowed; "
                                "only + - * / and ** with an integer exponent")
        _check(node.left, text, names, used)
        if isinstance(node.op, ast.Pow):
            exp = node.right
            neg = False
            if isinstance(exp, ast.UnaryOp) and isinstance(exp.op, (ast.USub, ast.UAdd)):
                neg = isinstance(exp.op, ast.USub)
                exp = exp.operand
            seg = ast.get_source_segment(text, exp) or ""
            if not (isinstance(exp, ast.Constant) and type(exp.value) is int and re.fullmatch(r"[0-9]+", seg)):
                raise IdentityError("a power needs an integer literal exponent")
            if exp.value > MAX_EXPONENT:
                raise IdentityError(f"exponent {'-' if neg else ''}{exp.value} beyond +/-{MAX_EXPONENT}")
            return
        _check(node.right, text, names, used)
        return
    if isinstance(node, ast.UnaryOp):
        if not isinstance(node.op, (ast.USub, ast.UAdd)):
            raise IdentityError(f"unary operator {type(node.op).__name__} is not allowed")
        _check(node.operand, text, names, used)
        return
    if isinstance(node, ast.Name):
        if node.id not in names:
            raise IdentityError(f"unknown name {node.id!r}: only the declared vars {sorted(names)} may appear")
        used.add(node.id)
        return
    if isinstance(node, ast.Constant):
        seg = ast.get_source_segment(text, node) or ""
        if type(node.value) not in (int, float) or not _NUMBER.fullmatch(seg):
            raise IdentityError(f"literal {seg or node.value!r} is not a plain decimal number")
        return
    if isinstance(node, ast.Compare):
        raise IdentityError("exactly one relation is allowed (no chained or nested comparisons)")
    raise IdentityError(f"{type(node).__name__} is not allowed in an identity "
                        "(no calls, attributes, subscripts, strings or other syntax)")


def _rational_numbers(tokens: list, local_dict: dict, global_dict: dict) -> list:
    """parse_expr transformation: every NUMBER token becomes Rational('<text>')."""
    from tokenize import NAME, NUMBER, OP, STRING

    out = []
    for tok in tokens:
        num, val = tok[0], tok[1]
        if num == NUMBER:
            out.extend([(NAME, "Rational"), (OP, "("), (STRING, repr(val)), (OP, ")")])
        else:
            out.append(tok)
    return out


def _sympy_side(text: str, names: Sequence[str]) -> Any:
    import sympy
    from sympy.parsing.sympy_parser import parse_expr

    local = {n: sympy.Symbol(n) for n in names}
    glob = {"__builtins__": {}, "Rational": sympy.Rational}
    return parse_expr(text, local_dict=local, global_dict=glob, transformations=(_rational_numbers,))


def parse_identity(expr: str, var_names: Sequence[str]) -> tuple[str, Any, Any]:
    """(relation, lhs, rhs) of an anchor's identity text; IdentityError on any defect."""
    if not isinstance(expr, str) or not expr.strip():
        raise IdentityError("empty expression")
    if len(expr) > MAX_EXPR_LENGTH:
        raise IdentityError(f"expression longer than {MAX_EXPR_LENGTH} characters")
    text = " ".join(expr.split())  # one line: newlines would change Python's parse
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise IdentityError(f"not a valid expression: {exc.msg}") from None
    body = tree.body
    if not isinstance(body, ast.Compare):
        raise IdentityError("needs exactly one relation among == <= >= < >")
    if len(body.ops) != 1:
        raise IdentityError("exactly one relation is allowed (chained comparisons are not)")
    op = type(body.ops[0])
    if op not in _REL:
        raise IdentityError(f"relation {op.__name__} is not one of == <= >= < >")
    names = set(var_names)
    used: set[str] = set()
    _check(body.left, text, names, used)
    _check(body.comparators[0], text, names, used)
    unused = names - used
    if unused:
        raise IdentityError(f"declared var(s) {sorted(unused)} do not appear in the expression")
    left = ast.get_source_segment(text, body.left)
    right = ast.get_source_segment(text, body.comparators[0])
    try:
        lhs = _sympy_side(left, var_names)
        rhs = _sympy_side(right, var_names)
    except Exception as exc:  # the whitelist should make this unreachable
        raise IdentityError(f"sympy could not parse it: {exc}") from None
    declared = {_sym(n) for n in var_names}
    for side in (lhs, rhs):
        if not all(a.is_Symbol or a.is_Rational for a in side.atoms()) or side.free_symbols - declared:
            raise IdentityError("only exact rational constants and the declared variables may appear")
    return _REL[op], lhs, rhs


def _sym(name: str) -> Any:
    import sympy

    return sympy.Symbol(name)


def rational(value: Fraction) -> Any:
    """Exact sympy Rational of a Fraction (never through text or float)."""
    import sympy

    return sympy.Rational(value.numerator, value.denominator)


def evaluate_side(side: Any, bindings: Mapping[str, Fraction]) -> Fraction | None:
    """Exact value of one side at the bindings; None when undefined (division by 0)."""
    import sympy

    value = side.xreplace({sympy.Symbol(n): rational(v) for n, v in bindings.items()})
    if not (value.is_Rational and value.is_finite):
        return None
    return Fraction(int(value.p), int(value.q))


def relation_holds(relation: str, lhs: Fraction, rhs: Fraction, tol: Fraction) -> bool:
    """The identity predicate with the declared tolerance (0 when none)."""
    if relation == "==":
        return abs(lhs - rhs) <= tol
    if relation == "<=":
        return lhs <= rhs + tol
    if relation == "<":
        return lhs < rhs + tol
    if relation == ">=":
        return lhs >= rhs - tol
    if relation == ">":
        return lhs > rhs - tol
    raise ValueError(relation)


NEGATED = {"==": "!=", "<=": ">", ">=": "<", "<": ">=", ">": "<="}


def actual_relation(lhs: Fraction, rhs: Fraction) -> str:
    return "<" if lhs < rhs else (">" if lhs > rhs else "=")


def with_values(expr: str, bindings: Mapping[str, str]) -> str:
    """The expression text with each variable replaced by its value text."""
    text = " ".join(expr.split())

    def sub(m: re.Match) -> str:
        name = m.group(0)
        if name not in bindings:
            return name
        v = bindings[name]
        return f"({v})" if v.startswith("-") else v

    return re.sub(r"(?<![0-9.])[A-Za-z_][A-Za-z0-9_]*", sub, text)
