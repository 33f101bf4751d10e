"""The claim of each gate form: the gate predicate at an instance's exact
values, stated as a relation over scaled integer literals (module
:mod:`.syntax`), with the common decimal scale and the encoding used. The
obligation IR (:mod:`.ir`) turns these claims into obligations and checks them.

Design notes: `docs/architecture.md` (this module's section).
"""
from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Iterable, Sequence

from mmverify.errors import MmverifyError
from mmverify.reading.numbers import decimal_places

from . import syntax
from .syntax import INT, NAT, Lit, Prop, Rel, Term


class NotExpressible(MmverifyError, ValueError):
    """A decided gate instance the IR cannot state (reported, never silently dropped)."""


class TooLarge(NotExpressible):
    """A claim beyond the resource limits of one kernel obligation."""


# ----------------------------------------------------------------------- scaling


def decimals(value: Fraction) -> int:
    """Fewest decimal places that make ``value`` an integer (a terminating decimal)."""
    places = decimal_places(value)
    if places is None:
        raise NotExpressible(f"{value} is not a terminating decimal")
    return places


def common_decimals(values: Iterable[Fraction | None]) -> int:
    return max((decimals(v) for v in values if v is not None), default=0)


def scaled(value: Fraction, d: int) -> int:
    s = value * 10 ** d
    if s.denominator != 1:  # pragma: no cover - d comes from common_decimals
        raise AssertionError("scale too small")
    return int(s)


def retype(p: Prop, ty: str) -> Prop:
    """The same statement with every literal of type ``ty``."""
    if isinstance(p, Rel):
        return Rel(p.op, _retype_term(p.left, ty), _retype_term(p.right, ty))
    if isinstance(p, syntax.Not):
        return syntax.Not(retype(p.body, ty))
    if isinstance(p, syntax.And):
        return syntax.And(tuple(retype(x, ty) for x in p.parts))
    return syntax.Or(tuple(retype(x, ty) for x in p.parts))


def _retype_term(t: Term, ty: str) -> Term:
    if isinstance(t, Lit):
        return Lit(t.value, ty, t.src)
    if isinstance(t, syntax.Mod):
        return t  # Nat only (see claim_integer)
    if isinstance(t, syntax.Add):
        return syntax.Add(tuple(_retype_term(x, ty) for x in t.terms))
    if isinstance(t, syntax.Mul):
        return syntax.Mul(tuple(_retype_term(x, ty) for x in t.factors))
    return syntax.Sub(_retype_term(t.left, ty), _retype_term(t.right, ty))


def _finish(claim: Prop) -> Prop:
    """Int everywhere when any literal is negative or a subtraction appears, else Nat."""
    lits = [l for r in syntax.relations(claim) for side in (r.left, r.right) for l in syntax.term_literals(side)]
    subs = any(syntax.term_has_sub(r.left) or syntax.term_has_sub(r.right) for r in syntax.relations(claim))
    ty = INT if subs or any(l.value < 0 for l in lits) else NAT
    return retype(claim, ty)


def _lit(v: int, src: str | None = None) -> Lit:
    return Lit(v, INT if v < 0 else NAT, src)


def _plus(t: Term, tol: int) -> Term:
    return t if tol == 0 else syntax.total([t, _lit(tol)])


def _times_scale(k: int, d: int) -> Term:
    return _lit(k) if d == 0 else syntax.product([_lit(k), _lit(10 ** d)])


# ------------------------------------------------------------------ the forms
# ``srcs`` gives, aligned with the values, the artifact path each value was
# read from (its literal's provenance, :attr:`.syntax.Lit.src`); a constant of
# the statement has none.


def _src(srcs: Sequence[str | None], k: int) -> str | None:
    return srcs[k] if k < len(srcs) else None


def claim_range(x: Fraction, lower: Fraction | None, lower_strict: bool, upper: Fraction | None,
                upper_strict: bool, tol: Fraction, srcs: Sequence[str | None] = ()) -> tuple[Prop, int, str]:
    d = common_decimals([x, lower, upper, tol])
    xs, ts = scaled(x, d), scaled(tol, d)
    X = _lit(xs, _src(srcs, 0))
    parts: list[Prop] = []
    if lower is not None:
        parts.append(Rel("<" if lower_strict else "≤", _lit(scaled(lower, d)), _plus(X, ts)))
    if upper is not None:
        parts.append(Rel("<" if upper_strict else "≤", X, _plus(_lit(scaled(upper, d)), ts)))
    if not parts:
        raise NotExpressible("a range with neither bound")
    return _finish(syntax.conj(parts)), d, "value and bounds scaled by 10^d"


