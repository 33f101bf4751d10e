"""The board: many result rows (entries x tasks x seeds) aggregated into one
leaderboard. Pure functions of the rows; exact Fractions until rendering.

Definitions (also in docs/board.md):

- A *cell* is (entry, task, seed). The board's tasks are the tasks named by
  some attributed row; an entry's seeds are the seeds named by its rows. A cell
  with no row is ``absent`` and scores like a missing artifact.
- Cell value: the row's O-EVAL; a forced cell (infeasible, invalid, error,
  missing, absent) is 0.
- A task on which any cell is ``not_scored`` (no panel paper votes) is
  *unscorable*: listed, left out of every mean and of MULTI-BO, for everyone.
- Headline tasks H: board tasks with ``headline: true`` that are scorable.
  Per seed s: ``m_s = mean_{t in H} O(t, s)``; the entry reports
  ``mean_s m_s`` and the sample sd (n - 1) of the ``m_s``; undefined (None)
  with one seed. Suites: the same over H restricted to the suite.
- Per task: ``O_t = mean_s O(t, s)``; the task is *forced* when every seed is
  forced. MULTI-BO over H against the baseline's ``f_t`` (its ``O_t``):
  a forced task has ``b_t = -1`` unless the baseline is forced on it too, in
  which case ``b_t = 0`` (``both_forced``: neither side has an answer, no gap
  is closed or opened); otherwise the ``bo_term`` formula on the seed means.
  So the baseline against itself is exactly 1.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Iterable, Mapping, Sequence

from .multibo import BoTerm, bo_term, multi_bo
from mmverify.errors import MmverifyError
from mmverify.numbers import exact_text, report_float
from mmverify.statuses import BOARD_FORCED, BoardStatus

ZERO = Fraction(0)
NULL_ARTIFACT = "null_artifact"   # a manifest row with "artifact": null
SCHEMA_VERSION = "mmverify.board/1"
# error codes of rows that could not be processed as written (listed apart
# from artifact-level failures, which are ordinary results)
ROW_PROBLEMS = frozenset({"manifest_row_invalid", "duplicate_row", "internal_error", "timeout"})


def seed_key(seed: int | str) -> tuple[int, Any]:
    return (0, seed) if isinstance(seed, int) else (1, seed)


def _frac(text: Any) -> Fraction | None:
    if text is None:
        return None
    return Fraction(text)


@dataclass(frozen=True)
class TaskInfo:
    id: str
    suite: str
    headline: bool
    headline_reason: str | None = None
    title: str = ""


@dataclass(frozen=True)
class Cell:
    entry: str
    task: str
    seed: int | str
    status: BoardStatus         # a report status, or "absent" (no manifest row)
    oeval: Fraction | None      # None only when not_scored
    line: int | None = None
    error_code: str | None = None
    hard_gates_failed: tuple[str, ...] = ()

    @property
    def forced(self) -> bool:
        return self.status in BOARD_FORCED

    @property
    def value(self) -> Fraction:
        """The cell's contribution to means: forced cells are 0."""
        return ZERO if self.forced or self.oeval is None else self.oeval


@dataclass(frozen=True)
class Stat:
    """Mean and sample variance over seeds of a per-seed mean."""
    mean: Fraction | None
    variance: Fraction | None    # n - 1; None with fewer than two seeds
    per_seed: tuple[tuple[Any, Fraction], ...] = ()

    @property
    def sd(self) -> float | None:
        return math.sqrt(self.variance) if self.variance is not None else None


@dataclass(frozen=True)
class TaskResult:
    task: str
    oeval: Fraction | None            # O_t: mean over seeds (None if unscorable)
    forced: bool                      # every seed forced
    forced_seeds: int
    cells: tuple[Cell, ...]
    bo: BoTerm | None                 # None for unscorable tasks


