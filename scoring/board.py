"""The board: many result rows (entries x tasks x seeds) aggregated into one
leaderboard. Pure functions of the rows; exact Fractions until rendering.

Design notes: docs/architecture.md, `scoring/board.py`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Iterable, Mapping, Sequence

from .multibo import BoTerm, bo_term, multi_bo
from mmverify.errors import MmverifyError
from mmverify.batch.manifest_rows import seed_sort_key
from mmverify.pipeline.statuses import BOARD_FORCED, BoardStatus

ZERO = Fraction(0)
NULL_ARTIFACT = "null_artifact"   # a manifest row with "artifact": null
# error codes of rows that could not be processed as written (listed apart
# from artifact-level failures, which are ordinary results)
ROW_PROBLEMS = frozenset({"manifest_row_invalid", "duplicate_row", "internal_error", "timeout"})


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
    verified_share: Fraction | None = None   # metric weight a replay verified (scored cells)

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
    verified_share: Fraction | None = None   # mean over scored headline cells of the weight a replay verified


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
    """Aggregate result rows (see ``mmverify.batch.manifest``) into a board.

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
                                code, tuple(r.get("hard_gates_failed") or ()), _frac(r.get("verified_share_exact")))
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
        # say why: the baseline's rows that could not be processed, with their problems
        why = [f"line {e['line']}: {e['message']}" for e in errors
               if e.get("entry") == baseline and e.get("message")]
        if why:
            shown = "; ".join(why[:3]) + (f"; and {len(why) - 3} more" if len(why) > 3 else "")
            raise BoardError(f"baseline entry {baseline!r} has no valid rows in the manifest: {shown} "
                             f"(entries with valid rows: {known})")
        raise BoardError(f"baseline entry {baseline!r} has no rows in the manifest (entries: {known})")
    board_tasks = tuple(t for t in tasks if any(tt == t.id for _, tt, _ in cells))
    seeds = {e: tuple(sorted({s for ee, _, s in cells if ee == e}, key=seed_sort_key)) for e in entries}
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
            "errors": sum(1 for c in all_cells if c.status in ("error", "task_mismatch")),
            "missing_artifacts": sum(1 for c in all_cells if c.status == "missing" and c.error_code != NULL_ARTIFACT),
            "null_artifacts": sum(1 for c in all_cells if c.status == "missing" and c.error_code == NULL_ARTIFACT),
            "absent_rows": sum(1 for c in all_cells if c.status == "absent"),
            "forced_tasks": sum(1 for tr in trs if tr.forced and tr.task in headline),
        }
        counts["missing"] = counts["missing_artifacts"] + counts["null_artifacts"] + counts["absent_rows"]
        cost = sum(costs[e], ZERO) if e in costs else None
        wall = sum(walls[e], ZERO) if e in walls else None
        shares = [c.verified_share for (t, _), c in ecells.items()
                  if t in headline and c.status == "scored" and c.verified_share is not None]
        entry_results.append(EntryResult(
            e, seeds[e], head, suite_stats, mbo, trs, counts, cost, len(costs.get(e, ())), wall,
            tuple(sorted(models.get(e, ()))), tuple(sorted(harnesses.get(e, ()))), _mean(shares)))

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