def claim_integer(x: Fraction, binary: bool, tol: Fraction, srcs: Sequence[str | None] = ()) -> tuple[Prop, int, str]:
    """Integrality as divisibility of the scaled magnitude (no integer worked
    out here is written into the statement): with ``S = 10^d``, ``d`` at least
    1 (so that the divisor is a real one), ``|x|·S % S = 0``; with a tolerance
    ``t``, ``r ≤ t_s ∨ S ≤ r + t_s`` for the remainder ``r = |x|·S % S``. The
    magnitude keeps every operand of ``%`` non-negative (2021-era and current
    Lean 4 round a negative division differently); integrality does not
    depend on the sign."""
    src = _src(srcs, 0)
    if binary:
        d = common_decimals([x, tol])
        xs, ts = scaled(x, d), scaled(tol, d)
        X = _lit(xs, src)
        if tol == 0:
            claim: Prop = syntax.disj([Rel("=", X, _lit(0)), Rel("=", X, _times_scale(1, d))])
            return _finish(claim), d, "x in {0, 1}: x*10^d equals 0 or 1*10^d"
        one = _times_scale(1, d)
        claim = syntax.disj([
            syntax.conj([Rel("≤", _lit(0), _plus(X, ts)), Rel("≤", X, _lit(ts))]),
            syntax.conj([Rel("≤", one, _plus(X, ts)), Rel("≤", X, _plus(one, ts))]),
        ])
        return _finish(claim), d, "x within the tolerance of 0 or of 1"
    d = max(1, common_decimals([x, tol]))
    S = 10 ** d
    A = Lit(abs(scaled(x, d)), NAT, src)
    rem = syntax.Mod(A, Lit(S, NAT))
    if tol == 0:
        return (Rel("=", rem, Lit(0, NAT)), d,
                "|x|*10^d is divisible by 10^d (d >= 1): x is an integer")
    ts = scaled(tol, d)
    claim = syntax.disj([Rel("≤", rem, Lit(ts, NAT)), Rel("≤", Lit(S, NAT), syntax.total([rem, Lit(ts, NAT)]))])
    return (claim, d,
            "r = |x|*10^d % 10^d (d >= 1): r <= tolerance or 10^d <= r + tolerance, "
            "i.e. x is within the tolerance of an integer")


def claim_order(xs: Sequence[Fraction], strict: bool, tol: Fraction,
                srcs: Sequence[str | None] = ()) -> tuple[Prop, int, str]:
    if len(xs) < 2:
        raise NotExpressible("an order needs two values")
    d = common_decimals(list(xs) + [tol])
    vals, ts = [_lit(scaled(x, d), _src(srcs, k)) for k, x in enumerate(xs)], scaled(tol, d)
    op = "<" if strict else "≤"
    claim = syntax.conj([Rel(op, a, _plus(b, ts)) for a, b in zip(vals, vals[1:])])
    return _finish(claim), d, "consecutive values scaled by 10^d"


def claim_partition(parts: Sequence[Fraction], tot: Fraction, tol: Fraction,
                    srcs: Sequence[str | None] = ()) -> tuple[Prop, int, str]:
    if not parts:
        raise NotExpressible("a partition with no parts")
    d = common_decimals(list(parts) + [tot, tol])
    ps, ts = [_lit(scaled(p, d), _src(srcs, k)) for k, p in enumerate(parts)], scaled(tol, d)
    t = _lit(scaled(tot, d), _src(srcs, len(parts)))
    total = syntax.total(ps)
    if tol == 0:
        return _finish(Rel("=", total, t)), d, "parts and total scaled by 10^d"
    claim = syntax.conj([Rel("≤", total, _plus(t, ts)), Rel("≤", t, _plus(total, ts))])
    return _finish(claim), d, "|sum of parts - total| <= tolerance, as two inequalities"


def label_code(text: str, cap: int | None = None) -> int:
    raw = text.encode("utf-8")
    if cap is not None:
        raw = raw[:cap]
    return int.from_bytes(b"\x01" + raw, "big")