@dataclass(frozen=True)
class EntryResult:
    entry: str
    seeds: tuple[Any, ...]
    headline: Stat
    suites: Mapping[str, Stat]
    multi_bo: Fraction | None
    tasks: tuple[TaskResult, ...]     # every board task, in board order
    counts: Mapping[str, int]
    cost_usd: Fraction | None
    cost_rows: int
    wall_s: Fraction | None
    models: tuple[str, ...]
    harnesses: tuple[str, ...]


@dataclass(frozen=True)
class Interval:
    estimate: float
    low: float
    high: float


@dataclass(frozen=True)
class Difference:
    higher: str
    lower: str
    diff: Fraction
    ci: Interval | None

    @property
    def significant(self) -> bool | None:
        if self.ci is None:
            return None
        return not (self.ci.low <= 0 <= self.ci.high)


@dataclass(frozen=True)
class Board:
    baseline: str
    tasks: tuple[TaskInfo, ...]
    headline_tasks: tuple[str, ...]
    non_headline_tasks: tuple[str, ...]
    unscorable_tasks: tuple[str, ...]
    suites: tuple[str, ...]
    entries: tuple[EntryResult, ...]           # rank order
    differences: tuple[Difference, ...]        # adjacent ranks
    cis: Mapping[str, Interval]                # entry -> headline O-EVAL CI
    bootstrap: Mapping[str, Any]
    errors: tuple[Mapping[str, Any], ...]      # rows not attributed to a cell, and error rows
    rows: int
    manifest: Mapping[str, Any] = field(default_factory=dict)


class BoardError(MmverifyError, ValueError):
    """The board cannot be built (e.g. the baseline entry has no rows)."""


def _mean(values: Sequence[Fraction]) -> Fraction | None:
    return sum(values, ZERO) / len(values) if values else None


def seed_stat(entry_cells: Mapping[tuple[str, Any], Cell], tasks: Sequence[str], seeds: Sequence[Any]) -> Stat:
    if not tasks or not seeds:
        return Stat(None, None, ())
    per_seed = tuple((s, _mean([entry_cells[(t, s)].value for t in tasks])) for s in seeds)
    means = [m for _, m in per_seed]
    mean = _mean(means)
    var = None
    if len(means) >= 2:
        var = sum(((m - mean) ** 2 for m in means), ZERO) / (len(means) - 1)
    return Stat(mean, var, per_seed)


