"""Identity gates: restricted parsing of the relation (anchor text, trusted) and
exact evaluation at artifact values (untrusted, never parsed).

Design notes: docs/architecture.md, `gates/identity.py`.
"""
from __future__ import annotations

import ast
import re
from fractions import Fraction
from functools import lru_cache, wraps
from typing import Any, Iterable, Mapping, Sequence

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
            seg = _segment(text, exp) or ""
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
        seg = _segment(text, node) or ""
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


def _segment(text: str, node: ast.AST) -> str:
    """``ast.get_source_segment(text, node)`` for the one-line texts parsed here
    (offsets are UTF-8 byte offsets into line 1), without splitting the text
    into lines at every call."""
    if text.isascii():
        return text[node.col_offset:node.end_col_offset]
    return text.encode()[node.col_offset:node.end_col_offset].decode()


def _once_per_text(make):
    """``make(expr, var_names)`` made once per identity text and variable names
    (the results are pure: gates repeating an identity share them); a value
    that is not a text is passed on each time, to meet ``make``'s own check."""
    cached = lru_cache(maxsize=1024)(make)

    @wraps(make)
    def once(expr, var_names):
        return cached(expr, tuple(var_names)) if isinstance(expr, str) else make(expr, var_names)
    return once


@_once_per_text
def _checked(expr: str, var_names: Sequence[str]) -> tuple[str, str, ast.AST, ast.AST]:
    """Step 1: (one-line text, relation, left tree, right tree); IdentityError on
    any defect. Made once per expression (the closures, the Decimal check and
    the sympy form all start here); the trees are only read."""
    return _check_text(expr, var_names)


def _check_text(expr: Any, var_names: Sequence[str]) -> tuple[str, str, ast.AST, ast.AST]:
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
    return text, _REL[op], body.left, body.comparators[0]


def whole_side_names(expr: str, var_names: Sequence[str]) -> frozenset[str]:
    """The variables that make up a whole side of the relation by themselves
    (``best`` in ``best == top``)."""
    _, _, left, right = _checked(expr, var_names)
    return frozenset(side.id for side in (left, right) if isinstance(side, ast.Name))


def parse_identity(expr: str, var_names: Sequence[str]) -> tuple[str, Any, Any]:
    """(relation, lhs, rhs) of an anchor's identity text, sides as sympy
    expressions; IdentityError on any defect."""
    text, relation, left_tree, right_tree = _checked(expr, var_names)
    left = _segment(text, left_tree)
    right = _segment(text, right_tree)
    try:
        lhs = _sympy_side(left, var_names)
        rhs = _sympy_side(right, var_names)
    except Exception as exc:  # the whitelist should make this unreachable
        raise IdentityError(f"sympy could not parse it: {exc}") from None
    declared = {_sym(n) for n in var_names}
    for side in (lhs, rhs):
        if not all(a.is_Symbol or a.is_Rational for a in side.atoms()) or side.free_symbols - declared:
            raise IdentityError("only exact rational constants and the declared variables may appear")
    return relation, lhs, rhs


# --------------------------------------------------------- compiled closures
#
# A side is compiled into a closure over the tuple of variable values, each an
# integer pair (numerator, denominator). Arithmetic stays on unreduced pairs
# (exact, and much cheaper than reducing after every step); a zero divisor
# raises _Undefined, which makes the side undefined.

class _Undefined(Exception):
    pass


Pair = tuple  # (numerator: int, denominator: int), denominator != 0


def _compile_node(node: ast.AST, text: str, index: Mapping[str, int]):
    if isinstance(node, ast.Name):
        k = index[node.id]
        return lambda v: v[k]
    if isinstance(node, ast.Constant):
        value = Fraction(_segment(text, node))
        pair = (value.numerator, value.denominator)
        return lambda v: pair
    if isinstance(node, ast.UnaryOp):
        inner = _compile_node(node.operand, text, index)
        if isinstance(node.op, ast.USub):
            def neg(v):
                n, d = inner(v)
                return -n, d
            return neg
        return inner
    assert isinstance(node, ast.BinOp)
    left = _compile_node(node.left, text, index)
    if isinstance(node.op, ast.Pow):
        exp = node.right
        negative = isinstance(exp, ast.UnaryOp) and isinstance(exp.op, ast.USub)
        while isinstance(exp, ast.UnaryOp):
            exp = exp.operand
        e = exp.value

        if negative and e:
            def power_inverse(v):
                n, d = left(v)
                if n == 0:
                    raise _Undefined
                return d ** e, n ** e
            return power_inverse

        def power(v):
            n, d = left(v)
            return n ** e, d ** e
        return power
    right = _compile_node(node.right, text, index)
    op = type(node.op)
    if op is ast.Add:
        def add(v):
            a, b = left(v)
            c, d = right(v)
            return (a + c, b) if b == d else (a * d + c * b, b * d)
        return add
    if op is ast.Sub:
        def sub(v):
            a, b = left(v)
            c, d = right(v)
            return (a - c, b) if b == d else (a * d - c * b, b * d)
        return sub
    if op is ast.Mult:
        def mul(v):
            a, b = left(v)
            c, d = right(v)
            return a * c, b * d
        return mul

    def div(v):
        a, b = left(v)
        c, d = right(v)
        if c == 0:
            raise _Undefined
        return a * d, b * c
    return div


