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
class CheckReport:
    rows: tuple[Row, ...]
    version: str
    how: str
    seconds: float
    files: int
    stray_errors: tuple[str, ...] = ()
    jobs: int = 1
    cpu_seconds: float = 0.0

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
        return {"lean_version": self.version, "lean_found_via": self.how, "seconds": round(self.seconds, 3),
                "lean_processes": self.jobs, "lean_cpu_seconds": round(self.cpu_seconds, 3),
                "files": self.files, "obligations": len(self.rows), "counts": self.counts(),
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
                       max(1, min(jobs, len(files))), res.cpu_seconds)


def render(report: CheckReport) -> str:
    lines = [f"Lean: {report.version} (via {report.how})",
             f"checked {len(report.rows)} obligation(s) in {report.files} file(s), "
             f"{report.jobs} Lean process(es), {report.seconds:.2f} s wall, "
             f"{report.cpu_seconds:.2f} s CPU"]
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
