"""The board as one self-contained HTML page (``mmverify board --html OUT``).

A pure function of a :class:`~mmverify.scoring.board.Board` (plus, optionally,
judge scores set beside it and the notes of the board's tasks): the
leaderboard (O-EVAL +- sd over seeds, suites, MULTI-BO and the difference
from the baseline with its bootstrap interval, verified share, cost), a heat
map entry x task whose cells link to that run's section, per-suite bars, cost
against score, verified against closeness-only weight, judge scores with their
rank correlation, every exclusion and correction with its reason, and one
section per run. Plots are inline SVG drawn here; tables are real HTML tables
(readable without JavaScript; a small inline script sorts them by column).
Nothing from a manifest, an artifact or a judge file is markup: every string is
escaped, ids are indices.

Not split (about 600 lines): each section is a private helper of one page,
written in page order, and shares the page's escaping and ids.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Iterable, Mapping, Sequence

from mmverify.render.htmlpage import (BROKEN_FILL, FORCED_FILL, MISSING_FILL, NOT_SCORED_FILL, Markup, esc, heat_colour, page,
                               pct, table, td)
from mmverify.reading.numbers import exact_text
from mmverify.render.tables import fixed

from .board import Board, EntryResult, Interval, TaskResult
from .board_render import significance_statement

SUITE_COLOURS = ("#0b5cad", "#e36209", "#1a7f37", "#8250df", "#bf3989")
VERIFIED_FILL, CLOSENESS_FILL = "#1a7f37", "#c9d1d9"


@dataclass(frozen=True)
class TaskNote:
    """An exclusion, correction or finding recorded in a task's anchors."""

    task: str
    kind: str            # "correction", "finding" or "exclusion"
    paper: str
    metric: str
    text: str


def task_notes(tasks: Iterable[Any]) -> tuple[TaskNote, ...]:
    """The audit records (corrections and findings) and the panel's excluded
    metrics of ``tasks`` (:class:`~mmverify.tasks.TaskSpec`), with their reasons."""
    out = []
    for t in tasks:
        for p in t.panel:
            for metric, rec in sorted(p.audit.items()):
                if not isinstance(rec, Mapping):
                    continue
                reason = str(rec.get("reason", "")).strip()
                source = str(rec.get("source", "")).strip()
                if "original" in rec:      # the anchor is not the value the paper printed
                    by = rec.get("corrected_by")
                    text = f"paper reported {rec['original']}; " + (f"anchor corrected by {by}" if by else
                                                                      "the anchor differs from the printed value")
                    kind = "correction"
                else:
                    text, kind = "", "finding"
                text = "; ".join(x for x in (text, reason, f"source: {source}" if source else "") if x)
                out.append(TaskNote(t.id, kind, p.paper_id, metric, text))
            for metric, reason in sorted(p.excluded.items()):
                out.append(TaskNote(t.id, "exclusion", p.paper_id, metric, str(reason)))
    return tuple(out)


# --------------------------------------------------------------- statistics

@dataclass(frozen=True)
class BaselineDiff:
    diff: Fraction
    ci: Interval | None

    @property
    def significant(self) -> bool | None:
        return None if self.ci is None else not (self.ci.low <= 0 <= self.ci.high)


def baseline_differences(board: Board) -> dict[str, BaselineDiff]:
    """Each scored entry's headline O-EVAL minus the baseline's, with a paired
    bootstrap interval (the board's replicates, seed and level; tasks drawn
    jointly for the two, seeds per entry) when the board ran a bootstrap."""
    base = next((er for er in board.entries if er.entry == board.baseline), None)
    if base is None or base.headline.mean is None:
        return {}
    reps = int(board.bootstrap.get("replicates") or 0)
    out: dict[str, BaselineDiff] = {}
    for er in board.entries:
        if er.entry == board.baseline or er.headline.mean is None:
            continue
        diff = er.headline.mean - base.headline.mean
        ci = None
        if reps > 0 and board.headline_tasks:
            from .bootstrap import bootstrap_means

            mats = {x.entry: _matrix(x, board.headline_tasks) for x in (er, base)}
            key_e, key_b = ("a", "b")
            _, diffs = bootstrap_means({key_e: mats[er.entry], key_b: mats[base.entry]}, [key_e, key_b], reps,
                                       int(board.bootstrap.get("seed") or 0), float(board.bootstrap["level"]))
            ci = Interval(*diffs[0])
        out[er.entry] = BaselineDiff(diff, ci)
    return out