@_once_per_text
def compile_identity(expr: str, var_names: Sequence[str]):
    """(relation, evaluate) of an anchor's identity text, without sympy.

    ``evaluate(values)`` takes the variables' exact values (Fractions, in
    ``var_names`` order) and returns ``(lhs, rhs)``, each an unreduced integer
    pair ``(numerator, denominator > 0)`` or None where that side divides by
    zero (decide with :func:`pair_holds`; ``Fraction(*pair)`` is the value). IdentityError on any defect (the same
    checks as :func:`parse_identity`). Compiled once per text and variable
    names: a task repeats one identity over many gates (the closures are pure,
    so the gates share them)."""
    text, relation, left_tree, right_tree = _checked(expr, var_names)
    index = {n: k for k, n in enumerate(var_names)}
    left = _compile_node(left_tree, text, index)
    right = _compile_node(right_tree, text, index)

    def side(fn, pairs) -> tuple[int, int] | None:
        try:
            n, d = fn(pairs)
        except _Undefined:
            return None
        return (-n, -d) if d < 0 else (n, d)

    def evaluate(values: Sequence[Fraction]) -> tuple[tuple[int, int] | None, tuple[int, int] | None]:
        pairs = tuple([x.as_integer_ratio() for x in values])
        return side(left, pairs), side(right, pairs)

    return relation, evaluate


def pair_holds(relation: str, lhs: tuple[int, int], rhs: tuple[int, int], tol: Fraction) -> bool:
    """:func:`relation_holds` on unreduced pairs (positive denominators), in
    integers: ``lhs - rhs`` against the tolerance, cross-multiplied."""
    a, b = lhs
    c, d = rhs
    diff = (a * d - c * b) * tol.denominator      # (lhs - rhs) * b*d*u
    bound = tol.numerator * b * d                  # tol * b*d*u
    if relation == "==":
        return abs(diff) <= bound
    if relation == "<=":
        return diff <= bound
    if relation == "<":
        return diff < bound
    if relation == ">=":
        return diff >= -bound
    if relation == ">":
        return diff > -bound
    raise ValueError(relation)


def side_texts(expr: str, var_names: Sequence[str]) -> tuple[str, str]:
    """The sympy text of both sides (``str`` of the parsed expressions), as JSON
    reports show them. Cached in the process and, when the compiled-task cache
    is on, on disk, so that rendering a report need not import sympy."""
    key = (" ".join(expr.split()), tuple(var_names))
    hit = _TEXTS.get(key)
    if hit is None:
        from mmverify.tasks import cache

        texts = cache.cached(cache.key_of("identity-sides", key[0], *key[1]),
                             lambda: list(_sympy_texts(*key)),
                             lambda v: isinstance(v, list) and len(v) == 2 and all(isinstance(t, str) for t in v))
        hit = (texts[0], texts[1])
        _TEXTS[key] = hit
    return hit


def load_side_texts(identities: Iterable[tuple[Any, Any]]) -> None:
    """:func:`side_texts` of many identities at once (those of one task, as
    ``(expr, var_names)`` pairs): one compiled-task cache record for them all
    instead of one per identity. A record that is absent, stale or of the
    wrong shape is ignored: the texts are then made one by one, and the
    record written for the next process, unless an identity is defective
    (its gate then says so when it is compiled)."""
    keys = sorted({(" ".join(expr.split()), tuple(names)) for expr, names in identities
                   if isinstance(expr, str) and expr.strip()})
    if not keys or all(k in _TEXTS for k in keys):
        return
    from mmverify.tasks import cache

    record_key = cache.key_of("identity-sides-set",
                              *[part for expr, names in keys for part in (expr, str(len(names)), *names)])
    record = cache.load(record_key)
    if (isinstance(record, list) and len(record) == len(keys)
            and all(isinstance(p, list) and len(p) == 2 and all(isinstance(t, str) for t in p) for p in record)):
        for k, (lhs, rhs) in zip(keys, record):
            _TEXTS.setdefault(k, (lhs, rhs))
        return
    try:
        texts = [side_texts(*k) for k in keys]
    except IdentityError:
        return
    cache.store(record_key, [list(t) for t in texts])


def _sympy_texts(expr: str, var_names: Sequence[str]) -> tuple[str, str]:
    _, lhs, rhs = parse_identity(expr, var_names)
    return str(lhs), str(rhs)


_TEXTS: dict[tuple[str, tuple[str, ...]], tuple[str, str]] = {}


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