def build_board(results: Iterable[Mapping[str, Any]], tasks: Sequence[TaskInfo], baseline: str, *,
                bootstrap_replicates: int = 2000, bootstrap_seed: int = 0, level: Fraction = Fraction(95, 100),
                manifest: Mapping[str, Any] | None = None) -> Board:
    """Aggregate result rows (see ``mmverify.manifest``) into a board.

    ``tasks`` gives every known task in display order (the anchors index)."""
    results = list(results)
    info = {t.id: t for t in tasks}
    cells: dict[tuple[str, str, Any], Cell] = {}
    errors: list[dict[str, Any]] = []
    costs: dict[str, list[Fraction]] = {}
    walls: dict[str, list[Fraction]] = {}
    models: dict[str, set[str]] = {}
    harnesses: dict[str, set[str]] = {}
    for r in results:
        err = r.get("error") or {}
        if not r.get("attributed") or err.get("code") in ROW_PROBLEMS:
            errors.append({"line": r.get("line"), "entry": r.get("entry"), "task": r.get("task"),
                           "seed": r.get("seed"), "attributed": bool(r.get("attributed")),
                           "code": err.get("code"), "message": err.get("message")})
        if not r.get("attributed"):
            continue
        e, t, s = r["entry"], r["task"], r["seed"]
        if t not in info:
            raise BoardError(f"result row on line {r.get('line')} names task {t!r}, which is not in the task list")
        status = r["status"]
        code = err.get("code")
        if status == "missing" and "artifact" in r and r["artifact"] is None:
            code = NULL_ARTIFACT     # the row says the run produced nothing; no file was looked for
        cells[(e, t, s)] = Cell(e, t, s, status, _frac(r.get("oeval_exact")), r.get("line"),
                                code, tuple(r.get("hard_gates_failed") or ()))
        if r.get("cost_usd") is not None:
            costs.setdefault(e, []).append(Fraction(r["cost_usd"]))
        if r.get("wall_s") is not None:
            walls.setdefault(e, []).append(Fraction(r["wall_s"]))
        if r.get("model"):
            models.setdefault(e, set()).add(r["model"])
        if r.get("harness"):
            harnesses.setdefault(e, set()).add(r["harness"])

    entries = sorted({e for e, _, _ in cells})
    if baseline not in entries:
        known = ", ".join(entries) or "none"
        raise BoardError(f"baseline entry {baseline!r} has no scored rows in the manifest (entries: {known})")
    board_tasks = tuple(t for t in tasks if any(tt == t.id for _, tt, _ in cells))
    seeds = {e: tuple(sorted({s for ee, _, s in cells if ee == e}, key=seed_key)) for e in entries}
    for e in entries:
        for t in board_tasks:
            for s in seeds[e]:
                if (e, t.id, s) not in cells:
                    cells[(e, t.id, s)] = Cell(e, t.id, s, "absent", ZERO, None, "absent",)
    unscorable = tuple(t.id for t in board_tasks
                       if any(c.status == "not_scored" for (_, tt, _), c in cells.items() if tt == t.id))
    headline = tuple(t.id for t in board_tasks if t.headline and t.id not in unscorable)
    non_headline = tuple(t.id for t in board_tasks if not t.headline)
    suites = tuple(sorted({info[t].suite for t in headline}))

    def per_task(e: str, t: str) -> TaskResult:
        cs = tuple(cells[(e, t, s)] for s in seeds[e])
        forced_n = sum(1 for c in cs if c.forced)
        if t in unscorable:
            return TaskResult(t, None, forced_n == len(cs), forced_n, cs, None)
        return TaskResult(t, _mean([c.value for c in cs]), forced_n == len(cs), forced_n, cs, None)

    base_tasks = {t.id: per_task(baseline, t.id) for t in board_tasks}

    def with_bo(tr: TaskResult) -> TaskResult:
        if tr.oeval is None:
            return tr
        base = base_tasks[tr.task]
        if tr.forced and base.forced:
            term = BoTerm(tr.task, tr.oeval, base.oeval, ZERO, "both_forced")
        else:
            term = bo_term(tr.task, tr.oeval, base.oeval, forced_fail=tr.forced)
        return TaskResult(tr.task, tr.oeval, tr.forced, tr.forced_seeds, tr.cells, term)

    entry_results = []
    for e in entries:
        ecells = {(t, s): c for (ee, t, s), c in cells.items() if ee == e}
        trs = tuple(with_bo(per_task(e, t.id)) for t in board_tasks)
        by_id = {tr.task: tr for tr in trs}
        head = seed_stat(ecells, headline, seeds[e])
        suite_stats = {su: seed_stat(ecells, [t for t in headline if info[t].suite == su], seeds[e])
                       for su in suites}
        mbo = multi_bo(by_id[t].bo for t in headline) if headline else None
        all_cells = list(ecells.values())
        counts = {
            "cells": len(all_cells),
            "scored": sum(1 for c in all_cells if c.status == "scored"),
            "not_scored": sum(1 for c in all_cells if c.status == "not_scored"),
            "hard_gate_zeroes": sum(1 for c in all_cells if c.status == "infeasible"),
            "invalid": sum(1 for c in all_cells if c.status == "invalid"),
            "errors": sum(1 for c in all_cells if c.status == "error"),
            "missing_artifacts": sum(1 for c in all_cells if c.status == "missing" and c.error_code != NULL_ARTIFACT),
            "null_artifacts": sum(1 for c in all_cells if c.status == "missing" and c.error_code == NULL_ARTIFACT),
            "absent_rows": sum(1 for c in all_cells if c.status == "absent"),
            "forced_tasks": sum(1 for tr in trs if tr.forced and tr.task in headline),
        }
        counts["missing"] = counts["missing_artifacts"] + counts["null_artifacts"] + counts["absent_rows"]
        cost = sum(costs[e], ZERO) if e in costs else None
        wall = sum(walls[e], ZERO) if e in walls else None
        entry_results.append(EntryResult(
            e, seeds[e], head, suite_stats, mbo, trs, counts, cost, len(costs.get(e, ())), wall,
            tuple(sorted(models.get(e, ()))), tuple(sorted(harnesses.get(e, ())))))

    def rank_key(er: EntryResult):
        m = er.headline.mean
        return (m is None, -(m if m is not None else ZERO), er.entry)

    ranked = tuple(sorted(entry_results, key=rank_key))

    cis: dict[str, Interval] = {}
    diffs: list[Difference] = []
    boot_info: dict[str, Any] = {"replicates": bootstrap_replicates, "seed": bootstrap_seed,
                                 "level": level, "method": "percentile",
                                 "resampling": "headline tasks with replacement (shared by all entries, so "
                                               "differences are paired); each entry's seeds with replacement"}
    scored_ranked = [er for er in ranked if er.headline.mean is not None]
    if bootstrap_replicates > 0 and headline and scored_ranked:
        from .bootstrap import bootstrap_means

        matrices = {er.entry: [[float(cells[(er.entry, t, s)].value) for s in er.seeds] for t in headline]
                    for er in scored_ranked}
        order = [er.entry for er in scored_ranked]
        cis_raw, diffs_raw = bootstrap_means(matrices, order, bootstrap_replicates, bootstrap_seed, float(level))
        cis = {e: Interval(*v) for e, v in cis_raw.items()}
        for (a, b), v in zip(zip(order, order[1:]), diffs_raw):
            ea = next(x for x in scored_ranked if x.entry == a)
            eb = next(x for x in scored_ranked if x.entry == b)
            diffs.append(Difference(a, b, ea.headline.mean - eb.headline.mean, Interval(*v)))
    else:
        for a, b in zip(scored_ranked, scored_ranked[1:]):
            diffs.append(Difference(a.entry, b.entry, a.headline.mean - b.headline.mean, None))

    errors.sort(key=lambda x: (x["line"] is None, x["line"] or 0))
    return Board(baseline, board_tasks, headline, non_headline, unscorable, suites, ranked, tuple(diffs), cis,
                 boot_info, tuple(errors), len(results), dict(manifest or {}))