def _matrix(er: EntryResult, tasks: Sequence[str]) -> list[list[float]]:
    by = {tr.task: tr for tr in er.tasks}
    return [[float(c.value) for c in by[t].cells] for t in tasks]


# --------------------------------------------------------------- the page

def _task_result(er: EntryResult, task: str) -> TaskResult:
    return next(tr for tr in er.tasks if tr.task == task)


def run_id(i: int, j: int) -> str:
    """The id of entry #i's run section on task #j (board order): indices only."""
    return f"run-{i}-{j}"


def render_html(board: Board, *, judge: Any = None, notes: Sequence[TaskNote] = ()) -> str:
    """The board page. ``judge``: a :class:`~mmverify.scoring.judge.JudgeComparison`
    or None; ``notes``: the tasks' exclusions, corrections and findings."""
    info = {t.id: t for t in board.tasks}
    task_index = {t.id: j for j, t in enumerate(board.tasks)}
    m = board.manifest
    name = str(m.get("name", "-"))
    body = [f"<header><h1>mmverify board</h1><p>manifest <b>{esc(name)}</b> "
            f"<span class=\"muted\">(sha256 {esc(str(m.get('sha256', ''))[:12])})</span>, {board.rows} rows; "
            f"baseline <b>{esc(board.baseline)}</b>; {len(board.entries)} entries, {len(board.headline_tasks)} "
            f"headline tasks" + ("" if m.get("gates_run", True) else "; <b class=\"fail\">GATES NOT RUN "
                                 "(diagnostic)</b>") + "</p>"]
    sections = [("leaderboard", "Leaderboard"), ("suites", "Per suite"), ("tasks", "Per task"),
                ("cost", "Cost against score"), ("verified", "Verified credit")]
    if judge is not None:
        sections.append(("judge", "Judge scores"))
    sections += [("exclusions", "Exclusions and corrections"), ("runs", "Runs")]
    body.append("<nav aria-label=\"sections\">" + "".join(f'<a href="#{k}">{esc(v)}</a>' for k, v in sections)
                + "</nav></header><main>")
    body += _leaderboard(board, judge)
    body += _suites(board)
    body += _tasks(board, task_index, info)
    body += _cost(board)
    body += _verified(board)
    if judge is not None:
        body += _judge(board, judge, task_index)
    body += _exclusions(board, notes, info)
    body += _runs(board, judge, task_index, info)
    body.append("</main><footer class=\"muted small\"><p>Written by mmverify board. Judge scores, where shown, "
                "never enter O-EVAL, MULTI-BO or any mean on this page.</p></footer>")
    return page(f"mmverify board: {name}", body)


