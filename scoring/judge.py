"""Judge scores beside O-EVAL: reading them, and where they agree or not.

Design notes: docs/architecture.md, `scoring/judge.py`.
"""
from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any, Iterable, Mapping, Sequence

from mmverify.reading.numbers import DECIMAL_TEXT, to_fraction

REQUIRED = ("entry", "task", "score", "source")
OPTIONAL = ("max", "note")
HIGH = Fraction(1, 2)
MAX_PROBLEMS = 1000     # problems listed (a file of garbage does not make a page of garbage)


@dataclass(frozen=True)
class JudgeScore:
    """One judge score of one (entry, task), as read from line ``line``."""

    entry: str
    task: str
    source: str
    raw: Fraction
    max: Fraction
    line: int
    note: str | None = None

    @property
    def score(self) -> Fraction:
        """The score on [0, 1] (``raw / max``)."""
        return self.raw / self.max


@dataclass(frozen=True)
class JudgeProblem:
    """A row (or the file) that could not be used, and why."""

    line: int | None
    message: str


@dataclass(frozen=True)
class JudgeFile:
    name: str
    kind: str                              # "csv" or "jsonl"
    scores: tuple[JudgeScore, ...]
    problems: tuple[JudgeProblem, ...]
    problems_left_off: int = 0

    @property
    def sources(self) -> tuple[str, ...]:
        return tuple(sorted({s.source for s in self.scores}))


def judge_kind(name: str, text: str) -> str:
    """``csv`` or ``jsonl``: by the file name's ending, else by the first
    character that is not white space (``{`` is JSON Lines)."""
    low = name.lower()
    if low.endswith(".csv"):
        return "csv"
    if low.endswith((".jsonl", ".ndjson", ".json")):
        return "jsonl"
    return "jsonl" if text.lstrip().startswith("{") else "csv"


MAX_EXPONENT = 300      # a judge score is a small number; a huge exponent only makes exact arithmetic slow


def _number(value: Any) -> Fraction | None:
    if isinstance(value, str):
        value = value.strip()
        if value.startswith("+"):
            value = value[1:]
        if len(value) > 100 or not DECIMAL_TEXT.match(value):
            return None
        value = Decimal(value)
    if isinstance(value, Decimal) and value.is_finite():
        t = value.as_tuple()
        if abs(t.exponent) > MAX_EXPONENT or len(t.digits) > 100:
            return None
    return to_fraction(value)


def _row(fields: Mapping[str, Any], line: int, extra_ok: bool) -> JudgeScore | str:
    """A :class:`JudgeScore` from one row's fields, or the problems as text."""
    problems = []
    unknown = sorted(k for k in fields if k not in REQUIRED + OPTIONAL and not str(k).startswith(("x-", "x_")))
    if unknown and not extra_ok:
        problems.append("unknown field(s) " + ", ".join(repr(k) for k in unknown))
    text: dict[str, str] = {}
    for k in ("entry", "task", "source"):
        v = fields.get(k)
        if not isinstance(v, str) or not v.strip():
            problems.append(f"{k} must be a non-empty string")
        else:
            text[k] = v.strip()
    raw = _number(fields.get("score")) if fields.get("score") is not None else None
    if raw is None:
        problems.append("score must be a number (exact decimal)")
    top = Fraction(1)
    if fields.get("max") not in (None, ""):
        top = _number(fields["max"])
        if top is None or top <= 0:
            problems.append("max must be a number > 0")
            top = None
    if raw is not None and top is not None and not (0 <= raw <= top):
        problems.append(f"score {float(raw):g} is outside [0, {float(top):g}]")
    note = fields.get("note")
    if note is not None and not isinstance(note, str):
        problems.append("note must be a string")
    if problems:
        return "; ".join(problems)
    return JudgeScore(text["entry"], text["task"], text["source"], raw, top, line, note or None)


def _csv_rows(text: str) -> Iterable[tuple[int, Mapping[str, Any] | str]]:
    reader = csv.reader(io.StringIO(text, newline=""))
    header: list[str] | None = None
    try:
        for fields in reader:
            line = reader.line_num
            if not fields or all(not f.strip() for f in fields):
                continue
            if header is None:
                header = [f.strip() for f in fields]
                missing = [k for k in REQUIRED if k not in header]
                dup = sorted({h for h in header if header.count(h) > 1})
                if missing or dup:
                    yield line, ("the header must name the columns " + ", ".join(REQUIRED)
                                 + (f" (missing: {', '.join(missing)})" if missing else "")
                                 + (f" (repeated: {', '.join(dup)})" if dup else ""))
                    return
                unknown = [h for h in header if h not in REQUIRED + OPTIONAL and not h.startswith(("x-", "x_"))]
                if unknown:
                    yield line, "unknown column(s) ignored: " + ", ".join(repr(h) for h in unknown)
                continue
            if len(fields) != len(header):
                yield line, f"{len(fields)} field(s) where the header has {len(header)}"
                continue
            yield line, {h: v for h, v in zip(header, fields) if h in REQUIRED + OPTIONAL}
    except csv.Error as exc:
        yield reader.line_num, f"not CSV: {exc}"
        return
    if header is None:
        yield 1, "no header line (the file is empty)"


