"""One run's report as a self-contained HTML page (``mmverify score ARTIFACT
--format html``): the header, the metrics against the panel, the panel's
papers and rules, the gate verdicts (failed first) and the replay.

The page shows no anchor value the text report does not show: the metric
rows are the text report's own cells (the same shortened values and anchors),
a passing gate instance is shown without its detail (which can name a
replayed value), and of the replayed values only those replayed from what the
artifact hands in (its plan, or the method it names) are shown, never one
equal to an anchor value the text report leaves out. A value the statement
alone determines (the replay module's ``STATEMENT``) is the reference a claim
is decided against: it is withheld, as in the text report, unless a failing
gate's detail names it there. Every string is escaped.
"""
from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import Any

from mmverify.reading import paths
from mmverify.render.htmlpage import Markup, esc, page, table, td
from mmverify.reading.numbers import fraction_text, to_fraction
from mmverify.pipeline.report import _HEAD, Report, _header_lines, _rows, _short
from mmverify.pipeline.statuses import STATUSES
from mmverify.render.tables import fixed

_VERDICT_ORDER = {("fail", "hard"): 0, ("fail", "claim"): 1, ("fail", "soft"): 2, ("gap", "hard"): 3,
                  ("gap", "claim"): 4, ("gap", "soft"): 5}
REPLAY_PREFIX = "$replay."


def gate_order(inst: Any) -> int:
    """Failed first (hard, claim, soft), then gaps, then passes (a stable sort keeps gate order within)."""
    return _VERDICT_ORDER.get((inst.verdict, inst.severity), 6)


def replay_readers(gates: Any) -> dict[str, set[str]]:
    """Replay value name -> the severities of the gates that read it."""
    out: dict[str, set[str]] = {}
    replay = getattr(gates, "replay", None)
    if replay is None:
        return out
    inputs = [(inp, g.severity) for g in gates.gates for inp in g.inputs if inp.text.startswith(REPLAY_PREFIX)]
    for name in replay.values:
        for inp, severity in inputs:
            if inp.text == REPLAY_PREFIX + name or paths.matches(inp, REPLAY_PREFIX + name):
                out.setdefault(name, set()).add(severity)
    return out


def statement_values(module: str) -> frozenset[str]:
    """The names a replay module declares the statement alone determines (its ``STATEMENT``)."""
    from mmverify.replay import load_module

    try:
        mod = load_module(module.rsplit(".", 1)[-1])
    except ValueError:
        return frozenset()
    return frozenset(getattr(mod, "STATEMENT", ()))


def _numbers(value: Any) -> list[Fraction]:
    if isinstance(value, dict):
        return [x for v in value.values() for x in _numbers(v)]
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _numbers(v)]
    f = to_fraction(value)
    if f is None and isinstance(value, (float, Decimal)):
        f = to_fraction(str(value))
    return [] if f is None else [f]


def hidden_anchor_values(report: Report) -> frozenset[Fraction]:
    """The anchor numbers the text report does not show: those of list or
    table anchors (shown there as ``[n items]``) and of anchors too long for
    its column (shortened)."""
    out: set[Fraction] = set()
    if report.panel is None:
        return frozenset()
    for m in report.panel.metrics:
        for pm in m.per_paper:
            if pm.anchor is not None and _short(pm.anchor) != str(pm.anchor):
                out.update(_numbers(pm.anchor))
    return frozenset(out)


def shown_replay_values(report: Report) -> list[tuple[str, str | None, str]]:
    """(name, value text or None when withheld, why) for every replayed value.

    A value the statement alone determines (the replay module's
    ``STATEMENT``) is withheld: it is the reference a claim is decided against.
    A value replayed from what the artifact itself hands in (its plan, or the
    method it names as witness) is shown, unless it equals an anchor value the
    text report does not show."""
    gates = report.gates
    readers = replay_readers(gates)
    statement = statement_values(gates.replay.module)
    hidden = hidden_anchor_values(report)
    out = []
    for name, value in sorted(gates.replay.values.items()):
        read = ", ".join(sorted(readers.get(name, ()))) or "no"
        if name in statement:
            out.append((name, None, "withheld: the statement alone determines it (the reference a claim is "
                                    f"decided against); read by {read} gate(s)"))
        elif value in hidden:
            out.append((name, None, "withheld: equal to an anchor value the text report does not show"))
        else:
            out.append((name, fraction_text(value), f"replayed from what this artifact hands in; read by {read} "
                                                    "gate(s)"))
    return out


