"""Obligation IR: one closed integer statement per decided gate instance.

Every value of a gate instance is an exact :class:`~fractions.Fraction` (from
decimal text). An obligation scales them to integers and states the gate's
predicate as a relation over integer literals (module :mod:`.syntax`):

* **scale**: each obligation has one common decimal scale ``S = 10^d``, ``d``
  the most decimal places any of its artifact or bound values needs, so a value
  ``x`` stands as the integer ``x·S`` (``x = 1.246266`` at ``d = 6`` is
  ``1246266``). Constants written in an identity and a declared tolerance keep
  their own exact denominators; every denominator is cleared by multiplying the
  whole relation through, factor by factor, so the statement stays readable
  (``1246266 * 1604793 ≤ 2 * 1000000 * 1000000`` for ``v·r ≤ 2`` at ``d = 6``).
* **type**: Nat when every literal is non-negative (closed Nat comparisons are
  reduced by the kernel on GMP literals); otherwise every literal of the
  statement is an ``Int`` ascription. Tolerances are moved to the side where
  they add (``x ≤ hi + tol``, ``lo ≤ x + tol``) so that no subtraction is needed.
* **polarity**: the *claim* is the gate predicate at the artifact's values. A
  ``pass`` instance is emitted as the claim (the kernel proves it); a
  ``fail`` by violation as ``¬ (claim)`` (the kernel confirms the violation).
  A ``gap`` (input absent) gives no obligation; neither does a fail the exact
  predicate could not decide (wrong JSON type, division by zero): both are
  listed in the file header instead.

The claim of each form, and the label code, are built in :mod:`.claims` (its
docstring has the table).

The IR checks itself: every claim is evaluated exactly in Python and must
agree with the gate verdict (:class:`IRAgreementError` otherwise).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Sequence

from . import syntax
from .claims import NotExpressible, TooLarge
from .syntax import Prop

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
    """A gate instance with no obligation: a gap, or a fail the predicate could not decide."""

    gate_id: str
    index: int | None
    form: FormName
    verdict: Verdict               # gap | fail
    reason: str                    # missing | empty_list | not_a_number | not_a_label | undefined |
                                   # not_expressible | too_large (see MAX_CONNECTIVE_PARTS)
    sources: tuple[str, ...]

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


# --------------------------------------------------------------- from gates


def schema_unit(task: Any, path_text: str) -> str:
    from mmverify import paths
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


def obligation_set(task: Any, report: Any, artifact: str, module: str, origin: str = "") -> ObligationSet:
    """The obligations of one gate report (``mmverify.gates.GateReport``)."""
    drafts: list[dict[str, Any]] = []
    unstated: list[Unstated] = []
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
        drafts.append(dict(
            task_id=task.id, gate_id=inst.gate_id, index=inst.index, form=inst.form, level=inst.level,
            severity=inst.severity, claim=claim, holds=holds, decimals=d, sources=sources,
            units=tuple(schema_unit(task, p) for p in sources), encoding=how, tolerance=inst.tolerance,
            expr=_gate_expr(task, inst.gate_id) if inst.form == "identity" else None,
            base=obligation_name(task.id, inst.gate_id, inst.index)))
    names = unique_names([x.pop("base") for x in drafts] if drafts else [])
    obligations = tuple(Obligation(name=n, **x) for n, x in zip(names, drafts))
    return ObligationSet(task.id, artifact, module, obligations, tuple(unstated), origin)