def significance_statement(board: Board) -> str:
    """A plain sentence on which adjacent rank differences are not significant."""
    if not board.headline_tasks:
        return "No scorable headline task: nothing to rank."
    if not board.differences:
        return "Only one entry: no rank differences to test."
    if any(d.ci is None for d in board.differences):
        return "No bootstrap was run (--bootstrap 0): significance of rank differences was not assessed."
    level = f"{float(board.bootstrap['level']) * 100:g} %"
    rank = {er.entry: i + 1 for i, er in enumerate(board.entries)}
    weak = [d for d in board.differences if not d.significant]
    if not weak:
        return (f"Every adjacent rank difference is significant at {level} "
                "(the bootstrap interval of each difference excludes 0).")
    parts = [f"#{rank[d.higher]} {d.higher} vs #{rank[d.lower]} {d.lower} "
             f"({float(d.diff) * 100:+.2f} points, {level} CI [{d.ci.low * 100:+.2f}, {d.ci.high * 100:+.2f}])"
             for d in weak]
    return (f"Not significant at {level} (the bootstrap interval of the difference contains 0): "
            + "; ".join(parts) + ". Their order on the board is not evidence that one is better.")


# ------------------------------------------------------------------ rendering

def _interval_dict(iv: Interval | None) -> dict[str, float] | None:
    return None if iv is None else {"low": iv.low, "high": iv.high}