def _leaderboard(board: Board, judge: Any) -> list[str]:
    level = f"{float(board.bootstrap['level']) * 100:g}%"
    vs = baseline_differences(board)
    head: list[Any] = [("rank", "num"), "entry", ("seeds", "num"), (f"O-EVAL % ({level} CI)", "num"), ("sd", "num")]
    head += [(f"{su} %", "num") for su in board.suites]
    head += [("MULTI-BO", "num"), (f"\u0394 vs baseline ({level} CI)", "num"), ("verified %", "num"),
             ("cost USD", "num"), ("gate zeroes", "num"), ("missing", "num")]
    sources = judge.sources if judge is not None else ()
    head += [(f"judge {k + 1}", "num") for k in range(len(sources))]
    rows = []
    for i, er in enumerate(board.entries):
        ci = board.cis.get(er.entry)
        d = vs.get(er.entry)
        base = er.entry == board.baseline
        oeval = esc(pct(er.headline.mean)) + (f'<br><span class="small muted">[{pct(ci.low)}, {pct(ci.high)}]</span>'
                                              if ci else "")
        cells = [td(i + 1, i + 1), td(Markup(f"<b>{esc(er.entry)}</b>" + (" <span class=\"pill\">baseline</span>"
                                                                        if base else ""))),
                 td(len(er.seeds), len(er.seeds)), td(Markup(oeval), er.headline.mean),
                 td(pct(er.headline.sd) if er.headline.sd is not None else "n/a", er.headline.sd)]
        cells += [td(pct(er.suites[su].mean), er.suites[su].mean) for su in board.suites]
        cells.append(td(fixed(er.multi_bo, 3), er.multi_bo))
        if base:
            cells.append(td("(baseline)", None))
        elif d is None:
            cells.append(td("-", None))
        else:
            text = f"{float(d.diff) * 100:+.2f}"
            if d.ci is not None:
                text += (f'<br><span class="small muted">[{d.ci.low * 100:+.2f}, {d.ci.high * 100:+.2f}]</span><br>'
                         + ('<span class="pass small">significant</span>' if d.significant
                            else '<span class="fail small">not significant</span>'))
            cells.append(td(Markup(text), d.diff))
        cells += [td(pct(er.verified_share, 0), er.verified_share), td(fixed(er.cost_usd, 2), er.cost_usd),
                  td(er.counts["hard_gate_zeroes"], er.counts["hard_gate_zeroes"]),
                  td(er.counts["missing"], er.counts["missing"])]
        for s in sources:
            mean = judge.entry_mean(s, er.entry)
            cells.append(td(fixed(mean, 2), mean))
        rows.append(f'<tr{" class=baseline" if base else ""}>' + "".join(cells) + "</tr>")
    out = ['<section id="leaderboard"><h2>Leaderboard</h2>',
           table(head, rows, caption="Ranked by headline O-EVAL. Click a column header to sort."),
           f"<p>{esc(significance_statement(board))}</p>",
           "<p class=\"muted small\">O-EVAL: mean over seeds of the per-seed mean over the headline tasks, with its "
           "bootstrap interval; sd over seeds (n-1), n/a with one seed. \u0394 vs baseline: headline O-EVAL minus "
           "the baseline's in points, with a paired bootstrap interval (tasks drawn jointly, seeds per entry); "
           "significant when the interval excludes 0. verified %: mean over scored headline cells of the metric "
           "weight a replay verified. Gate zeroes: cells a hard gate made infeasible.</p>"]
    if sources:
        out.append("<p class=\"muted small\">Judge columns: the mean judge score (score / max, 0-1) over the "
                   "entry's judged tasks; they take no part in the ranking. "
                   + "; ".join(f"judge {k + 1}: <b>{esc(src)}</b>" for k, src in enumerate(sources)) + ".</p>")
    b = board.bootstrap
    if b.get("replicates"):
        out.append(f"<p class=\"muted small\">Bootstrap: {int(b['replicates'])} replicates, seed {esc(b['seed'])}, "
                   "percentile intervals.</p>")
    out.append("</section>")
    return out


# --------------------------------------------------------------- SVG plots

def _label(text: str, limit: int = 26) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _svg(width: int, height: int, title: str, parts: Iterable[str]) -> str:
    return (f'<svg role="img" aria-label="{esc(title)}" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}"><title>{esc(title)}</title>' + "".join(parts) + "</svg>")


def _suites(board: Board) -> list[str]:
    out = ['<section id="suites"><h2>Per suite</h2>']
    if not board.suites:
        return out + ["<p>No scorable headline task: no suite means.</p></section>"]
    left, bar, gap, width = 190, 14, 10, 760
    plot_w = width - left - 60
    group = bar * len(board.suites) + gap
    height = 30 + group * len(board.entries) + 30
    parts = []
    for k in range(0, 101, 25):
        x = left + plot_w * k / 100
        parts.append(f'<line class="grid" x1="{x:.1f}" y1="20" x2="{x:.1f}" y2="{height - 24}"/>'
                     f'<text x="{x:.1f}" y="{height - 10}" text-anchor="middle">{k}%</text>')
    for i, er in enumerate(board.entries):
        y0 = 24 + i * group
        parts.append(f'<text x="{left - 6}" y="{y0 + bar * len(board.suites) / 2 + 4:.1f}" text-anchor="end">'
                     f'<title>{esc(er.entry)}</title>{esc(_label(er.entry))}</text>')
        for k, su in enumerate(board.suites):
            v = er.suites[su].mean
            w = plot_w * float(v) if v is not None else 0
            y = y0 + k * bar
            colour = SUITE_COLOURS[k % len(SUITE_COLOURS)]
            parts.append(f'<rect x="{left}" y="{y}" width="{w:.1f}" height="{bar - 2}" fill="{colour}">'
                         f'<title>{esc(er.entry)}, {esc(su)}: {pct(v)}%</title></rect>'
                         f'<text x="{left + w + 4:.1f}" y="{y + bar - 4}">{pct(v, 1)}</text>')
    parts.append(f'<line class="axis" x1="{left}" y1="20" x2="{left}" y2="{height - 24}"/>')
    legend = "".join(f'<span class="pill" style="border-color:{SUITE_COLOURS[k % len(SUITE_COLOURS)]};'
                     f'color:{SUITE_COLOURS[k % len(SUITE_COLOURS)]}">{esc(su)}</span> '
                     for k, su in enumerate(board.suites))
    out.append("<figure>" + _svg(width, height, "O-EVAL per suite and entry (headline tasks)", parts)
               + f"<figcaption>Headline O-EVAL per suite, mean over seeds. {legend}</figcaption></figure>")
    head = ["entry"] + [(f"{su} %", "num") for su in board.suites] + [(f"{su} sd", "num") for su in board.suites]
    rows = [[td(er.entry)] + [td(pct(er.suites[su].mean), er.suites[su].mean) for su in board.suites]
            + [td(pct(er.suites[su].sd) if er.suites[su].sd is not None else "n/a", er.suites[su].sd)
               for su in board.suites] for er in board.entries]
    out += [table(head, rows), "</section>"]
    return out


