"""Invariants every result must satisfy, whatever the artifact held.

Shared by the corpus tests and the hypothesis fuzzers, so that both check the
same promises:

* :func:`check_report` — a :class:`mmverify.pipeline.report.Report` with a known status,
  O-EVAL exact and in [0, 1] (0 for a forced failure), closeness in [0, 1],
  JSON-serialisable without NaN, rendering identically twice, and consistent
  gate bookkeeping;
* :func:`guard` — a context manager that fails the test if, while it is
  active, anything calls ``eval``/``exec``, parses a string with sympy, or
  opens a file: nothing from an artifact is executed or opened;
* :func:`lean_problems` — forbidden Lean tokens outside comments, broken
  comment structure, artifact strings leaking into the text.
"""
from __future__ import annotations

import builtins
import io
import json
import os
import re
from contextlib import contextmanager
from fractions import Fraction
from typing import Any, Iterable

from mmverify.pipeline.report import FORCED_FAIL, STATUSES, Report

ZERO, ONE = Fraction(0), Fraction(1)


def check_report(report: Any, task_id: str | None = None, render: bool = True, serialise: bool = True) -> dict:
    """Assert the report invariants; return the report's JSON, parsed back.

    ``serialise``: render the JSON report (the slow part on gate-heavy tasks);
    ``render``: also render it a second time and as table and Markdown."""
    assert isinstance(report, Report), type(report)
    if task_id is not None:
        assert report.task_id == task_id
    assert report.status in STATUSES, report.status
    o = report.oeval
    if report.status == "not_scored":
        assert o is None
    else:
        assert isinstance(o, Fraction), o
        assert ZERO <= o <= ONE, o
    if report.status in FORCED_FAIL:
        assert o == ZERO and report.error and report.error.get("code"), report.error
        assert isinstance(report.error["message"], str)
    if report.status == "scored":
        assert report.error is None
        assert report.gates is None or not report.gates.hard_failures
    if report.status == "infeasible":
        assert report.gates is not None and report.gates.hard_failures
    c = report.closeness
    if c is not None:
        assert ZERO <= c <= ONE, c
    if report.panel is not None:
        for p in report.panel.papers:
            assert p.r is None or ZERO <= p.r <= ONE, (p.paper_id, p.r)
        for m in report.panel.metrics:
            for pm in m.per_paper:
                assert pm.r is None or ZERO <= pm.r <= ONE, (m.metric_id, pm.paper_id, pm.r)
    if report.gates is not None:
        for inst in report.gates.instances:
            assert inst.verdict in ("pass", "fail", "gap"), inst.verdict
    if not serialise:
        return {}
    text = report.to_json()                     # deterministic JSON, allow_nan=False
    text.encode("utf-8")                       # no lone surrogate can reach a report
    if render:
        from mmverify.pipeline.report import render as render_fmt

        assert report.to_json() == text
        for fmt in ("table", "md"):
            out = render_fmt(report, fmt)
            assert isinstance(out, str) and out.endswith("\n")
            out.encode("utf-8")
    return json.loads(text)


# ------------------------------------------------------------------ guard

class Tripped(AssertionError):
    pass


@contextmanager
def guard():
    """Fail on eval/exec, sympy string parsing, or any file opened while active."""
    import sympy.parsing.sympy_parser as sp

    calls: list[str] = []

    def trap(name):
        def f(*args, **kwargs):
            calls.append(f"{name}({str(args[:1])[:80]})")
            raise Tripped(f"{name} called while scoring an artifact")
        return f

    saved = {
        (builtins, "eval"): builtins.eval, (builtins, "exec"): builtins.exec,
        (builtins, "open"): builtins.open, (io, "open"): io.open, (os, "open"): os.open,
        (sp, "parse_expr"): sp.parse_expr, (sp, "eval_expr"): sp.eval_expr,
    }
    try:
        for (mod, name), _ in saved.items():
            setattr(mod, name, trap(f"{mod.__name__}.{name}"))
        yield calls
    finally:
        for (mod, name), f in saved.items():
            setattr(mod, name, f)
    assert not calls, calls


