"""Gate/Lean agreement: check generated files with Lean and compare verdicts.

For every obligation the gate layer expects one Lean result: ``proved`` for a
passing instance (the claim) or ``refuted`` for a violated one (``¬ claim``).
Anything else — a theorem that does not elaborate, an audit outside
{propext, Quot.sound}, a missing result — is a disagreement, i.e. a bug in one
of the two layers.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from . import runner
from .ir import VOUCHED_LABEL, VOUCHED_REPLAY, side_reads
from .project import LeanFile

if TYPE_CHECKING:
    from mmverify.gates.model import Verdict


@dataclass(frozen=True)
class Row:
    file: str                  # relpath
    task_id: str
    name: str                  # full Lean name
    instance: str              # gate instance (gate id [index])
    gate_verdict: Verdict      # pass / fail
    expected: str              # proved / refuted
    lean: str                  # runner status, or "missing"
    axioms: tuple[str, ...] | None
    errors: tuple[str, ...]

    @property
    def agree(self) -> bool:
        return self.lean == self.expected

    def as_dict(self) -> dict:
        return {"file": self.file, "task": self.task_id, "theorem": self.name, "instance": self.instance,
                "gate_verdict": self.gate_verdict, "expected": self.expected, "lean": self.lean,
                "agree": self.agree, "axioms": list(self.axioms) if self.axioms is not None else None,
                "errors": list(self.errors)}


@dataclass(frozen=True)
class Ledger:
    """What a set of files credits to the kernel and what it does not (no Lean needed):
    obligations, tautologies among them, vouched records by kind, instances
    without an obligation by reason, and the statement sizes."""

    obligations: int
    tautologies: int
    vouched: dict[str, int]
    unstated: dict[str, int]
    by_form: dict[str, int]
    max_literal_digits: int
    mean_literal_digits: float
    tautologies_between_fields: int = 0   # both sides read artifact values (a summary and its detail)

    @property
    def replay_vouched(self) -> int:
        return self.vouched.get(VOUCHED_REPLAY, 0)

    @property
    def label_vouched(self) -> int:
        return self.vouched.get(VOUCHED_LABEL, 0)

    @property
    def tautology_share(self) -> float:
        return self.tautologies / self.obligations if self.obligations else 0.0

    def as_dict(self) -> dict:
        return {"obligations": self.obligations, "tautologies": self.tautologies,
                "tautologies_between_fields": self.tautologies_between_fields,
                "tautologies_against_a_constant": self.tautologies - self.tautologies_between_fields,
                "tautology_share": round(self.tautology_share, 4),
                "replay_vouched": self.replay_vouched, "label_vouched": self.label_vouched,
                "unstated": dict(sorted(self.unstated.items())), "by_form": dict(sorted(self.by_form.items())),
                "max_literal_digits": self.max_literal_digits,
                "mean_literal_digits": round(self.mean_literal_digits, 2)}

    def line(self) -> str:
        return (f"{self.obligations} kernel obligation(s), {self.tautologies} of them tautologies "
                f"({100 * self.tautology_share:.1f} %: {self.tautologies_between_fields} between two fields, "
                f"{self.tautologies - self.tautologies_between_fields} against a constant of the statement or a bound); "
                "vouched outside the kernel, not counted: "
                f"{self.replay_vouched} replay, {self.label_vouched} label")


def ledger(files: Sequence[LeanFile]) -> Ledger:
    from . import syntax

    vouched: dict[str, int] = {}
    unstated: dict[str, int] = {}
    by_form: dict[str, int] = {}
    n = taut = between = 0
    digits: list[int] = []
    for f in files:
        for o in f.oset.obligations:
            n += 1
            taut += o.tautology
            between += o.tautology and all(all(side_reads(r)) for r in syntax.relations(o.claim))
            by_form[o.form] = by_form.get(o.form, 0) + 1
            digits += [len(str(abs(l.value))) for r in syntax.relations(o.claim)
                       for side in (r.left, r.right) for l in syntax.term_literals(side)]
        for v in f.oset.vouched:
            vouched[v.kind] = vouched.get(v.kind, 0) + 1
        for u in f.oset.unstated:
            unstated[u.reason] = unstated.get(u.reason, 0) + 1
    return Ledger(n, taut, vouched, unstated, by_form, max(digits, default=0),
                  sum(digits) / len(digits) if digits else 0.0, between)


@dataclass(frozen=True)
class CheckReport:
    rows: tuple[Row, ...]
    version: str
    how: str
    seconds: float
    files: int
    stray_errors: tuple[str, ...] = ()
    jobs: int = 1
    cpu_seconds: float = 0.0
    ledger: "Ledger | None" = None

    @property
    def kernel_decided(self) -> int:
        """Obligations the kernel decided as the gate did (proved or refuted, clean audit)."""
        return sum(1 for r in self.rows if r.agree)

    @property
    def disagreements(self) -> tuple[Row, ...]:
        return tuple(r for r in self.rows if not r.agree)

    @property
    def ok(self) -> bool:
        return not self.disagreements and not self.stray_errors

    def counts(self) -> dict[str, int]:
        out = {s: 0 for s in runner.STATUSES}
        out["missing"] = 0
        for r in self.rows:
            out[r.lean] = out.get(r.lean, 0) + 1
        return out

    def axiom_sets(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.rows:
            key = "none" if r.axioms == () else ("(no audit line)" if r.axioms is None else ", ".join(r.axioms))
            out[key] = out.get(key, 0) + 1
        return dict(sorted(out.items()))

    def by_task(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for r in self.rows:
            d = out.setdefault(r.task_id, {"obligations": 0, "proved": 0, "refuted": 0, "disagree": 0})
            d["obligations"] += 1
            if r.lean in ("proved", "refuted"):
                d[r.lean] += 1
            if not r.agree:
                d["disagree"] += 1
        return out

    def as_dict(self) -> dict:
        ledger = self.ledger.as_dict() if self.ledger is not None else {}
        return {**ledger, "kernel_decided": self.kernel_decided,
                "lean_version": self.version, "lean_found_via": self.how, "seconds": round(self.seconds, 3),
                "lean_processes": self.jobs, "lean_cpu_seconds": round(self.cpu_seconds, 3),
                "files": self.files, "obligations": len(self.rows), "counts": self.counts(),
                "ms_per_obligation": round(1000 * self.seconds / len(self.rows), 3) if self.rows else None,
                "cpu_ms_per_obligation": round(1000 * self.cpu_seconds / len(self.rows), 3) if self.rows else None,
                "axioms": self.axiom_sets(), "agree": self.ok,
                "disagreements": [r.as_dict() for r in self.disagreements],
                "stray_errors": list(self.stray_errors), "by_task": self.by_task(),
                "rows": [r.as_dict() for r in self.rows]}


def check_files(files: Sequence[LeanFile], toolchain: runner.Toolchain | None = None,
                timeout: float = runner.DEFAULT_TIMEOUT, jobs: int = 1) -> CheckReport:
    """All files in ONE Lean process (or ``jobs`` side by side); one row per obligation."""
    toolchain = toolchain or runner.find_lean()
    res = runner.check_files([f.text for f in files], toolchain, timeout, jobs)
    rows = []
    for f in files:
        for o in f.oset.obligations:
            full = f"{f.oset.module}.{o.name}"
            r = res.results.get(full)
            rows.append(Row(f.relpath, o.task_id, full, o.instance_name, o.gate_verdict, o.expected,
                            r.status if r else "missing", r.axioms if r else None, r.errors if r else ()))
    return CheckReport(tuple(rows), res.version, res.how, res.seconds, len(files), res.stray_errors,
                       max(1, min(jobs, len(files))), res.cpu_seconds, ledger(files))


def render(report: CheckReport) -> str:
    lines = [f"Lean: {report.version} (via {report.how})",
             f"checked {len(report.rows)} obligation(s) in {report.files} file(s), "
             f"{report.jobs} Lean process(es), {report.seconds:.2f} s wall, "
             f"{report.cpu_seconds:.2f} s CPU"]
    if report.ledger is not None:
        lines.append(f"kernel-decided {report.kernel_decided} of " + report.ledger.line())
        if report.rows:
            lines.append(f"cost: {1000 * report.seconds / len(report.rows):.2f} ms wall, "
                         f"{1000 * report.cpu_seconds / len(report.rows):.2f} ms CPU per obligation")
    c = report.counts()
    lines.append("results: " + ", ".join(f"{k} {v}" for k, v in c.items() if v or k in ("proved", "refuted")))
    lines.append("axioms: " + "; ".join(f"{k}: {v}" for k, v in report.axiom_sets().items()))
    lines.append("")
    lines.append(f"{'task':<36} {'oblig':>6} {'proved':>7} {'refuted':>8} {'disagree':>9}")
    for task, d in report.by_task().items():
        lines.append(f"{task:<36} {d['obligations']:>6} {d['proved']:>7} {d['refuted']:>8} {d['disagree']:>9}")
    if report.stray_errors:
        lines.append("")
        lines.append("errors outside any theorem:")
        lines += [f"  {e}" for e in report.stray_errors[:20]]
    if report.disagreements:
        lines.append("")
        lines.append(f"DISAGREEMENTS ({len(report.disagreements)}): gate verdict vs Lean")
        for r in report.disagreements[:50]:
            why = r.errors[0].splitlines()[0] if r.errors else (
                f"axioms {list(r.axioms)}" if r.axioms is not None else "no audit line")
            lines.append(f"  {r.file} {r.instance}: gate {r.gate_verdict}, expected {r.expected}, "
                         f"Lean {r.lean} ({why})")
    else:
        lines.append("")
        lines.append("agreement: every gate verdict matches its Lean result")
    return "\n".join(lines) + "\n"