def claim_domain_number(x: Fraction, members: Sequence[Fraction], tol: Fraction,
                        srcs: Sequence[str | None] = ()) -> tuple[Prop, int, str]:
    if not members:
        raise NotExpressible("no numeric domain member")
    d = common_decimals([x, tol] + list(members))
    X, ts = _lit(scaled(x, d), _src(srcs, 0)), scaled(tol, d)
    alts: list[Prop] = []
    for m in members:
        ms = scaled(m, d)
        if tol == 0:
            alts.append(Rel("=", X, _lit(ms)))
        else:
            alts.append(syntax.conj([Rel("≤", _lit(ms), _plus(X, ts)), Rel("≤", X, _plus(_lit(ms), ts))]))
    return _finish(syntax.disj(alts)), d, "value and numeric members scaled by 10^d"


def claim_domain_label(label: str, members: Sequence[str], srcs: Sequence[str | None] = ()) -> tuple[Prop, int, str]:
    if not members:
        raise NotExpressible("no domain member")
    longest = max(len(m.encode("utf-8")) for m in members)
    x = _lit(label_code(label, cap=longest + 1), _src(srcs, 0))
    alts = [Rel("=", x, _lit(label_code(m))) for m in members]
    return (_finish(syntax.disj(alts)), 0,
            "labels as codes: UTF-8 bytes of the normalised label behind a 0x01 byte, base 256")


# ------------------------------------------------------------------- identity


@dataclass
class _Scaled:
    """An expression as ``sign * term / den``: ``den > 0``, ``sign`` = ±1, and
    every literal of ``term`` non-negative (a ``Sub`` only where a nested sum
    mixes signs)."""

    term: Term
    den: int
    sign: int = 1

    @property
    def value(self) -> Fraction:
        return Fraction(self.sign * syntax.eval_term(self.term), self.den)