def _cell_mark(tr: TaskResult) -> tuple[str, str, str]:
    """(fill, text colour, text) of one heat-map cell."""
    if tr.oeval is None:
        return NOT_SCORED_FILL, "#1b1f24", "n/s"
    if tr.forced:
        statuses = {c.status for c in tr.cells}
        if "infeasible" in statuses:
            return FORCED_FILL, "#ffffff", "\u00d7"
        if statuses <= {"missing", "absent"}:
            return MISSING_FILL, "#57606a", "\u2013"
        return BROKEN_FILL, "#1b1f24", "!"
    fill, ink = heat_colour(tr.oeval)
    return fill, ink, f"{float(tr.oeval) * 100:.0f}" + ("*" if tr.forced_seeds else "")


def _swatch(fill: str, text: str, ink: str = "#1b1f24") -> str:
    return (f'<span class="pill" style="background:{fill};color:{ink};border-color:{fill}">{esc(text)}</span>')


HEAT_LEGEND = ("O-EVAL per entry and task in % (mean over seeds); each cell links to the run's section below. "
               + _swatch(FORCED_FILL, "\u00d7 a hard gate zeroed it", "#ffffff") + " "
               + _swatch(BROKEN_FILL, "! invalid or error") + " "
               + _swatch(MISSING_FILL, "\u2013 no artifact", "#57606a") + " "
               + _swatch(NOT_SCORED_FILL, "n/s not scored")
               + " (every seed); * some seeds forced, counted as 0. Task names in italics are not headline tasks.")


def _cell_words(tr: TaskResult) -> str:
    if tr.oeval is None:
        return "not scored (no panel paper votes)"
    statuses = ", ".join(sorted({c.status for c in tr.cells}))
    text = f"O-EVAL {pct(tr.oeval)}% over {len(tr.cells)} seed(s): {statuses}"
    if tr.forced:
        text += "; every seed forced (BO term -1)"
    elif tr.forced_seeds:
        text += f"; {tr.forced_seeds} seed(s) forced, counted as 0"
    return text


def _tasks(board: Board, task_index: Mapping[str, int], info: Mapping[str, Any]) -> list[str]:
    out = ['<section id="tasks"><h2>Per task</h2>']
    tasks = [t.id for t in board.tasks]
    cw, ch, left, top = 34, 24, 190, 200
    width = left + cw * len(tasks) + 150     # room for the last rotated task names
    height = top + ch * len(board.entries) + 10
    parts = []
    for j, t in enumerate(tasks):
        x = left + j * cw + cw / 2
        weight = "" if t in board.headline_tasks else ' font-style="italic"'
        parts.append(f'<text transform="translate({x + 4:.1f},{top - 6}) rotate(-60)"{weight}>'
                     f'<title>{esc(t)}</title>{esc(_label(t, 32))}</text>')
    for i, er in enumerate(board.entries):
        y = top + i * ch
        parts.append(f'<text x="{left - 6}" y="{y + ch / 2 + 4:.1f}" text-anchor="end"><title>{esc(er.entry)}</title>'
                     f'{esc(_label(er.entry))}</text>')
        for j, t in enumerate(tasks):
            tr = _task_result(er, t)
            fill, ink, text = _cell_mark(tr)
            x = left + j * cw
            parts.append(f'<a href="#{run_id(i, task_index[t])}"><rect x="{x}" y="{y}" width="{cw - 1}" '
                         f'height="{ch - 1}" fill="{fill}"><title>{esc(er.entry)} on {esc(t)}: '
                         f'{esc(_cell_words(tr))}</title></rect><text x="{x + cw / 2:.1f}" y="{y + ch / 2 + 4:.1f}" '
                         f'text-anchor="middle" style="fill:{ink}" pointer-events="none">{esc(text)}</text></a>')
    out.append("<figure>" + _svg(width, height, "Heat map of O-EVAL per entry and task", parts)
               + f"<figcaption>{HEAT_LEGEND}</figcaption></figure>")
    for title, ids in (("Headline tasks", board.headline_tasks),
                       ("Non-headline tasks (not in the headline mean or MULTI-BO)", board.non_headline_tasks)):
        if not ids:
            continue
        head = ["task", "suite"] + [(er.entry, "num") for er in board.entries]
        rows = []
        for t in ids:
            cells = [td(t), td(info[t].suite)]
            for i, er in enumerate(board.entries):
                tr = _task_result(er, t)
                fill, ink, text = _cell_mark(tr)
                cells.append(td(Markup(f'<a href="#{run_id(i, task_index[t])}" title="{esc(_cell_words(tr))}">'
                                       f"{esc(text)}</a>"), tr.oeval, cls="heat",
                                attrs=f' style="background:{fill};color:{ink}"'))
            rows.append(cells)
        out += [f"<h3>{esc(title)}</h3>", table(head, rows, cls="heat")]
    out.append("</section>")
    return out