def _stat_dict(st: Stat, n_tasks: int) -> dict[str, Any]:
    return {"oeval": report_float(st.mean), "oeval_exact": exact_text(st.mean), "sd": report_float(st.sd),
            "variance_exact": exact_text(st.variance), "n_tasks": n_tasks, "n_seeds": len(st.per_seed),
            "per_seed": [{"seed": s, "oeval": report_float(m), "oeval_exact": exact_text(m)} for s, m in st.per_seed]}


def board_dict(board: Board) -> dict[str, Any]:
    """The board as deterministic JSON-ready data (exact values as text beside
    rounded floats; every list in a fixed order)."""
    info = {t.id: t for t in board.tasks}
    rank = {er.entry: i + 1 for i, er in enumerate(board.entries)}
    entries = []
    for er in board.entries:
        tasks = []
        for tr in er.tasks:
            ti = info[tr.task]
            bo = None
            if tr.bo is not None:
                bo = {"b": report_float(tr.bo.b), "b_exact": exact_text(tr.bo.b), "rule": tr.bo.rule,
                      "baseline_oeval": report_float(tr.bo.baseline), "baseline_oeval_exact": exact_text(tr.bo.baseline)}
            tasks.append({
                "task": tr.task, "suite": ti.suite, "headline": ti.headline,
                "in_headline": tr.task in board.headline_tasks, "unscorable": tr.task in board.unscorable_tasks,
                "oeval": report_float(tr.oeval), "oeval_exact": exact_text(tr.oeval), "forced": tr.forced,
                "forced_seeds": tr.forced_seeds, "bo": bo,
                "cells": [{"seed": c.seed, "status": c.status, "oeval": report_float(c.oeval), "oeval_exact": exact_text(c.oeval),
                           "line": c.line, "error_code": c.error_code,
                           "hard_gates_failed": list(c.hard_gates_failed)} for c in tr.cells],
            })
        entries.append({
            "rank": rank[er.entry], "entry": er.entry, "models": list(er.models), "harnesses": list(er.harnesses),
            "seeds": list(er.seeds),
            "headline": dict(_stat_dict(er.headline, len(board.headline_tasks)),
                             ci=_interval_dict(board.cis.get(er.entry))),
            "suites": {su: _stat_dict(st, sum(1 for t in board.headline_tasks if info[t].suite == su))
                       for su, st in sorted(er.suites.items())},
            "multi_bo": report_float(er.multi_bo), "multi_bo_exact": exact_text(er.multi_bo),
            "is_baseline": er.entry == board.baseline,
            "cost_usd": report_float(er.cost_usd), "cost_usd_exact": exact_text(er.cost_usd), "cost_rows": er.cost_rows,
            "wall_s": report_float(er.wall_s), "wall_s_exact": exact_text(er.wall_s),
            "counts": dict(sorted(er.counts.items())),
            "tasks": tasks,
        })
    boot = dict(board.bootstrap)
    boot["level"] = report_float(boot["level"])
    return {
        "schema_version": SCHEMA_VERSION,
        "manifest": dict(sorted(board.manifest.items())),
        "rows": board.rows,
        "baseline": board.baseline,
        "tasks": {
            "headline": list(board.headline_tasks),
            "non_headline": [{"id": t, "reason": info[t].headline_reason} for t in board.non_headline_tasks],
            "unscorable": list(board.unscorable_tasks),
            "suites": {su: [t for t in board.headline_tasks if info[t].suite == su] for su in board.suites},
        },
        "bootstrap": boot,
        "entries": entries,
        "differences": [{"higher": d.higher, "lower": d.lower, "rank_higher": rank[d.higher],
                         "rank_lower": rank[d.lower], "diff": report_float(d.diff), "diff_exact": exact_text(d.diff),
                         "ci": _interval_dict(d.ci), "significant": d.significant}
                        for d in board.differences],
        "statement": significance_statement(board),
        "row_problems": [dict(sorted(e.items())) for e in board.errors],
    }