# ------------------------------------------------------------------ Lean

# tokens that must never appear in generated Lean outside comments
LEAN_FORBIDDEN = re.compile(
    r"\bsorry\b|\bsorryAx\b|\badmit\b|\baxiom\b|\bnative_decide\b|\bnativeDecide\b|ofReduceBool|#eval|#exit"
    r"|#print(?! axioms)|\bimport\b|\bset_option\b|\bunsafe\b|implemented_by|\bextern\b|\bopaque\b|\bpartial\b"
    r"|\bmacro\b|\bsyntax\b|\belab\b|\binstance\b|\bdef\b|\battribute\b|@\[|run_cmd|\bClassical\b|\bopen\b")


def strip_lean_comments(text: str) -> tuple[str, list[str]]:
    """Text with nested block comments and line comments removed, and the
    structural problems met (Lean block comments nest)."""
    out, problems = [], []
    depth, i, n = 0, 0, len(text)
    while i < n:
        two = text[i:i + 2]
        if two == "/-":
            depth += 1
            i += 2
        elif two == "-/":
            if depth == 0:
                problems.append(f"comment closer outside a comment at {i}")
            else:
                depth -= 1
            i += 2
        elif depth == 0 and two == "--":
            j = text.find("\n", i)
            i = n if j < 0 else j
        else:
            if depth == 0:
                out.append(text[i])
            i += 1
    if depth:
        problems.append("unterminated block comment")
    return "".join(out), problems


def lean_problems(text: str, artifact_strings: Iterable[str] = ()) -> list[str]:
    code, problems = strip_lean_comments(text)
    for m in LEAN_FORBIDDEN.finditer(code):
        problems.append(f"forbidden token {m.group(0)!r} outside comments")
    for s in artifact_strings:
        if len(s) >= 6 and s in text:
            problems.append(f"artifact string {s[:40]!r} appears in the Lean text")
    for line in code.splitlines():
        line = line.strip()
        if not line:
            continue
        if not (line.startswith(("namespace ", "end ", "theorem ", "#print axioms ")) or line == ""):
            problems.append(f"unexpected line outside comments: {line[:80]!r}")
    odd = sorted({c for c in text if ord(c) > 127 and c not in LEAN_UNICODE})
    if odd:
        problems.append(f"unexpected non-ASCII characters in the Lean text: {odd[:10]!r}")
    return problems


# the only non-ASCII characters generated Lean may hold: logical notation
LEAN_UNICODE = frozenset("\u00ac\u2227\u2228\u2264\u2265\u2260\u2192\u2194")   # ¬ ∧ ∨ ≤ ≥ ≠ → ↔


def strings_in(data: Any) -> list[str]:
    """The string values (not keys) anywhere in parsed data."""
    out = []
    stack = [data]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return out


def foreign_strings(task: Any, data: Any) -> list[str]:
    """String values of ``data`` that the task's own files do not contain: what
    could only have come from the artifact if it showed up in generated text."""
    anchor_text = _anchor_text(task.directory)
    return sorted({s for s in strings_in(data) if len(s) >= 6 and s not in anchor_text})


_ANCHOR_TEXT: dict[str, str] = {}


def _anchor_text(directory: str) -> str:
    if directory not in _ANCHOR_TEXT:
        parts = []
        for name in ("task.json", "artifact.schema.json", "oracle.json"):
            try:
                with open(os.path.join(directory, name), encoding="utf-8") as fh:
                    parts.append(fh.read())
            except OSError:
                pass
        _ANCHOR_TEXT[directory] = "\n".join(parts)
    return _ANCHOR_TEXT[directory]


def lean_api():
    """(obligations_for_artifact, emit, wellformed.check) of the Lean emitter, or None."""
    try:
        from mmverify.lean_gen import emit
        from mmverify.lean_gen import project, wellformed
    except ImportError:
        return None
    if not all(hasattr(m, a) for m, a in ((project, "obligations_for_artifact"), (emit, "emit"),
                                           (wellformed, "check"))):
        return None
    return project.obligations_for_artifact, emit.emit, wellformed.check