def _cost(board: Board) -> list[str]:
    out = ['<section id="cost"><h2>Cost against score</h2>']
    pts = [er for er in board.entries if er.cost_usd is not None and er.cost_usd > 0 and er.headline.mean is not None]
    without = [er.entry for er in board.entries if er not in pts]
    if not pts:
        out.append("<p>No cost data in the manifest (no row with <code>cost_usd</code> above 0).</p>")
    else:
        width, height, left, right, top, bottom = 760, 360, 60, 150, 16, 44
        pw, ph = width - left - right, height - top - bottom
        costs = [float(er.cost_usd) for er in pts]
        lo, hi = min(costs), max(costs)
        log = hi / lo > 10
        if log:
            a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
            b = b if b > a else a + 1

            def sx(c: float) -> float:
                return left + pw * (math.log10(c) - a) / (b - a)
            ticks = [(10.0 ** k, f"{10.0 ** k:g}") for k in range(a, b + 1)]
        else:
            lo0, hi0 = 0.0, hi * 1.1

            def sx(c: float) -> float:
                return left + pw * (c - lo0) / (hi0 - lo0)
            step = _nice_step(hi0 / 5)
            ticks = [(k * step, f"{k * step:g}") for k in range(int(hi0 / step) + 1)]

        def sy(v: float) -> float:
            return top + ph * (1 - v)
        parts = []
        for k in range(0, 101, 25):
            y = sy(k / 100)
            parts.append(f'<line class="grid" x1="{left}" y1="{y:.1f}" x2="{left + pw}" y2="{y:.1f}"/>'
                         f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{k}%</text>')
        for c, text in ticks:
            x = sx(c)
            parts.append(f'<line class="grid" x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + ph}"/>'
                         f'<text x="{x:.1f}" y="{top + ph + 16}" text-anchor="middle">{esc(text)}</text>')
        parts.append(f'<line class="axis" x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}"/>'
                     f'<line class="axis" x1="{left}" y1="{top}" x2="{left}" y2="{top + ph}"/>'
                     f'<text x="{left + pw / 2:.1f}" y="{height - 6}" text-anchor="middle">total cost, USD'
                     f'{" (log scale)" if log else ""}</text>')
        for er in pts:
            x, v = sx(float(er.cost_usd)), float(er.headline.mean)
            sd = er.headline.sd
            if sd:
                parts.append(f'<line x1="{x:.1f}" y1="{sy(min(1.0, v + sd)):.1f}" x2="{x:.1f}" '
                             f'y2="{sy(max(0.0, v - sd)):.1f}" stroke="#57606a"/>')
            colour = "#0b5cad" if er.entry != board.baseline else "#e36209"
            parts.append(f'<circle cx="{x:.1f}" cy="{sy(v):.1f}" r="5" fill="{colour}"><title>{esc(er.entry)}: '
                         f'{pct(v)}% at {fixed(er.cost_usd, 2)} USD</title></circle>'
                         f'<text x="{x + 8:.1f}" y="{sy(v) - 6:.1f}">{esc(_label(er.entry, 22))}</text>')
        out.append("<figure>" + _svg(width, height, "Headline O-EVAL against total cost", parts)
                   + "<figcaption>Headline O-EVAL against the entry's total cost over its manifest rows; bars: sd over "
                   "seeds.</figcaption></figure>")
    if without:
        out.append(f"<p class=\"muted small\">Not plotted (no cost, or no score): "
                   f"{esc(', '.join(without))}.</p>")
    head = ["entry", ("O-EVAL %", "num"), ("cost USD", "num"), ("rows with a cost", "num"), ("wall s", "num"),
            "model", "harness"]
    rows = [[td(er.entry), td(pct(er.headline.mean), er.headline.mean), td(fixed(er.cost_usd, 2), er.cost_usd),
             td(er.cost_rows, er.cost_rows), td(fixed(er.wall_s, 0), er.wall_s), td(", ".join(er.models) or "-"),
             td(", ".join(er.harnesses) or "-")] for er in board.entries]
    out += [table(head, rows), "</section>"]
    return out


def _nice_step(x: float) -> float:
    if x <= 0:
        return 1.0
    p = 10 ** math.floor(math.log10(x))
    for k in (1, 2, 5, 10):
        if k * p >= x:
            return k * p
    return 10 * p


def _verified(board: Board) -> list[str]:
    out = ['<section id="verified"><h2>Verified against closeness-only credit</h2>',
           "<p>Of the metric weight on an entry's scored headline cells, the part a replay verified (a passing hard "
           "or claim gate checked the value against the replay) and the part scored by closeness to the panel's "
           "papers alone. Refuted claims count with the closeness-only part here (they score 0).</p>"]
    left, bar, width = 190, 18, 760
    pw = width - left - 80
    height = 20 + (bar + 8) * len(board.entries) + 24
    parts = []
    for i, er in enumerate(board.entries):
        y = 14 + i * (bar + 8)
        parts.append(f'<text x="{left - 6}" y="{y + bar - 5}" text-anchor="end"><title>{esc(er.entry)}</title>'
                     f'{esc(_label(er.entry))}</text>')
        s = er.verified_share
        if s is None:
            parts.append(f'<text x="{left}" y="{y + bar - 5}" class="muted">n/a (no scored headline cell)</text>')
            continue
        w = pw * float(s)
        parts.append(f'<rect x="{left}" y="{y}" width="{w:.1f}" height="{bar}" fill="{VERIFIED_FILL}"><title>'
                     f'{esc(er.entry)}: verified {pct(s, 1)}%</title></rect>'
                     f'<rect x="{left + w:.1f}" y="{y}" width="{pw - w:.1f}" height="{bar}" fill="{CLOSENESS_FILL}">'
                     f'<title>{esc(er.entry)}: closeness only {pct(1 - s, 1)}%</title></rect>'
                     f'<text x="{left + pw + 6}" y="{y + bar - 5}">{pct(s, 0)}% verified</text>')
    out.append("<figure>" + _svg(width, height, "Verified share of metric weight per entry", parts)
               + f'<figcaption><span class="pill" style="color:{VERIFIED_FILL}">verified by a replay</span> '
               f'<span class="pill">closeness only</span></figcaption></figure>')
    head = ["entry", ("O-EVAL %", "num"), ("verified share %", "num"), ("closeness-only share %", "num"),
            ("scored headline cells", "num")]
    rows = []
    for er in board.entries:
        s = er.verified_share
        scored = sum(1 for tr in er.tasks if tr.task in board.headline_tasks for c in tr.cells if c.status == "scored")
        rows.append([td(er.entry), td(pct(er.headline.mean), er.headline.mean), td(pct(s, 1), s),
                     td(pct(1 - s, 1) if s is not None else "-", 1 - s if s is not None else None),
                     td(scored, scored)])
    out += [table(head, rows), "</section>"]
    return out


def _judge(board: Board, judge: Any, task_index: Mapping[str, int]) -> list[str]:
    from .judge import describe_rho

    rank = {er.entry: i for i, er in enumerate(board.entries)}
    out = ['<section id="judge"><h2>Judge scores</h2>',
           f"<p>From <code>{esc(judge.file.name)}</code> ({esc(judge.file.kind)}): {len(judge.cells)} judge "
           "score(s) on board cells. Judge scores never enter O-EVAL; they are shown beside it.</p>"]
    head = ["judge (source)", ("cells", "num"), ("Spearman rho with O-EVAL", "num"), "note"]
    rows = [[td(c.source), td(c.n, c.n), td(f"{c.rho:+.3f}" if c.rho is not None else "undefined", c.rho),
             td(c.reason or ("rho squared " + str(exact_text(c.rho_squared))))] for c in judge.correlations]
    out += ["<h3>Rank correlation</h3>", table(head, rows),
            "<p class=\"muted small\">Spearman rank correlation (average ranks for ties) between the judge's score "
            "and the cell's O-EVAL (mean over seeds, forced seeds 0), over the cells both scored. "
            + esc("; ".join(f"{c.source}: {describe_rho(c)}" for c in judge.correlations)) + "</p>"]
    dis = judge.disagreements
    out.append(f"<h3>Judge high on an infeasible run ({len(dis)})</h3>")
    if dis:
        rows = [[td(Markup(f'<a href="#{run_id(rank[c.judge.entry], task_index[c.judge.task])}">'
                           f"{esc(c.judge.entry)}</a>")), td(c.judge.task), td(c.judge.source),
                 td(f"{float(c.judge.raw):g} / {float(c.judge.max):g}", c.judge.score),
                 td(pct(c.oeval), c.oeval), td(f"{c.infeasible_seeds} of {c.seeds}", c.infeasible_seeds)]
                for c in dis]
        out.append(table(["entry", "task", "judge", ("judge score", "num"), ("O-EVAL %", "num"),
                          ("seeds infeasible", "num")], rows))
    else:
        out.append(f"<p>None: no judge rates at or above {float(judge.high):g} of its scale a run a hard gate made "
                   "infeasible.</p>")
    rows = []
    for c in judge.cells:
        flag = c.infeasible and c.judge.score >= judge.high
        rows.append([td(Markup(f'<a href="#{run_id(rank[c.judge.entry], task_index[c.judge.task])}">'
                               f"{esc(c.judge.entry)}</a>")), td(c.judge.task), td(c.judge.source),
                     td(f"{float(c.judge.raw):g} / {float(c.judge.max):g}", c.judge.score),
                     td(pct(c.oeval), c.oeval), td(f"{c.infeasible_seeds} of {c.seeds}", c.infeasible_seeds),
                     td(Markup('<span class="fail">judge high, run infeasible</span>' if flag else "")),
                     td(c.judge.line, c.judge.line)])
    out += ["<h3>Every judged cell</h3>",
            table(["entry", "task", "judge", ("judge score", "num"), ("O-EVAL %", "num"), ("seeds infeasible", "num"),
                   "disagreement", ("line", "num")], rows)]
    problems = judge.file.problems + judge.unmatched
    if problems or judge.file.problems_left_off:
        out.append(f"<h3>Judge rows not used ({len(problems) + judge.file.problems_left_off})</h3>")
        out.append(table([("line", "num"), "problem"], [[td(p.line if p.line is not None else "-", p.line),
                                                          td(p.message)] for p in problems]))
        if judge.file.problems_left_off:
            out.append(f"<p>... and {judge.file.problems_left_off} more, left off.</p>")
    out.append("</section>")
    return out


def _exclusions(board: Board, notes: Sequence[TaskNote], info: Mapping[str, Any]) -> list[str]:
    out = ['<section id="exclusions"><h2>Exclusions and corrections</h2>']
    rows = []
    for t in board.non_headline_tasks:
        rows.append([td("task left out of the headline"), td(t), td("-"),
                     td(info[t].headline_reason or "headline: false")])
    for t in board.unscorable_tasks:
        rows.append([td("task unscorable"), td(t), td("-"),
                     td("a cell is not scored (no panel paper votes): left out of every mean and of MULTI-BO, "
                        "for every entry")])
    for e in board.errors:
        rows.append([td("manifest row problem"), td(e.get("task") or "-"),
                     td(f"line {e.get('line')}" + (f", {e.get('entry')}" if e.get("entry") else "")),
                     td(f"{e.get('code')}: {e.get('message')}")])
    for er in board.entries:
        absent = []
        for tr in er.tasks:
            for c in tr.cells:
                if not c.forced:
                    continue
                if c.status == "absent":
                    absent.append(tr.task if len(er.seeds) == 1 else f"{tr.task} (seed {c.seed})")
                    continue
                rows.append([td(f"cell zeroed ({c.status})"), td(tr.task, cls="nowrap"),
                             td(f"{er.entry}, seed {c.seed}" + (f", line {c.line}" if c.line is not None else "")),
                             td(_forced_reason(c))])
        if absent:
            rows.append([td("cells zeroed (absent)"), td(f"{len(absent)} task cell(s)"), td(er.entry),
                         td("no manifest row: counted as a missing artifact (0, BO term -1) so that every entry is "
                            "measured on the same tasks: " + ", ".join(absent))])
    out.append("<h3>On this board</h3>")
    out.append(table(["what", "task", "where", "reason"], rows) if rows else "<p>None.</p>")
    out.append("<h3>In the tasks' anchors</h3>")
    if notes:
        out.append(table(["kind", "task", "paper", "metric", "reason"],
                         [[td(n.kind), td(n.task), td(n.paper), td(n.metric), td(n.text)] for n in notes]))
        out.append("<p class=\"muted small\">correction: the anchor is not the value the paper printed (corrected "
                   "by a replay of the statement or a publication, or recomputed; the reason says which); finding: "
                   "an audited value kept as published, with the finding; exclusion: a paper that does not vote on "
                   "a metric.</p>")
    else:
        out.append("<p>None recorded for the board's tasks.</p>")
    out.append("</section>")
    return out


def _forced_reason(c: Any) -> str:
    if c.status == "infeasible":
        return "a hard gate failed: " + (", ".join(c.hard_gates_failed) or c.error_code or "-")
    if c.status == "missing":
        return ("the manifest row says the run produced nothing (\"artifact\": null)" if c.error_code == "null_artifact"
                else "the artifact file was not found" + (f" ({c.error_code})" if c.error_code else ""))
    if c.status == "invalid":
        return "the artifact does not meet its schema" + (f" ({c.error_code})" if c.error_code else "")
    return f"error: {c.error_code or '-'} (the row problems above give the message, where the row has one)"


def _runs(board: Board, judge: Any, task_index: Mapping[str, int], info: Mapping[str, Any]) -> list[str]:
    out = ['<section id="runs"><h2>Runs</h2>',
           "<p class=\"muted small\">One block of rows per entry and task (the heat map's cells link here): every "
           "seed's status, O-EVAL, the verified share of its metric weight, the hard gates that zeroed it and the "
           "manifest line it came from.</p>"]
    sources = judge.sources if judge is not None else ()
    for i, er in enumerate(board.entries):
        meta = []
        if er.models:
            meta.append("model " + ", ".join(er.models))
        if er.harnesses:
            meta.append("harness " + ", ".join(er.harnesses))
        c = er.counts
        meta.append(f"{c['cells']} cells, {c['scored']} scored, {c['hard_gate_zeroes']} hard-gate zeroes, "
                    f"{c['invalid']} invalid, {c['errors']} errors, {c['missing']} missing")
        out.append(f"<h3>{i + 1}. {esc(er.entry)}</h3><p class=\"muted small\">{esc('; '.join(meta))}</p>")
        head = ["task", ("seed", "num"), "status", ("O-EVAL %", "num"), ("verified %", "num"), "hard gates failed",
                "error", ("manifest line", "num")] + [(f"judge: {s}", "num") for s in sources]
        parts = ['<div class="wrap"><table>', "<thead><tr>" + "".join(
            f'<th scope="col"{" class=num" if isinstance(h, tuple) else ""}>{esc(h if isinstance(h, str) else h[0])}'
            f"</th>" for h in head) + "</tr></thead>"]
        for tr in er.tasks:
            j = task_index[tr.task]
            parts.append(f'<tbody id="{run_id(i, j)}">')
            for k, cell in enumerate(tr.cells):
                status = Markup(f'<span class="{"fail" if cell.forced else "pass"}">{esc(cell.status)}</span>')
                row = [td(tr.task if k == 0 else ""), td(cell.seed, cell.seed if isinstance(cell.seed, int) else None),
                       td(status), td(pct(cell.oeval) if cell.status != "absent" else "-", cell.oeval),
                       td(pct(cell.verified_share, 0), cell.verified_share),
                       td(", ".join(cell.hard_gates_failed) or "-"), td(cell.error_code or "-"),
                       td(cell.line if cell.line is not None else "-", cell.line)]
                for s in sources:
                    js = judge.score_of(s, er.entry, tr.task) if k == 0 else None
                    row.append(td(f"{float(js.raw):g} / {float(js.max):g}" if js else "", js.score if js else None))
                parts.append("<tr>" + "".join(row) + "</tr>")
            if tr.oeval is not None and len(tr.cells) > 1:
                parts.append(f'<tr><td></td><td colspan="{len(head) - 1}" class="muted small">O_t (mean over seeds) '
                             f"{pct(tr.oeval)}%" + (f"; MULTI-BO term {fixed(tr.bo.b, 3)} ({esc(tr.bo.rule)})"
                                                     if tr.bo is not None else "") + "</td></tr>")
            parts.append("</tbody>")
        parts.append("</table></div>")
        out.append("\n".join(parts))
    out.append("</section>")
    return out