def _pct(x: Fraction | float | None, digits: int = 2) -> str:
    return "-" if x is None else f"{float(x) * 100:.{digits}f}"


def _num(x: Fraction | None, digits: int = 3) -> str:
    return "-" if x is None else f"{float(x):.{digits}f}"


def _cost(x: Fraction | None) -> str:
    return "-" if x is None else f"{float(x):.2f}"


def _summary_rows(board: Board) -> tuple[list[str], list[list[str]]]:
    head = ["rank", "entry", "seeds", "O-EVAL %", "sd", f"{float(board.bootstrap['level']) * 100:g}% CI"]
    head += [f"{su} %" for su in board.suites]
    head += ["MULTI-BO", "cost USD", "gate zeroes", "missing"]
    rows = []
    for i, er in enumerate(board.entries, 1):
        ci = board.cis.get(er.entry)
        row = [str(i), er.entry + (" (baseline)" if er.entry == board.baseline else ""), str(len(er.seeds)),
               _pct(er.headline.mean), _pct(er.headline.sd) if er.headline.sd is not None else "n/a",
               f"[{_pct(ci.low)}, {_pct(ci.high)}]" if ci else "-"]
        row += [_pct(er.suites[su].mean) for su in board.suites]
        row += [_num(er.multi_bo), _cost(er.cost_usd), str(er.counts["hard_gate_zeroes"]),
                str(er.counts["missing"])]
        rows.append(row)
    return head, rows


def _task_cell(tr: TaskResult) -> str:
    if tr.oeval is None:
        return "n/s"
    text = _pct(tr.oeval)
    if tr.forced:
        text += " F"
    elif tr.forced_seeds:
        text += f" ({tr.forced_seeds}f)"
    return text


def _task_rows(board: Board, ids: Sequence[str]) -> tuple[list[str], list[list[str]]]:
    info = {t.id: t for t in board.tasks}
    head = ["task", "suite"] + [er.entry for er in board.entries]
    rows = []
    for t in ids:
        row = [t, info[t].suite]
        for er in board.entries:
            tr = next(x for x in er.tasks if x.task == t)
            row.append(_task_cell(tr))
        rows.append(row)
    return head, rows


def _diff_lines(board: Board) -> list[str]:
    rank = {er.entry: i + 1 for i, er in enumerate(board.entries)}
    out = []
    for d in board.differences:
        if d.ci is None:
            out.append(f"#{rank[d.higher]} {d.higher} - #{rank[d.lower]} {d.lower}: {float(d.diff) * 100:+.2f} points")
        else:
            out.append(f"#{rank[d.higher]} {d.higher} - #{rank[d.lower]} {d.lower}: {float(d.diff) * 100:+.2f} points, "
                       f"CI [{d.ci.low * 100:+.2f}, {d.ci.high * 100:+.2f}]: "
                       + ("significant" if d.significant else "NOT significant"))
    return out


def _intro_lines(board: Board) -> list[str]:
    info = {t.id: t for t in board.tasks}
    m = board.manifest
    lines = [f"manifest {m.get('name', '-')} (sha256 {str(m.get('sha256', ''))[:12]}), {board.rows} rows; "
             f"baseline {board.baseline}" + ("" if m.get("gates_run", True) else "; GATES NOT RUN (diagnostic)")]
    per_suite = ", ".join(f"{su} {sum(1 for t in board.headline_tasks if info[t].suite == su)}" for su in board.suites)
    lines.append(f"headline: {len(board.headline_tasks)} tasks ({per_suite}); O-EVAL = mean over seeds of the "
                 "per-seed mean over headline tasks, sd over seeds (n-1)")
    for t in board.non_headline_tasks:
        reason = info[t].headline_reason or "headline: false"
        lines.append(f"left out of the headline: {t} ({reason})")
    for t in board.unscorable_tasks:
        lines.append(f"unscorable (no panel paper votes), left out of every mean and of MULTI-BO: {t}")
    b = board.bootstrap
    if b["replicates"]:
        lines.append(f"bootstrap: {b['replicates']} replicates, seed {b['seed']}, percentile intervals; "
                     "tasks resampled jointly for all entries, seeds per entry")
    return lines


