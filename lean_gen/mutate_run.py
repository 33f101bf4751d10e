"""Running the mutation suite (:mod:`.mutate`) through Lean: each mutant with
its stillbirth probe, judged killed (by the kernel or the axiom audit),
stillborn or survived; the suite's outcome."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from .mutate import AUDIT, KERNEL, KILLED, OPERATORS, STILLBORN, SURVIVED, Mutant, Operator, mutants


@dataclass(frozen=True)
class MutantOutcome:
    mutant: Mutant
    outcome: str                    # KILLED / STILLBORN / SURVIVED
    rejected_by: str | None         # kernel / audit when killed
    detail: str = ""
    seconds: float = 0.0

    def as_dict(self) -> dict:
        m = self.mutant
        return {"operator": m.operator, "file": m.label, "theorem": m.target, "before": m.before,
                "after": m.after, "expected_rejection": m.expect, "outcome": self.outcome,
                "rejected_by": self.rejected_by, "detail": self.detail, "seconds": round(self.seconds, 3)}


PROBE_NS = "MMVerifyMutantProbe"


def probe_text(m: Mutant) -> str:
    """The mutated statement again, proved by ``sorry``, in its own namespace."""
    stmt = re.match(r"^theorem \S+ : (.+) := ", m.after.split("\n")[-1])
    body = stmt.group(1) if stmt else "True"
    return f"\nnamespace {PROBE_NS}\ntheorem probe : {body} := sorry\nend {PROBE_NS}\n"


def native_spelling(toolchain=None) -> str:
    """``native_decide`` or ``nativeDecide``: whichever the toolchain parses."""
    from . import runner

    text = ("theorem mm_spelling_a : 1 = 1 := by native_decide\n"
            "theorem mm_spelling_b : 1 = 1 := by nativeDecide\n")
    res = runner.check_text(text, toolchain)
    a, b = res.results.get("mm_spelling_a"), res.results.get("mm_spelling_b")
    if a is not None and not a.errors:
        return "native_decide"
    if b is not None and not b.errors:
        return "nativeDecide"
    return "native_decide"


def judge(m: Mutant, toolchain=None, version: str | None = None) -> MutantOutcome:
    """Run one mutant (plus its stillbirth probe) through Lean and classify it."""
    from . import runner

    text = m.text if m.text.endswith("\n") else m.text + "\n"
    res = runner.check_text(text + probe_text(m), toolchain, version=version)
    target = next((r for n, r in res.results.items() if n.split(".")[-1] == m.target
                   and not n.startswith(PROBE_NS)), None)
    probe = res.results.get(f"{PROBE_NS}.probe")
    if target is None:
        return MutantOutcome(m, STILLBORN, None, "the mutated theorem was not found in Lean's output", res.seconds)
    if res.stray_errors or probe is None or probe.errors or target.parse_error:
        why = (list(res.stray_errors) + list(probe.errors if probe else ["probe missing"])
               + (list(target.errors) if target.parse_error else []))
        return MutantOutcome(m, STILLBORN, None, "; ".join(why)[:500], res.seconds)
    if target.status == runner.FAILED:
        return MutantOutcome(m, KILLED, KERNEL, "; ".join(target.errors)[:500], res.seconds)
    if target.status == runner.AUDIT_FAILED:
        ax = ", ".join(target.axioms) if target.axioms is not None else "no audit line"
        return MutantOutcome(m, KILLED, AUDIT, f"axioms: {ax}", res.seconds)
    return MutantOutcome(m, SURVIVED, None, f"accepted; axioms: {', '.join(target.axioms or ())}", res.seconds)


@dataclass(frozen=True)
class SuiteResult:
    outcomes: tuple[MutantOutcome, ...]
    not_applicable: tuple[str, ...]
    version: str
    spelling: str
    seconds: float

    @property
    def killed(self) -> int:
        return sum(1 for o in self.outcomes if o.outcome == KILLED)

    @property
    def stillborn(self) -> int:
        return sum(1 for o in self.outcomes if o.outcome == STILLBORN)

    @property
    def survived(self) -> int:
        return sum(1 for o in self.outcomes if o.outcome == SURVIVED)

    @property
    def total(self) -> int:
        return len(self.outcomes)

    def as_dict(self) -> dict:
        return {"lean_version": self.version, "native_decide_spelling": self.spelling,
                "killed": self.killed, "stillborn": self.stillborn, "survived": self.survived,
                "total": self.total, "not_applicable": list(self.not_applicable),
                "seconds": round(self.seconds, 3), "mutants": [o.as_dict() for o in self.outcomes]}


def run_suite(texts: Sequence[tuple[str, str]], toolchain=None,
              operators: Sequence[Operator] = OPERATORS, extra: Sequence = ()) -> SuiteResult:
    """Every operator's first mutant over ``texts``, then the ``extra`` mutants
    (e.g. :func:`value_mutants`; a bare name stands for one with no site)."""
    import time

    from . import runner

    toolchain = toolchain or runner.find_lean()
    version = toolchain.version()
    t0 = time.perf_counter()
    spelling = native_spelling(toolchain)
    outcomes, missing = [], []
    for item in list(mutants(texts, spelling, operators)) + list(extra):
        if isinstance(item, tuple):
            missing.append(item[0])
            continue
        outcomes.append(judge(item, toolchain, version))
    return SuiteResult(tuple(outcomes), tuple(missing), version, spelling, time.perf_counter() - t0)