class _Reject(Exception):
    pass


def _jsonl_rows(text: str) -> Iterable[tuple[int, Mapping[str, Any] | str]]:
    from mmverify.reading.jsonstrict import loads_strict

    for line, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            obj = loads_strict(raw, duplicate_key=lambda k: _Reject(f"duplicate key {k!r}"),
                               non_finite=lambda n: _Reject(f"{n} is not a number"))
        except _Reject as exc:
            yield line, f"not a JSON object: {exc}"
            continue
        except (ValueError, RecursionError) as exc:    # JSONDecodeError, an over-long integer, deep nesting
            yield line, f"not JSON: {getattr(exc, 'msg', None) or type(exc).__name__}"
            continue
        if not isinstance(obj, dict):
            yield line, "not a JSON object"
            continue
        yield line, obj


def parse_judge(text: str, name: str = "judge", kind: str | None = None) -> JudgeFile:
    """Every usable row of a judge file's text, and a problem for every other
    (never raises for what the text holds). A second score for the same
    (source, entry, task) is a problem; the first is kept."""
    kind = kind or judge_kind(name, text)
    rows = _csv_rows(text) if kind == "csv" else _jsonl_rows(text)
    scores: list[JudgeScore] = []
    problems: list[JudgeProblem] = []
    seen: dict[tuple[str, str, str], int] = {}
    for line, got in rows:
        if isinstance(got, str):
            problems.append(JudgeProblem(line, got))
            continue
        row = _row(got, line, extra_ok=kind == "csv")
        if isinstance(row, str):
            problems.append(JudgeProblem(line, row))
            continue
        key = (row.source, row.entry, row.task)
        if key in seen:
            problems.append(JudgeProblem(line, f"a second score by {row.source!r} for {row.entry!r} on "
                                               f"{row.task!r} (line {seen[key]} is kept)"))
            continue
        seen[key] = line
        scores.append(row)
    left_off = max(0, len(problems) - MAX_PROBLEMS)
    return JudgeFile(name, kind, tuple(scores), tuple(problems[:MAX_PROBLEMS]), left_off)


# ----------------------------------------------------------------- comparison

@dataclass(frozen=True)
class JudgedCell:
    """A judge score beside the board's view of the same (entry, task)."""

    judge: JudgeScore
    oeval: Fraction | None          # O_t (None: the task is unscorable)
    seeds: int
    infeasible_seeds: int           # seeds a hard gate zeroed
    forced_seeds: int

    @property
    def infeasible(self) -> bool:
        return self.infeasible_seeds > 0


@dataclass(frozen=True)
class Correlation:
    source: str
    n: int                          # cells in the correlation
    rho: float | None               # None: undefined (see reason)
    rho_squared: Fraction | None
    reason: str | None = None


@dataclass(frozen=True)
class JudgeComparison:
    file: JudgeFile
    cells: tuple[JudgedCell, ...]           # board order: entry rank, then task
    unmatched: tuple[JudgeProblem, ...]     # rows naming an entry or task the board does not hold
    correlations: tuple[Correlation, ...]   # one per source
    high: Fraction

    @property
    def sources(self) -> tuple[str, ...]:
        return tuple(c.source for c in self.correlations)

    @property
    def disagreements(self) -> tuple[JudgedCell, ...]:
        """Cells where the judge rates highly a run that is infeasible on some seed."""
        return tuple(c for c in self.cells if c.infeasible and c.judge.score >= self.high)

    def score_of(self, source: str, entry: str, task: str) -> JudgeScore | None:
        for c in self.cells:
            if c.judge.source == source and c.judge.entry == entry and c.judge.task == task:
                return c.judge
        return None

    def entry_mean(self, source: str, entry: str) -> Fraction | None:
        """Mean judge score (on [0, 1]) over the entry's judged tasks."""
        xs = [c.judge.score for c in self.cells if c.judge.source == source and c.judge.entry == entry]
        return sum(xs, Fraction(0)) / len(xs) if xs else None