class _IdentityBuilder:
    """Walks the anchor's expression as Python parsed it (the gate layer has
    already restricted it to names, decimal literals, unary ``+ -``, binary
    ``+ - * /`` and ``**`` with an integer literal exponent)."""

    def __init__(self, text: str, bindings: Sequence[tuple[str, Fraction]], d: int,
                 srcs: Sequence[str | None] = ()):
        self.text = text
        self.values = dict(bindings)
        self.srcs = {name: _src(srcs, k) for k, (name, _) in enumerate(bindings)}
        self.d = d
        self.scale = 10 ** d

    def scale_factors(self, m: int) -> list[Term]:
        """``m`` as factors: a residue (if not 1) and then ``10^d`` repeated."""
        if m == 1:
            return []
        out: list[Term] = []
        j = 0
        if self.scale > 1:
            while m % self.scale == 0:
                m //= self.scale
                j += 1
        if m != 1:
            out.append(_lit(m))
        out.extend(_lit(self.scale) for _ in range(j))
        return out

    def times(self, x: _Scaled, m: int) -> Term:
        if x.term == _lit(0):
            return x.term
        return syntax.product([x.term] + self.scale_factors(m))

    def summands(self, node: ast.AST, sign: int = 1) -> list[tuple[int, ast.AST]]:
        """A chain of ``+``/``-`` (and unary signs) as signed summands, in written order."""
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            right_sign = sign if isinstance(node.op, ast.Add) else -sign
            return self.summands(node.left, sign) + self.summands(node.right, right_sign)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            inner = node.operand
            if isinstance(inner, ast.BinOp) and isinstance(inner.op, (ast.Add, ast.Sub)):
                return self.summands(inner, -sign if isinstance(node.op, ast.USub) else sign)
        return [(sign, node)]

    def factors(self, node: ast.AST) -> list[ast.AST]:
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            return self.factors(node.left) + self.factors(node.right)
        return [node]

    def walk(self, e: ast.AST) -> _Scaled:
        if isinstance(e, ast.Name):
            if e.id not in self.values:
                raise NotExpressible(f"unbound variable {e.id}")
            v = scaled(self.values[e.id], self.d)
            return _Scaled(_lit(abs(v), self.srcs.get(e.id)), self.scale, -1 if v < 0 else 1)
        if isinstance(e, ast.Constant):
            seg = ast.get_source_segment(self.text, e)
            try:
                q = Fraction(seg if seg is not None else str(e.value))
            except (ValueError, ZeroDivisionError):
                raise NotExpressible(f"literal {seg!r}") from None
            return _Scaled(_lit(abs(q.numerator)), q.denominator, -1 if q < 0 else 1)
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)):
            inner = self.walk(e.operand)
            return _Scaled(inner.term, inner.den, -inner.sign if isinstance(e.op, ast.USub) else inner.sign)
        if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Add, ast.Sub)):
            kids = []
            for sign, node in self.summands(e):
                k = self.walk(node)
                kids.append(_Scaled(k.term, k.den, k.sign * sign))
            den = _lcm([k.den for k in kids])
            pos = [self.times(k, den // k.den) for k in kids if k.sign > 0]
            neg = [self.times(k, den // k.den) for k in kids if k.sign < 0]
            if not pos:
                return _Scaled(syntax.total(neg), den, -1)
            if not neg:
                return _Scaled(syntax.total(pos), den, 1)
            return _Scaled(syntax.Sub(syntax.total(pos), syntax.total(neg)), den, 1)
        if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Mult):
            den, sign, factors = 1, 1, []
            for f in self.factors(e):
                k = self.walk(f)
                den *= k.den
                sign *= k.sign
                factors.append(k.term)
            return _Scaled(syntax.product(factors), den, sign)
        if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Div):
            num, div = self.walk(e.left), self.walk(e.right)
            v = syntax.eval_term(div.term)
            if v == 0:
                raise NotExpressible("division by zero")
            # (n/dn) / (t/dd) = n*dd / (dn*t): the divisor's value is known exactly
            factors = [num.term] + ([_lit(div.den)] if div.den != 1 else [])
            return _Scaled(syntax.product(factors), num.den * abs(v),
                           num.sign * div.sign * (1 if v > 0 else -1))
        if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Pow):
            exp = e.right
            neg = isinstance(exp, ast.UnaryOp) and isinstance(exp.op, ast.USub)
            if isinstance(exp, ast.UnaryOp):
                exp = exp.operand
            if not (isinstance(exp, ast.Constant) and type(exp.value) is int):
                raise NotExpressible("a power with a non-integer exponent")
            n = -exp.value if neg else exp.value
            base = self.walk(e.left)
            if n == 0:
                return _Scaled(_lit(1), 1)
            if n > 0:
                return _Scaled(syntax.product([base.term] * n), base.den ** n, base.sign ** n)
            # a negative power: (t/den)^-n = den^n / t^n, t's value known exactly
            v = base.sign * syntax.eval_term(base.term)
            if v == 0:
                raise NotExpressible("division by zero")
            m = -n
            return _Scaled(_lit(base.den ** m), abs(v) ** m, -1 if (v < 0 and m % 2) else 1)
        raise NotExpressible(f"{type(e).__name__} is not a polynomial operation")


def _lcm(xs: Iterable[int]) -> int:
    out = 1
    for x in xs:
        out = out * x // math.gcd(out, x)
    return out


_RELATIONS = {ast.Eq: "==", ast.LtE: "<=", ast.GtE: ">=", ast.Lt: "<", ast.Gt: ">"}


def parse_sides(expr: str) -> tuple[str, str, ast.AST, ast.AST]:
    """(one-line text, relation, left tree, right tree) of an anchor's identity text."""
    text = " ".join(expr.split())
    try:
        body = ast.parse(text, mode="eval").body
    except SyntaxError:
        raise NotExpressible("the identity text does not parse") from None
    if not (isinstance(body, ast.Compare) and len(body.ops) == 1 and type(body.ops[0]) in _RELATIONS):
        raise NotExpressible("the identity text is not one relation")
    return text, _RELATIONS[type(body.ops[0])], body.left, body.comparators[0]


_FLIPPED = {"==": "==", "<=": ">=", ">=": "<=", "<": ">", ">": "<"}


def claim_identity_aggregate(expr: str, bindings: Sequence[tuple[str, Fraction]],
                             aggregate: tuple[str, str, int, int], operands: Sequence[Fraction], tol: Fraction,
                             srcs: Sequence[str | None] = ()) -> tuple[Prop, int, str]:
    """The claim of an identity ``S rel A`` whose variable ``A`` is the largest
    (smallest) element of a list, stated element by element and never folded:
    for ``A = max x_i``, ``S >= A`` is ``∧ S >= x_i``, ``S <= A`` is
    ``∨ S <= x_i``, and ``S == A`` is ``(∧ S >= x_i) ∧ (∨ S <= x_i)`` (with a
    tolerance, each comparison within it); for ``min`` the roles of ``∧`` and
    ``∨`` swap. Each comparison is :func:`claim_identity`'s claim of ``S rel
    x_i``. ``operands`` and ``srcs`` hold the elements at
    ``[first, first + count)`` in place of the aggregate."""
    name, kind, first, count = aggregate
    text, relation, lhs, rhs = parse_sides(expr)
    on_left = isinstance(lhs, ast.Name) and lhs.id == name
    other = rhs if on_left else lhs
    if not (on_left or (isinstance(rhs, ast.Name) and rhs.id == name)) or count < 1:
        raise NotExpressible("the aggregate does not stand alone on one side")
    relation = _FLIPPED[relation] if on_left else relation
    other_text = ast.get_source_segment(text, other)
    names = [n for n, _ in bindings]
    k = names.index(name)
    scalar_srcs = list(srcs[:first]) + [None] + list(srcs[first + count:])

    def each(rel: str) -> list[tuple[Prop, int]]:
        out = []
        for i in range(count):
            bound = [(n, operands[first + i] if n == name else v) for n, v in bindings]
            where = scalar_srcs[:k] + [srcs[first + i] if first + i < len(srcs) else None] + scalar_srcs[k + 1:]
            claim, d, _ = claim_identity(f"{other_text} {rel} {name}", bound, tol, where)
            out.append((claim, d))
        return out

    every, some = ((">=", "<=") if kind == "max" else ("<=", ">="))
    if relation == "==":
        alls, anys = each(every), each(some)
        claim = syntax.conj([syntax.conj([c for c, _ in alls]), syntax.disj([c for c, _ in anys])])
        ds = [d for _, d in alls + anys]
    else:
        universal = relation in ((">=", ">") if kind == "max" else ("<=", "<"))
        parts = each(relation)
        claim = (syntax.conj if universal else syntax.disj)([c for c, _ in parts])
        ds = [d for _, d in parts]
    how = (f"{name} is the {'largest' if kind == 'max' else 'smallest'} of {count} element(s), stated element by "
           f"element (every element, and one element, as the relation needs); each comparison as written, its "
           f"variables scaled by 10^d, d the most decimals of its values")
    return claim, max(ds), how


def claim_identity(expr: str, bindings: Sequence[tuple[str, Fraction]], tol: Fraction,
                   srcs: Sequence[str | None] = ()) -> tuple[Prop, int, str]:
    text, relation, lhs, rhs = parse_sides(expr)
    d = common_decimals([v for _, v in bindings])
    b = _IdentityBuilder(text, bindings, d, srcs)
    if relation in (">=", ">"):
        lhs, rhs = rhs, lhs
        relation = "<=" if relation == ">=" else "<"
    kept: list[list[_Scaled]] = [[], []]
    moved: list[list[_Scaled]] = [[], []]
    for side_no, tree in enumerate((lhs, rhs)):
        for sign, summand in b.summands(tree):
            x = b.walk(summand)
            if x.sign * sign < 0:
                moved[1 - side_no].append(_Scaled(x.term, x.den, 1))
            else:
                kept[side_no].append(_Scaled(x.term, x.den, 1))
    sides = [kept[0] + moved[0], kept[1] + moved[1]]
    tol_s = _Scaled(_lit(tol.numerator), tol.denominator) if tol else None
    den = _lcm([x.den for side in sides for x in side] + ([tol_s.den] if tol_s else []))

    def side_term(items: list[_Scaled], extra: _Scaled | None = None) -> Term:
        items = items + ([extra] if extra else [])
        if not items:
            return _lit(0)
        return syntax.total([b.times(x, den // x.den) for x in items])

    L0, R0 = side_term(sides[0]), side_term(sides[1])
    if relation == "==":
        if tol_s is None:
            claim: Prop = Rel("=", L0, R0)
        else:
            claim = syntax.conj([Rel("≤", L0, side_term(sides[1], tol_s)), Rel("≤", R0, side_term(sides[0], tol_s))])
    elif relation in ("<=", "<"):
        claim = Rel("≤" if relation == "<=" else "<", L0, side_term(sides[1], tol_s))
    else:  # pragma: no cover - normalised above
        raise NotExpressible(f"relation {relation}")
    how = f"variables scaled by 10^{d}; the expression as written"
    if den != 1:
        how += f"; both sides multiplied by {den} to clear denominators"
    if moved[0] or moved[1]:
        how += "; subtracted terms moved to the other side"
    return _finish(claim), d, how