def render_html(report: Report) -> str:
    """The report as a complete HTML page."""
    title = f"mmverify report: {report.task_id}"
    body = [f"<header><h1>{esc(report.task_id)}</h1>"]
    if report.task_info.get("title"):
        body.append(f"<p class=\"muted\">{esc(report.task_info['title'])}</p>")
    status_cls = "pass" if report.status in ("scored",) else "fail" if report.forced_fail else "gap"
    body.append("<p>O-EVAL <b>" + (f"{float(report.oeval):.4f}" if report.oeval is not None else "not scored")
                + f"</b>; status <b class=\"{status_cls}\">{esc(report.status)}</b> "
                f"({esc(STATUSES[report.status])}); ruleset {esc(report.ruleset)}</p>")
    sections = [("summary", "Summary")]
    if report.panel is not None:
        sections += [("metrics", "Metrics"), ("panel", "Panel")]
    if report.gates is not None:
        sections.append(("gates", "Gates"))
        if report.gates.replay is not None:
            sections.append(("replay", "Replay"))
    body.append("<nav aria-label=\"sections\">" + "".join(f'<a href="#{k}">{esc(v)}</a>' for k, v in sections)
                + "</nav></header><main>")
    body += _summary(report)
    if report.panel is not None:
        body += _metrics(report)
        body += _panel(report)
    if report.gates is not None:
        body += _gates(report)
        if report.gates.replay is not None:
            body += _replay(report)
    body.append("</main><footer class=\"muted small\"><p>Written by mmverify score --format html.</p></footer>")
    return page(title, body)


def render_error_html(source: str, code: str, message: str) -> str:
    """A page for an artifact that yielded no report (an engine error or the time cap)."""
    return page(f"mmverify report: {source}", [
        f"<header><h1>{esc(source)}</h1></header><main><p>status <b class=\"fail\">error</b>: "
        f"{esc(code)}: {esc(message)}</p></main>"])


def _summary(report: Report) -> list[str]:
    rows = []
    for line in _header_lines(report):
        key, _, rest = line.partition(" ")
        if not key:            # a continuation line of the one above
            key, rest = "", line.strip()
        rows.append([td(key), td(rest.strip())])
    return ['<section id="summary"><h2>Summary</h2>', table(["", ""], rows, sortable=False), "</section>"]


def _metrics(report: Report) -> list[str]:
    head = [(h, "num") if h in ("w", "r") else h for h in _HEAD]
    rows = []
    for r in _rows(report):
        cells = []
        for h, v in zip(_HEAD, r):
            if h in ("w", "r"):
                cells.append(td(v, float(v) if v not in ("-", "") else None))
            elif h == "judged":
                cls = {"verified": "pass", "refuted": "fail"}.get(v, "")
                cells.append(td(Markup(f'<span class="{cls}">{esc(v)}</span>') if cls else v))
            else:
                cells.append(td(v))
        rows.append(cells)
    return ['<section id="metrics"><h2>Metrics</h2>',
            "<p class=\"muted small\">One row per metric and panel paper: the artifact's value, how it was judged "
            "(verified by a replay, refuted by one, or closeness only), the paper's anchor, the band width w and "
            "the closeness r. Values and anchors are shortened as in the text report.</p>",
            table(head, rows), "</section>"]


def _panel(report: Report) -> list[str]:
    rows = [[td(p.paper_id), td(p.award), td("yes" if p.oracle else "no"), td(len(p.reported), len(p.reported)),
             td(fixed(p.r, 4) if p.r is not None else "does not vote", p.r)] for p in report.panel.papers]
    out = ['<section id="panel"><h2>Panel</h2>',
           table(["paper", "award", "oracle", ("|S_p|", "num"), ("R", "num")], rows)]
    if report.panel.rules:
        out.append("<ul>" + "".join(
            f"<li>rule <code>{esc(r.rule)}</code> [{esc(r.metric_id)}"
            f"{esc('/' + r.paper_id) if r.paper_id else ''}]: {esc(r.detail)}</li>" for r in report.panel.rules)
            + "</ul>")
    out.append("</section>")
    return out


def _gates(report: Report) -> list[str]:
    g = report.gates
    findings = report.findings or {}
    out = ['<section id="gates"><h2>Gates</h2>', f"<p>{esc(g.count_line().replace('gates    ', ''))}</p>"]
    rows = []
    for inst in sorted(g.instances, key=gate_order):
        verdict = Markup(f'<span class="{esc(inst.verdict)}">{esc(inst.verdict.upper())}</span>')
        if inst.verdict == "pass":
            detail = "-"
        else:
            detail = inst.detail + (f"  [{findings[inst.name]}]" if inst.name in findings else "")
        rows.append([td(verdict), td(inst.severity), td(inst.form), td(inst.name), td(detail),
                     td(", ".join(inst.paths))])
    out.append(table(["verdict", "severity", "form", "gate", "detail", "reads"], rows))
    out.append("<p class=\"muted small\">Failed instances first (hard, then claim, then soft), then gaps, then "
               "passes. A hard failure makes the artifact infeasible (O-EVAL 0); a failing claim gate refutes the "
               "claims it verifies (r = 0). A passing instance's detail is not shown.</p></section>")
    return out


def _replay(report: Report) -> list[str]:
    rp = report.gates.replay
    out = ['<section id="replay"><h2>Replay</h2>',
           f"<p>module <code>{esc(rp.module)}</code>, status <b>{esc(rp.status)}</b>"
           + (f": {esc(rp.detail)}" if rp.detail else "") + "</p>"]
    values = shown_replay_values(report)
    if values:
        out.append(table(["value", "replayed", "shown because / withheld because"],
                         [[td(n), td(v if v is not None else "withheld"), td(why)] for n, v, why in values]))
    if rp.gaps:
        out.append("<h3>Replay gaps</h3>")
        out.append(table(["value", "why it could not be replayed"], [[td(k), td(v)] for k, v in sorted(rp.gaps.items())]))
    out.append("</section>")
    return out