def average_ranks(values: Sequence[Fraction]) -> list[Fraction]:
    """Ranks 1..n, ties given the mean of the ranks they span."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks: list[Fraction] = [Fraction(0)] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        rank = Fraction(i + j + 2, 2)
        for k in range(i, j + 1):
            ranks[order[k]] = rank
        i = j + 1
    return ranks


def spearman(xs: Sequence[Fraction], ys: Sequence[Fraction]) -> tuple[Fraction | None, int, str | None]:
    """(rho squared with rho's sign as the sign of the covariance, exact; the
    sign as -1/0/1; why it is undefined, or None). Pearson correlation of the
    average ranks."""
    if len(xs) != len(ys):
        raise ValueError("xs and ys differ in length")
    n = len(xs)
    if n < 2:
        return None, 0, f"{n} cell(s): at least 2 are needed"
    rx, ry = average_ranks(xs), average_ranks(ys)
    mx, my = sum(rx, Fraction(0)) / n, sum(ry, Fraction(0)) / n
    cov = sum(((a - mx) * (b - my) for a, b in zip(rx, ry)), Fraction(0))
    vx = sum(((a - mx) ** 2 for a in rx), Fraction(0))
    vy = sum(((b - my) ** 2 for b in ry), Fraction(0))
    if vx == 0:
        return None, 0, "every judge score is the same"
    if vy == 0:
        return None, 0, "every O-EVAL is the same"
    return cov * cov / (vx * vy), (cov > 0) - (cov < 0), None


def rho_value(rho_squared: Fraction | None, sign: int) -> float | None:
    if rho_squared is None:
        return None
    return sign * math.sqrt(rho_squared)


def compare(board, judge: JudgeFile, high: Fraction = HIGH) -> JudgeComparison:
    """The judge's scores set beside ``board`` (a :class:`~mmverify.scoring.board.Board`),
    which is only read."""
    order = {er.entry: i for i, er in enumerate(board.entries)}
    task_order = {t.id: i for i, t in enumerate(board.tasks)}
    results = {(er.entry, tr.task): tr for er in board.entries for tr in er.tasks}
    cells: list[JudgedCell] = []
    unmatched: list[JudgeProblem] = []
    for js in judge.scores:
        if js.entry not in order:
            unmatched.append(JudgeProblem(js.line, f"entry {js.entry!r} is not on the board"))
            continue
        if js.task not in task_order:
            unmatched.append(JudgeProblem(js.line, f"task {js.task!r} is not on the board"))
            continue
        tr = results[(js.entry, js.task)]
        cells.append(JudgedCell(js, tr.oeval, len(tr.cells), sum(1 for c in tr.cells if c.status == "infeasible"),
                                tr.forced_seeds))
    cells.sort(key=lambda c: (order[c.judge.entry], task_order[c.judge.task], c.judge.source))
    corr = []
    for source in judge.sources:
        pairs = [(c.judge.score, c.oeval) for c in cells if c.judge.source == source and c.oeval is not None]
        r2, sign, reason = spearman([p[0] for p in pairs], [p[1] for p in pairs])
        corr.append(Correlation(source, len(pairs), rho_value(r2, sign), r2, reason))
    return JudgeComparison(judge, tuple(cells), tuple(unmatched), tuple(corr), high)


# ----------------------------------------------------------------- renderings

def judge_dict(cmp: JudgeComparison) -> dict[str, Any]:
    """JSON-ready data (exact values as text beside rounded floats)."""
    from mmverify.reading.numbers import exact_text, report_float

    return {
        "file": cmp.file.name, "kind": cmp.file.kind, "enters_oeval": False,
        "high": exact_text(cmp.high),
        "correlations": [{"source": c.source, "n": c.n, "spearman_rho": report_float(c.rho),
                          "rho_squared_exact": exact_text(c.rho_squared), "undefined": c.reason}
                         for c in cmp.correlations],
        "cells": [{"entry": c.judge.entry, "task": c.judge.task, "source": c.judge.source, "line": c.judge.line,
                   "score": exact_text(c.judge.raw), "max": exact_text(c.judge.max),
                   "score_01": report_float(c.judge.score), "oeval": report_float(c.oeval),
                   "oeval_exact": exact_text(c.oeval), "seeds": c.seeds, "infeasible_seeds": c.infeasible_seeds,
                   "judge_high_on_infeasible": c.infeasible and c.judge.score >= cmp.high}
                  for c in cmp.cells],
        "problems": [{"line": p.line, "message": p.message} for p in cmp.file.problems + cmp.unmatched],
        "problems_left_off": cmp.file.problems_left_off,
    }


def describe_rho(c: Correlation) -> str:
    if c.rho is None:
        return f"undefined ({c.reason})"
    return f"{c.rho:+.3f} over {c.n} cells"


def judge_lines(cmp: JudgeComparison) -> list[str]:
    """Plain-text lines for the table and Markdown boards."""
    from mmverify.render.tables import printable

    lines = [f"judge scores from {cmp.file.name} ({len(cmp.cells)} cells; never part of O-EVAL)"]
    for c in cmp.correlations:
        lines.append(f"  {c.source}: Spearman rank correlation with O-EVAL {describe_rho(c)}")
    for c in cmp.disagreements:
        lines.append(f"  judge high on an infeasible run: {c.judge.source} rates {c.judge.entry} on {c.judge.task} "
                     f"{float(c.judge.raw):g}/{float(c.judge.max):g}; {c.infeasible_seeds} of {c.seeds} seed(s) "
                     "zeroed by a hard gate")
    problems = cmp.file.problems + cmp.unmatched
    for p in problems:
        lines.append(f"  judge file line {p.line}: {p.message}")
    if cmp.file.problems_left_off:
        lines.append(f"  ... {cmp.file.problems_left_off} more problem(s) left off")
    return [printable(x) for x in lines]
