"""The Lean 4 proposition subset mmverify emits: AST, printer, parser, evaluator.

Design notes: `docs/architecture.md` (this module's section).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterator, Union
from mmverify.errors import MmverifyError

NAT = "Nat"
INT = "Int"

# ----------------------------------------------------------------------------- AST


@dataclass(frozen=True)
class Lit:
    value: int
    ty: str = NAT  # NAT: bare numeral (value >= 0); INT: ascribed ``(v : Int)``
    # provenance, not part of the text or of equality: the artifact path whose
    # (scaled) value this literal is, None for a constant of the statement
    # (bound, member, tolerance, scale, coefficient)
    src: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.value, int) or isinstance(self.value, bool):
            raise TypeError("a literal is a Python int")
        if self.ty == NAT and self.value < 0:
            raise ValueError("a Nat literal is non-negative")
        if self.ty not in (NAT, INT):
            raise ValueError(f"unknown literal type {self.ty!r}")


@dataclass(frozen=True)
class Add:
    terms: tuple["Term", ...]


@dataclass(frozen=True)
class Sub:
    left: "Term"
    right: "Term"


@dataclass(frozen=True)
class Mul:
    factors: tuple["Term", ...]


@dataclass(frozen=True)
class Mod:
    """``left % right`` over Nat literals only: the divisibility of a scaled
    value (``x % 10^d``). No negative operand is ever divided (2021-era and
    current Lean 4 round negative division differently)."""

    left: Lit
    right: Lit


Term = Union[Lit, Add, Sub, Mul, Mod]

REL_OPS = ("≤", "<", "=")


@dataclass(frozen=True)
class Rel:
    op: str
    left: Term
    right: Term

    def __post_init__(self) -> None:
        if self.op not in REL_OPS:
            raise ValueError(f"relation {self.op!r} is outside the subset")


@dataclass(frozen=True)
class And:
    parts: tuple["Prop", ...]


@dataclass(frozen=True)
class Or:
    parts: tuple["Prop", ...]


@dataclass(frozen=True)
class Not:
    body: "Prop"


Prop = Union[Rel, And, Or, Not]


def conj(parts: list[Prop] | tuple[Prop, ...]) -> Prop:
    parts = tuple(q for p in parts for q in (p.parts if isinstance(p, And) else (p,)))
    if not parts:
        raise ValueError("an empty conjunction")
    return parts[0] if len(parts) == 1 else And(parts)


def disj(parts: list[Prop] | tuple[Prop, ...]) -> Prop:
    parts = tuple(q for p in parts for q in (p.parts if isinstance(p, Or) else (p,)))
    if not parts:
        raise ValueError("an empty disjunction")
    return parts[0] if len(parts) == 1 else Or(parts)


def product(factors: list[Term]) -> Term:
    flat: list[Term] = []
    for f in factors:
        flat.extend(f.factors if isinstance(f, Mul) else (f,))
    factors = flat
    if not factors:
        raise ValueError("an empty product")
    return factors[0] if len(factors) == 1 else Mul(tuple(factors))


def total(terms: list[Term]) -> Term:
    flat: list[Term] = []
    for t in terms:
        flat.extend(t.terms if isinstance(t, Add) else (t,))
    terms = flat
    if not terms:
        raise ValueError("an empty sum")
    return terms[0] if len(terms) == 1 else Add(tuple(terms))


# -------------------------------------------------------------------------- printer


# A Nat relation with more literals than this has every literal ascribed
# ``(n : Nat)``: without binop% (2021 elaborators) long chains of bare numerals
# elaborate in super-linear time (a sum of 80 bare numerals takes ~20 s, one
# of 200 exceeds the heartbeat limit; ascribed, 200 take ~5 s). Short relations
# stay bare, e.g. ``1246266 * 1604793 ≤ 2 * 1000000 * 1000000``.
NAT_ASCRIBE_ABOVE = 6


def _lit(t: Lit, ascribe: bool = False) -> str:
    if t.ty == NAT:
        return f"({t.value} : Nat)" if ascribe else str(t.value)
    return f"({t.value} : Int)"


def print_term(t: Term, ctx: str = "top", ascribe: bool = False) -> str:
    """``ctx``: 'top' (relation side), 'add' (left of '-'), 'addterm' (a summand),
    'sub_right' (right of '-'), 'mul' (a factor). ``ascribe``: Nat literals as ``(n : Nat)``."""
    if isinstance(t, Lit):
        return _lit(t, ascribe)
    if isinstance(t, Mul):
        return " * ".join(print_term(f, "mul", ascribe) for f in t.factors)
    if isinstance(t, Add):
        text = " + ".join(print_term(x, "addterm", ascribe) for x in t.terms)
        return f"({text})" if ctx in ("mul", "sub_right") else text
    if isinstance(t, Sub):
        text = f"{print_term(t.left, 'add', ascribe)} - {print_term(t.right, 'sub_right', ascribe)}"
        return f"({text})" if ctx in ("mul", "sub_right", "addterm") else text
    if isinstance(t, Mod):
        text = f"{_lit(t.left, ascribe)} % {_lit(t.right, ascribe)}"
        return f"({text})" if ctx in ("mul", "sub_right") else text
    raise TypeError(f"not a term: {t!r}")


def print_prop(p: Prop, ctx: str = "top") -> str:
    if isinstance(p, Rel):
        n = sum(1 for side in (p.left, p.right) for _ in term_literals(side))
        asc = n > NAT_ASCRIBE_ABOVE
        return f"{print_term(p.left, ascribe=asc)} {p.op} {print_term(p.right, ascribe=asc)}"
    if isinstance(p, Not):
        return f"¬ ({print_prop(p.body)})"
    if isinstance(p, And):
        text = " ∧ ".join(print_prop(x, "and") for x in p.parts)
        return f"({text})" if ctx in ("and", "or") else text
    if isinstance(p, Or):
        text = " ∨ ".join(print_prop(x, "or") for x in p.parts)
        return f"({text})" if ctx in ("and", "or") else text
    raise TypeError(f"not a proposition: {p!r}")


# ------------------------------------------------------------------------ evaluator


def eval_term(t: Term) -> int:
    if isinstance(t, Lit):
        return t.value
    if isinstance(t, Add):
        return sum(eval_term(x) for x in t.terms)
    if isinstance(t, Sub):
        return eval_term(t.left) - eval_term(t.right)
    if isinstance(t, Mul):
        out = 1
        for f in t.factors:
            out *= eval_term(f)
        return out
    if isinstance(t, Mod):
        a, b = eval_term(t.left), eval_term(t.right)
        if a < 0 or b <= 0:
            raise ValueError("a modulo of a negative or zero operand is outside the subset")
        return a % b
    raise TypeError(f"not a term: {t!r}")


def eval_prop(p: Prop) -> bool:
    if isinstance(p, Rel):
        a, b = eval_term(p.left), eval_term(p.right)
        return a <= b if p.op == "≤" else a < b if p.op == "<" else a == b
    if isinstance(p, Not):
        return not eval_prop(p.body)
    if isinstance(p, And):
        return all(eval_prop(x) for x in p.parts)
    if isinstance(p, Or):
        return any(eval_prop(x) for x in p.parts)
    raise TypeError(f"not a proposition: {p!r}")


def term_literals(t: Term) -> Iterator[Lit]:
    if isinstance(t, Lit):
        yield t
    elif isinstance(t, (Add, Mul)):
        for x in (t.terms if isinstance(t, Add) else t.factors):
            yield from term_literals(x)
    elif isinstance(t, (Sub, Mod)):
        yield from term_literals(t.left)
        yield from term_literals(t.right)


def term_has(t: Term, kind: type) -> bool:
    """Whether ``t`` holds a node of ``kind`` (through sums, products and differences)."""
    if isinstance(t, kind):
        return True
    if isinstance(t, Add):
        return any(term_has(x, kind) for x in t.terms)
    if isinstance(t, Mul):
        return any(term_has(x, kind) for x in t.factors)
    if isinstance(t, Sub):
        return term_has(t.left, kind) or term_has(t.right, kind)
    return False


def term_has_sub(t: Term) -> bool:
    return term_has(t, Sub)


def relations(p: Prop) -> Iterator[Rel]:
    if isinstance(p, Rel):
        yield p
    elif isinstance(p, Not):
        yield from relations(p.body)
    else:
        for x in p.parts:
            yield from relations(x)


def term_has_mod(t: Term) -> bool:
    return term_has(t, Mod)


def check_types(p: Prop) -> list[str]:
    """Problems with literal typing: mixed Nat/Int in one relation, Nat
    subtraction, a modulo outside Nat or by zero."""
    problems = []
    for r in relations(p):
        tys = {lit.ty for side in (r.left, r.right) for lit in term_literals(side)}
        if len(tys) > 1:
            problems.append(f"relation mixes Nat and Int literals: {print_prop(r)}")
        if NAT in tys and (term_has_sub(r.left) or term_has_sub(r.right)):
            problems.append(f"subtraction in a Nat relation (truncating): {print_prop(r)}")
        if INT in tys and (term_has_mod(r.left) or term_has_mod(r.right)):
            problems.append(f"modulo in an Int relation (rounding differs between Lean versions): {print_prop(r)}")
        for m in _mods(r.left) + _mods(r.right):
            if m.right.value == 0:
                problems.append(f"modulo by zero: {print_prop(r)}")
    return problems


def _mods(t: Term) -> list["Mod"]:
    if isinstance(t, Mod):
        return [t]
    if isinstance(t, (Add, Mul)):
        return [m for x in (t.terms if isinstance(t, Add) else t.factors) for m in _mods(x)]
    if isinstance(t, Sub):
        return _mods(t.left) + _mods(t.right)
    return []


# ------------------------------------------------------------------------ tokenizer

TOKEN_SPEC = [
    ("WS", r"[ \t]+"),
    ("NUM", r"[0-9]+"),
    ("IDENT", r"[A-Za-z_][A-Za-z0-9_]*"),
    ("SYM", r"≤|<|=|¬|∧|∨|\+|-|\*|%|\(|\)|:"),
]
_TOKEN_RE = re.compile("|".join(f"(?P<{n}>{p})" for n, p in TOKEN_SPEC))


class ParseError(MmverifyError, ValueError):
    pass


def tokenize(text: str) -> list[tuple[str, str]]:
    out = []
    pos = 0
    while pos < len(text):
        m = _TOKEN_RE.match(text, pos)
        if not m:
            raise ParseError(f"unexpected character {text[pos]!r} at offset {pos}")
        kind = m.lastgroup
        if kind != "WS":
            out.append((kind, m.group(0)))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]]):
        self.toks = tokens
        self.i = 0

    def peek(self, k: int = 0) -> tuple[str, str] | None:
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else None

    def take(self, value: str | None = None, kind: str | None = None) -> tuple[str, str]:
        tok = self.peek()
        if tok is None:
            raise ParseError(f"unexpected end, expected {value or kind}")
        if (value is not None and tok[1] != value) or (kind is not None and tok[0] != kind):
            raise ParseError(f"unexpected {tok[1]!r}, expected {value or kind}")
        self.i += 1
        return tok

    def at(self, value: str) -> bool:
        tok = self.peek()
        return tok is not None and tok[1] == value

    # propositions
    def prop(self) -> Prop:
        parts = [self.conj()]
        while self.at("∨"):
            self.take("∨")
            parts.append(self.conj())
        return disj(parts)

    def conj(self) -> Prop:
        parts = [self.unary()]
        while self.at("∧"):
            self.take("∧")
            parts.append(self.unary())
        return conj(parts)

    def unary(self) -> Prop:
        if self.at("¬"):
            self.take("¬")
            self.take("(")
            body = self.prop()
            self.take(")")
            return Not(body)
        if self.at("("):
            save = self.i
            try:
                return self.rel()
            except ParseError:
                self.i = save
            self.take("(")
            inner = self.prop()
            self.take(")")
            if isinstance(inner, Rel):
                raise ParseError("a parenthesised single relation is not emitted by mmverify")
            return inner
        return self.rel()

    def rel(self) -> Rel:
        left = self.term()
        tok = self.peek()
        if tok is None or tok[1] not in REL_OPS:
            raise ParseError(f"expected a relation, got {tok[1] if tok else 'end'!r}")
        self.i += 1
        right = self.term()
        return Rel(tok[1], left, right)

    # terms
    def term(self) -> Term:
        left = self.sum_chain()
        while self.at("-"):
            self.take("-")
            right = self.mul()
            left = Sub(left, right)
            if self.at("+"):
                raise ParseError("'+' after '-' is not emitted without parentheses")
        return left

    def sum_chain(self) -> Term:
        terms = [self.mul()]
        while self.at("+"):
            self.take("+")
            terms.append(self.mul())
        return total(terms)

    def mul(self) -> Term:
        factors = [self.atom()]
        if self.at("%"):
            self.take("%")
            right = self.atom()
            if not (isinstance(factors[0], Lit) and isinstance(right, Lit)):
                raise ParseError("'%' is emitted between two literals only")
            if self.at("*") or self.at("%"):
                raise ParseError("'%' is not chained without parentheses")
            return Mod(factors[0], right)
        while self.at("*"):
            self.take("*")
            factors.append(self.atom())
        return product(factors)

    def atom(self) -> Term:
        tok = self.peek()
        if tok is None:
            raise ParseError("unexpected end, expected a term")
        if tok[0] == "NUM":
            self.i += 1
            if len(tok[1]) > 1 and tok[1][0] == "0":
                raise ParseError(f"numeral with a leading zero {tok[1]!r}")
            return Lit(int(tok[1]), NAT)
        if tok[1] == "(":
            # ascribed literal?
            a, b, c = self.peek(1), self.peek(2), self.peek(3)
            if a and a[0] == "NUM" and b and b[1] == ":":
                self.take("(")
                n = int(self.take(kind="NUM")[1])
                self.take(":")
                ty = self.take(kind="IDENT")[1]
                self.take(")")
                if ty not in (INT, NAT):
                    raise ParseError(f"only Int and Nat ascriptions are emitted, got {ty!r}")
                return Lit(n, ty)
            if a and a[1] == "-" and b and b[0] == "NUM" and c and c[1] == ":":
                self.take("(")
                self.take("-")
                n = int(self.take(kind="NUM")[1])
                self.take(":")
                ty = self.take(kind="IDENT")[1]
                self.take(")")
                if ty != INT or n == 0:
                    raise ParseError("a negative literal is written (-n : Int) with n > 0")
                return Lit(-n, INT)
            self.take("(")
            inner = self.term()
            self.take(")")
            if isinstance(inner, (Lit, Mul)):
                raise ParseError("redundant parentheses are not emitted by mmverify")
            return inner
        raise ParseError(f"unexpected {tok[1]!r}, expected a term")


def parse_prop(text: str) -> Prop:
    """Parse a statement of the subset (raises :class:`ParseError`)."""
    p = _Parser(tokenize(text))
    out = p.prop()
    if p.peek() is not None:
        raise ParseError(f"trailing input at {p.peek()[1]!r}")
    return out
