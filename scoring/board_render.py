"""The board's renderings: deterministic JSON-ready data, the text table and
Markdown, and the sentence on the significance of rank differences. Pure
functions of a :class:`~mmverify.scoring.board.Board`; exact values are shown as
text beside rounded floats.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Any, Sequence

from mmverify.reading.numbers import exact_text, report_float
from mmverify.render.tables import fixed, markdown_table, text_table

from .board import Board, EntryResult, Interval, Stat, TaskResult

SCHEMA_VERSION = "mmverify.board/1"


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
                           "hard_gates_failed": list(c.hard_gates_failed),
                           "verified_share": report_float(c.verified_share)} for c in tr.cells],
            })
        entries.append({
            "rank": rank[er.entry], "entry": er.entry, "models": list(er.models), "harnesses": list(er.harnesses),
            "seeds": list(er.seeds),
            "headline": dict(_stat_dict(er.headline, len(board.headline_tasks)),
                             ci=_interval_dict(board.cis.get(er.entry))),
            "suites": {su: _stat_dict(st, sum(1 for t in board.headline_tasks if info[t].suite == su))
                       for su, st in sorted(er.suites.items())},
            "multi_bo": report_float(er.multi_bo), "multi_bo_exact": exact_text(er.multi_bo),
            "verified_share": report_float(er.verified_share), "verified_share_exact": exact_text(er.verified_share),
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


def _summary_rows(board: Board) -> tuple[list[str], list[list[str]]]:
    head = ["rank", "entry", "seeds", "O-EVAL %", "sd", f"{float(board.bootstrap['level']) * 100:g}% CI"]
    head += [f"{su} %" for su in board.suites]
    head += ["MULTI-BO", "verified %", "cost USD", "gate zeroes", "missing"]
    rows = []
    for i, er in enumerate(board.entries, 1):
        ci = board.cis.get(er.entry)
        row = [str(i), er.entry + (" (baseline)" if er.entry == board.baseline else ""), str(len(er.seeds)),
               _pct(er.headline.mean), _pct(er.headline.sd) if er.headline.sd is not None else "n/a",
               f"[{_pct(ci.low)}, {_pct(ci.high)}]" if ci else "-"]
        row += [_pct(er.suites[su].mean) for su in board.suites]
        row += [fixed(er.multi_bo, 3), _pct(er.verified_share, 0), fixed(er.cost_usd, 2),
                str(er.counts["hard_gate_zeroes"]),
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


def _count(n: int, word: str) -> str:
    """``1 row``, ``2 rows``."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _intro_lines(board: Board) -> list[str]:
    info = {t.id: t for t in board.tasks}
    m = board.manifest
    lines = [f"manifest {m.get('name', '-')} (sha256 {str(m.get('sha256', ''))[:12]}), {_count(board.rows, 'row')}; "
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
            f"cost {fixed(er.cost_usd, 2)} USD over {_count(er.cost_rows, 'row')}"
            + (f"; model {', '.join(er.models)}" if er.models else "")
            + (f"; harness {', '.join(er.harnesses)}" if er.harnesses else ""))


_LEGEND = ("verified %: mean over scored headline cells of the metric weight a replay verified; "
           "cells: O_t in % (mean over seeds); F = every seed forced (hard gate, invalid, error or missing: "
           "BO term -1); (nf) = n seeds forced, counted as 0; n/s = not scored")


def render_table(board: Board) -> str:
    lines = ["mmverify board"] + _intro_lines(board) + [""]
    lines += text_table(*_summary_rows(board))
    lines += ["", "rank differences (adjacent entries):"] + ["  " + x for x in _diff_lines(board)]
    lines += [significance_statement(board), "", "counts:"] + ["  " + _counts_line(er) for er in board.entries]
    lines += ["", "headline tasks:"] + text_table(*_task_rows(board, board.headline_tasks))
    if board.non_headline_tasks:
        lines += ["", "non-headline tasks (not in the headline mean or MULTI-BO):"]
        lines += text_table(*_task_rows(board, board.non_headline_tasks))
    lines += [_LEGEND]
    if board.errors:
        lines += ["", f"row problems ({len(board.errors)}):"]
        lines += [f"  line {e['line']}: {e['code']}: {e['message']}" for e in board.errors]
    return "\n".join(lines) + "\n"


def render_markdown(board: Board) -> str:
    lines = ["# mmverify board", ""] + [f"- {x}" for x in _intro_lines(board)] + [""]
    lines += markdown_table(*_summary_rows(board))
    lines += ["", "## Rank differences", ""] + [f"- {x}" for x in _diff_lines(board)]
    lines += ["", significance_statement(board), "", "## Counts", ""] + [f"- {_counts_line(er)}" for er in board.entries]
    lines += ["", "## Headline tasks", ""] + markdown_table(*_task_rows(board, board.headline_tasks))
    if board.non_headline_tasks:
        lines += ["", "## Non-headline tasks", "", "Not in the headline mean or MULTI-BO.", ""]
        lines += markdown_table(*_task_rows(board, board.non_headline_tasks))
    lines += ["", _LEGEND]
    if board.errors:
        lines += ["", "## Row problems", ""]
        lines += [f"- line {e['line']}: `{e['code']}`: {e['message']}" for e in board.errors]
    return "\n".join(lines) + "\n"


def render(board: Board, fmt: str) -> str:
    if fmt == "json":
        from mmverify.pipeline.report import dumps

        return dumps(board_dict(board))
    if fmt == "md":
        return render_markdown(board)
    return render_table(board)
