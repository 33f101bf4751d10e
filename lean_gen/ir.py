"""Obligation IR: one closed integer statement per decided gate instance.

Design notes: `docs/architecture.md` (this module's section).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Sequence

from . import syntax
from .claims import NotExpressible, TooLarge
from .syntax import Prop, Rel

# the claim builders and their scaling live in .claims; these names stay
# importable from here
from .claims import common_decimals, decimals, label_code, scaled  # noqa: F401,E402
from mmverify.errors import MmverifyError

if TYPE_CHECKING:
    from mmverify.gates.formtable import FormName
    from mmverify.gates.model import Level, Severity, Verdict

EXPECT_PROVED = "proved"
EXPECT_REFUTED = "refuted"


# Resource limits of one kernel obligation. Beyond them a 2021-era elaborator
# gives up (Decidable synthesis of a disjunction of ~120 equalities exceeds its
# size limit; a sum of ~1000 literals its recursion depth), so a larger claim is
# reported as not expressible (listed in the file header), never truncated.
MAX_CONNECTIVE_PARTS = 48
MAX_RELATION_LITERALS = 150


class IRAgreementError(MmverifyError, AssertionError):
    """The exact claim disagrees with the gate verdict: a bug in one of the layers."""


# ---------------------------------------------------------------------------- data


@dataclass(frozen=True)
class Obligation:
    """One closed Lean obligation of one gate instance."""

    name: str                      # sanitised Lean identifier (unique in its file)
    task_id: str
    gate_id: str
    index: int | None
    form: FormName
    level: Level
    severity: Severity
    claim: Prop                    # the gate predicate at these values
    holds: bool                    # gate verdict: pass -> True, fail (violated) -> False
    decimals: int                  # d of the common scale S = 10^d
    sources: tuple[str, ...]       # concrete artifact paths read (anchor text, sanitised on output)
    units: tuple[str, ...]         # x-unit of each source, "" when the schema gives none
    encoding: str                  # how the values were encoded (our own text)
    tolerance: str | None = None   # declared tolerance (anchor decimal text)
    expr: str | None = None        # identity: the anchor's expression text

    @property
    def reads(self) -> tuple[str, ...]:
        """The artifact values the statement reads (paths of its literals, in order)."""
        return reads(self.claim)

    @property
    def tautology(self) -> bool:
        return is_tautology(self.claim)

    @property
    def statement(self) -> Prop:
        return self.claim if self.holds else syntax.Not(self.claim)

    @property
    def expected(self) -> str:
        return EXPECT_PROVED if self.holds else EXPECT_REFUTED

    @property
    def gate_verdict(self) -> str:
        return "pass" if self.holds else "fail"

    @property
    def instance_name(self) -> str:
        return self.gate_id if self.index is None else f"{self.gate_id}[{self.index}]"

    @property
    def statement_text(self) -> str:
        return syntax.print_prop(self.statement)


@dataclass(frozen=True)
class Unstated:
    """A gate instance with no obligation: a gap, a fail the predicate could not
    decide, one independent of the artifact's values, or one whose statement
    another file already proves."""

    gate_id: str
    index: int | None
    form: FormName
    verdict: Verdict               # gap | fail
    reason: str                    # missing | empty_list | not_a_number | not_a_label | undefined |
                                   # not_expressible | too_large (see MAX_CONNECTIVE_PARTS) |
                                   # independent_of_values (its truth does not depend on any
                                   # value the artifact supplies, e.g. a value compared with itself) |
                                   # same_as_oracle (a panel file's instance whose statement the
                                   # oracle's file proves; see project.without_repeats)
    sources: tuple[str, ...]

    @property
    def instance_name(self) -> str:
        return self.gate_id if self.index is None else f"{self.gate_id}[{self.index}]"


VOUCHED_REPLAY = "replay"
VOUCHED_LABEL = "label"


@dataclass(frozen=True)
class Vouched:
    """A decided gate instance whose deciding check the kernel cannot see, named
    and never counted among kernel obligations:

    * ``replay``: every value it reads is derived by a replay of the plan
      (``$replay.`` paths: a feasibility flag, a regret, a missed area), or it
      compares a claim with a replayed value that reproduces it exactly (its
      statement would be ``34 = 34``); the replay is the judge, and the kernel
      would only compare a number Python computed with a constant or itself;
    * ``label``: a finite domain over labels; the check is the gate layer's
      comparison of normalised texts, which no Lean file may contain (only
      their codes could be compared).

    ``statement`` is the integer statement that would have been emitted, kept
    for the report (the IR evaluator has checked it agrees with the gate)."""

    gate_id: str
    index: int | None
    form: FormName
    severity: Severity
    verdict: Verdict
    kind: str                      # VOUCHED_REPLAY | VOUCHED_LABEL
    sources: tuple[str, ...]
    statement: Prop

    @property
    def instance_name(self) -> str:
        return self.gate_id if self.index is None else f"{self.gate_id}[{self.index}]"


@dataclass(frozen=True)
class ObligationSet:
    """Every obligation of one artifact against one task (one Lean file)."""

    task_id: str
    artifact: str                  # "oracle", "paper <id>", "paper <id> (original)" or a file label
    module: str                    # Lean namespace / module tail, e.g. Cumcm2024ADragonDance
    obligations: tuple[Obligation, ...]
    unstated: tuple[Unstated, ...] = ()
    origin: str = ""               # where the values came from (anchor-relative text)
    vouched: tuple[Vouched, ...] = ()

    @property
    def tautologies(self) -> int:
        return sum(1 for o in self.obligations if o.tautology)

    @property
    def proved_expected(self) -> int:
        return sum(1 for o in self.obligations if o.holds)

    @property
    def refuted_expected(self) -> int:
        return sum(1 for o in self.obligations if not o.holds)


# ------------------------------------------------------------------------ naming

_NON_IDENT = re.compile(r"[^A-Za-z0-9]+")


def sanitise_ident(text: str) -> str:
    """A Lean identifier from anchor text: runs of other characters become one ``_``."""
    out = _NON_IDENT.sub("_", text).strip("_")
    if not out:
        out = "x"
    if out[0].isdigit():
        out = "o_" + out
    return out


def camel(text: str) -> str:
    """``cumcm-2024-a-dragon-dance`` -> ``Cumcm2024ADragonDance``."""
    parts = [p for p in _NON_IDENT.split(text) if p]
    out = "".join(p[:1].upper() + p[1:] for p in parts) or "X"
    if out[0].isdigit():
        out = "T" + out
    return out


def obligation_name(task_id: str, gate_id: str, index: int | None) -> str:
    base = f"{task_id}_{gate_id}"
    if index is not None:
        base += f"_{index}"
    return sanitise_ident(base)


def unique_names(names: Sequence[str]) -> list[str]:
    """Deterministic disambiguation: a repeated name gets ``_c2``, ``_c3`` … in order."""
    seen: set[str] = set()
    out = []
    for n in names:
        cand, k = n, 1
        while cand in seen:
            k += 1
            cand = f"{n}_c{k}"
        seen.add(cand)
        out.append(cand)
    if len(set(out)) != len(out):  # pragma: no cover - by construction
        raise AssertionError("name collision")
    return out


# ------------------------------------------------------- what a claim reads

REPLAY_PREFIX = "$replay."


def is_replay_path(path: str) -> bool:
    return path.startswith(REPLAY_PREFIX)


def _lits(p: Prop) -> list[syntax.Lit]:
    return [lit for r in syntax.relations(p) for side in (r.left, r.right) for lit in syntax.term_literals(side)]


def reads(p: Prop) -> tuple[str, ...]:
    """The artifact paths the literals of ``p`` stand for, first occurrence order
    (a replayed value is not the artifact's)."""
    out: list[str] = []
    for lit in _lits(p):
        if lit.src is not None and not is_replay_path(lit.src) and lit.src not in out:
            out.append(lit.src)
    return tuple(out)


def side_reads(r: Rel) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The artifact paths each side of one relation reads."""
    def one(t):
        out = []
        for lit in syntax.term_literals(t):
            if lit.src is not None and not is_replay_path(lit.src) and lit.src not in out:
                out.append(lit.src)
        return tuple(out)
    return one(r.left), one(r.right)


def is_tautology(p: Prop) -> bool:
    """Every relation of the statement compares two identical terms, whatever
    connectives join them (``1745 = 1745``, ``6 ≤ 6 ∧ 6 ≤ 6``, ``7 ≤ 7 ∨ 7 ≤ 7``):
    the kernel only confirms that a text equals itself. A domain check such
    as ``1 = 0 ∨ 1 = 1`` has a relation between different terms: not one."""
    rels = list(syntax.relations(p))
    return bool(rels) and all(r.op != "<" and r.left == r.right for r in rels)


def substitute(p: Prop, src: str, value: int) -> Prop:
    """``p`` with every literal read from ``src`` set to ``value`` (the
    statement the same gate would give if the artifact held that scaled value)."""
    def term(t):
        if isinstance(t, syntax.Lit):
            return syntax.Lit(value, syntax.INT if value < 0 else t.ty, src) if t.src == src else t
        if isinstance(t, syntax.Add):
            return syntax.Add(tuple(term(x) for x in t.terms))
        if isinstance(t, syntax.Mul):
            return syntax.Mul(tuple(term(x) for x in t.factors))
        if isinstance(t, syntax.Sub):
            return syntax.Sub(term(t.left), term(t.right))
        return syntax.Mod(term(t.left), term(t.right))

    def prop(q):
        if not isinstance(q, (Rel, syntax.Not, syntax.And, syntax.Or)):
            return term(q)
        if isinstance(q, Rel):
            return Rel(q.op, term(q.left), term(q.right))
        if isinstance(q, syntax.Not):
            return syntax.Not(prop(q.body))
        if isinstance(q, syntax.And):
            return syntax.And(tuple(prop(x) for x in q.parts))
        return syntax.Or(tuple(prop(x) for x in q.parts))
    return prop(p)


def _candidates(p: Prop, current: int) -> list[int]:
    """Values to try for one input: near it, near every other literal, far away."""
    lits = {lit.value for lit in _lits(p)}
    big = max([abs(v) for v in lits] + [1])
    out = {current + e for e in (-2, -1, 1, 2)}
    out |= {s * v + e for v in lits for s in (1, -1) for e in (-1, 0, 1)}
    out |= {10 ** k for k in range(len(str(big)) + 3)} | {-(10 ** k) for k in range(len(str(big)) + 3)}
    out |= {2 * big + 1, -(2 * big + 1), big * big + 1}
    out.discard(current)
    return sorted(out, key=lambda v: (abs(v - current), v))


def _roots(p: Prop, src: str, current: int) -> set[int]:
    """Where each relation's ``left - right`` crosses zero, were it linear in ``src``
    (exact for a linear relation; a step towards the crossing otherwise)."""
    out: set[int] = set()
    for r in syntax.relations(p):
        try:
            f0 = syntax.eval_term(substitute(r.left, src, current)) - syntax.eval_term(substitute(r.right, src, current))
            f1 = (syntax.eval_term(substitute(r.left, src, current + 1))
                  - syntax.eval_term(substitute(r.right, src, current + 1)))
        except ValueError:
            continue
        if f1 != f0:
            x0 = current - (f0 // (f1 - f0) if (f1 - f0) > 0 else -((-f0) // (f0 - f1)))
            out |= {x0 + e for e in (-2, -1, 0, 1, 2)}
    return out


def independent_of_values(p: Prop) -> bool:
    """Whether the truth of ``p`` cannot depend on any value the artifact
    supplies: it reads none, or each of its relations has two sides that are
    the same function of the values read (``x = x``, ``v * v ≤ v * v``: one
    value compared with itself). Decided by evaluating ``left - right`` at
    fixed pseudo-random points (a polynomial that vanishes at all of them is
    zero, up to a chance below 10^-30)."""
    srcs = reads(p)
    if not srcs:
        return True
    import random

    rng = random.Random(20260)
    points = [{s: rng.randrange(10 ** 12, 10 ** 13) for s in srcs} for _ in range(3)]
    for r in syntax.relations(p):
        for point in points:
            left, right = r.left, r.right
            for s_, v in point.items():
                left, right = substitute(left, s_, v), substitute(right, s_, v)
            if syntax.eval_term(left) != syntax.eval_term(right):
                return False
    return True


def falsifier(p: Prop) -> tuple[str, int] | None:
    """An artifact input of ``p`` and a (scaled) value for it that flips the
    truth of ``p`` (None: ``p`` is independent of every value it reads). A
    negative value is tried only where it keeps every ``%`` operand non-negative."""
    truth = syntax.eval_prop(p)
    for src in reads(p):
        current = next(lit.value for lit in _lits(p) if lit.src == src)
        for v in sorted(_roots(p, src, current) - {current}) + _candidates(p, current):
            try:
                if syntax.eval_prop(substitute(p, src, v)) != truth:
                    return src, v
            except ValueError:
                continue
    return None


# --------------------------------------------------------------- from gates


def schema_unit(task: Any, path_text: str) -> str:
    from mmverify.reading import paths
    from mmverify.tasks import schema_at

    try:
        sub = schema_at(task.artifact_schema, paths.parse_path(path_text))
    except Exception:
        return ""
    if isinstance(sub, dict) and isinstance(sub.get("x-unit"), str):
        return sub["x-unit"]
    return ""


def _gate_expr(task: Any, gate_id: str) -> str | None:
    for g in task.gates:
        if g.get("id") == gate_id and g.get("form") == "identity":
            return g.get("expr")
    return None


def check_size(claim: Prop) -> None:
    """NotExpressible when one theorem would exceed the limits above."""
    def parts(p: Prop) -> int:
        if isinstance(p, (syntax.And, syntax.Or)):
            return max([len(p.parts)] + [parts(x) for x in p.parts])
        if isinstance(p, syntax.Not):
            return parts(p.body)
        return 0

    if parts(claim) > MAX_CONNECTIVE_PARTS:
        raise TooLarge(f"more than {MAX_CONNECTIVE_PARTS} alternatives or conjuncts in one obligation")
    for r in syntax.relations(claim):
        n = sum(1 for side in (r.left, r.right) for _ in syntax.term_literals(side))
        if n > MAX_RELATION_LITERALS:
            raise TooLarge(f"more than {MAX_RELATION_LITERALS} literals in one relation")


def claim_of(inst: Any) -> tuple[Prop, int, str]:
    """The claim of one decided gate instance (see the module table)."""
    tol = inst.tolerance_value or Fraction(0)
    from mmverify.gates.formtable import FORM_TABLE

    form = FORM_TABLE.get(inst.form)
    if form is not None:
        return form.claim(inst, tol)
    raise NotExpressible(f"unknown form {inst.form!r}")


def vouched_kind(inst: Any, claim: Prop) -> str | None:
    """Why the kernel cannot decide this instance (see :class:`Vouched`), or None."""
    if inst.paths and all(is_replay_path(p) for p in inst.paths):
        return VOUCHED_REPLAY
    if any(is_replay_path(p) for p in inst.paths) and is_tautology(claim):
        return VOUCHED_REPLAY    # a claim the replay reproduced exactly: a replayed number compared with itself
    if inst.form == "finite_domain" and getattr(inst, "label", None) is not None:
        return VOUCHED_LABEL
    return None


def obligation_set(task: Any, report: Any, artifact: str, module: str, origin: str = "") -> ObligationSet:
    """The obligations of one gate report (``mmverify.gates.GateReport``)."""
    drafts: list[dict[str, Any]] = []
    unstated: list[Unstated] = []
    vouched: list[Vouched] = []
    for inst in report.instances:
        sources = tuple(inst.paths)
        if inst.verdict == "gap" or not inst.decided:
            unstated.append(Unstated(inst.gate_id, inst.index, inst.form, inst.verdict,
                                     inst.reason or inst.verdict, sources))
            continue
        holds = inst.verdict == "pass"
        try:
            claim, d, how = claim_of(inst)
            check_size(claim)
        except NotExpressible as exc:
            unstated.append(Unstated(inst.gate_id, inst.index, inst.form, inst.verdict,
                                     "too_large" if isinstance(exc, TooLarge) else "not_expressible", sources))
            continue
        if syntax.eval_prop(claim) != holds:
            raise IRAgreementError(
                f"{task.id} {inst.name}: gate verdict {inst.verdict} but the integer claim "
                f"evaluates to {not holds}: {syntax.print_prop(claim)}")
        problems = syntax.check_types(claim)
        if problems:  # pragma: no cover - by construction
            raise AssertionError("; ".join(problems))
        kind = vouched_kind(inst, claim)
        if kind is not None:
            vouched.append(Vouched(inst.gate_id, inst.index, inst.form, inst.severity, inst.verdict, kind,
                                   sources, claim if holds else syntax.Not(claim)))
            continue
        if independent_of_values(claim):
            unstated.append(Unstated(inst.gate_id, inst.index, inst.form, inst.verdict,
                                     "independent_of_values", sources))
            continue
        drafts.append(dict(
            task_id=task.id, gate_id=inst.gate_id, index=inst.index, form=inst.form, level=inst.level,
            severity=inst.severity, claim=claim, holds=holds, decimals=d, sources=sources,
            units=tuple(schema_unit(task, p) for p in sources), encoding=how, tolerance=inst.tolerance,
            expr=_gate_expr(task, inst.gate_id) if inst.form == "identity" else None,
            base=obligation_name(task.id, inst.gate_id, inst.index)))
    names = unique_names([x.pop("base") for x in drafts] if drafts else [])
    obligations = tuple(Obligation(name=n, **x) for n, x in zip(names, drafts))
    return ObligationSet(task.id, artifact, module, obligations, tuple(unstated), origin, tuple(vouched))