def _counts_line(er: EntryResult) -> str:
    c = er.counts
    return (f"{er.entry}: {c['cells']} cells, {c['scored']} scored, {c['hard_gate_zeroes']} hard-gate zeroes, "
            f"{c['invalid']} invalid, {c['errors']} errors, {c['missing']} missing "
            f"({c['missing_artifacts']} artifact files absent, {c.get('null_artifacts', 0)} rows with "
            f"\"artifact\": null, {c['absent_rows']} without a manifest row); "
            f"cost {_cost(er.cost_usd)} USD over {er.cost_rows} rows"
            + (f"; model {', '.join(er.models)}" if er.models else "")
            + (f"; harness {', '.join(er.harnesses)}" if er.harnesses else ""))


def _text_table(head: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(head)]
    out = ["  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip(), "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    return out


def _md_table(head: list[str], rows: list[list[str]]) -> list[str]:
    def esc(c: str) -> str:
        return c.replace("|", "\\|")

    out = ["| " + " | ".join(esc(h) for h in head) + " |", "| " + " | ".join("---" for _ in head) + " |"]
    out += ["| " + " | ".join(esc(c) for c in r) + " |" for r in rows]
    return out


_LEGEND = ("cells: O_t in % (mean over seeds); F = every seed forced (hard gate, invalid, error or missing: "
           "BO term -1); (nf) = n seeds forced, counted as 0; n/s = not scored")


def render_table(board: Board) -> str:
    lines = ["mmverify board"] + _intro_lines(board) + [""]
    lines += _text_table(*_summary_rows(board))
    lines += ["", "rank differences (adjacent entries):"] + ["  " + x for x in _diff_lines(board)]
    lines += [significance_statement(board), "", "counts:"] + ["  " + _counts_line(er) for er in board.entries]
    lines += ["", "headline tasks:"] + _text_table(*_task_rows(board, board.headline_tasks))
    if board.non_headline_tasks:
        lines += ["", "non-headline tasks (not in the headline mean or MULTI-BO):"]
        lines += _text_table(*_task_rows(board, board.non_headline_tasks))
    lines += [_LEGEND]
    if board.errors:
        lines += ["", f"row problems ({len(board.errors)}):"]
        lines += [f"  line {e['line']}: {e['code']}: {e['message']}" for e in board.errors]
    return "\n".join(lines) + "\n"


def render_markdown(board: Board) -> str:
    lines = ["# mmverify board", ""] + [f"- {x}" for x in _intro_lines(board)] + [""]
    lines += _md_table(*_summary_rows(board))
    lines += ["", "## Rank differences", ""] + [f"- {x}" for x in _diff_lines(board)]
    lines += ["", significance_statement(board), "", "## Counts", ""] + [f"- {_counts_line(er)}" for er in board.entries]
    lines += ["", "## Headline tasks", ""] + _md_table(*_task_rows(board, board.headline_tasks))
    if board.non_headline_tasks:
        lines += ["", "## Non-headline tasks", "", "Not in the headline mean or MULTI-BO.", ""]
        lines += _md_table(*_task_rows(board, board.non_headline_tasks))
    lines += ["", _LEGEND]
    if board.errors:
        lines += ["", "## Row problems", ""]
        lines += [f"- line {e['line']}: `{e['code']}`: {e['message']}" for e in board.errors]
    return "\n".join(lines) + "\n"


def render(board: Board, fmt: str) -> str:
    if fmt == "json":
        from mmverify.report import dumps

        return dumps(board_dict(board))
    if fmt == "md":
        return render_markdown(board)
    return render_table(board)
