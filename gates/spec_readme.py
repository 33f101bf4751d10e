"""The part of a task README that restates ``task.json``, generated from it.

A README that copies metrics, bands, gates and severities by hand drifts from
the file that decides scores. The specification section is therefore written
from the loaded task (metrics with path, unit, direction, weight and band;
gates with form, level, severity, the check itself, tolerance and what a claim
gate or a verifying gate judges; the replay and the schema mode) between two
markers, by ``mmverify audit --review --write-readmes``; a contract test fails
when a README's copy is not current. Prose around it (why a band, what a
finding means) stays the author's.
"""
from __future__ import annotations

from mmverify.reading.numbers import exact_text

from .compile import compile_gates
from .model import Gate

BEGIN = "<!-- specification: generated from task.json by `mmverify audit --review --write-readmes`, do not edit -->"
END = "<!-- end of specification -->"
HEADING = "## Specification (generated from task.json)"


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _check(g: Gate) -> str:
    """The gate's decidable check, as written in ``task.json``."""
    if g.form == "range":
        parts = []
        if g.lower is not None:
            parts.append(f"{'>' if g.lower.strict else '>='} {g.lower.text}")
        if g.upper is not None:
            parts.append(f"{'<' if g.upper.strict else '<='} {g.upper.text}")
        return f"`{g.inputs[0].text}` " + " and ".join(parts)
    if g.form == "integer":
        return f"`{g.inputs[0].text}` in " + ("{0, 1}" if g.binary else "Z")
    if g.form == "identity":
        agg = dict([g.aggregate]) if g.aggregate else {}
        binds = ", ".join(f"{n} = {agg[n]} of `{p.text}`" if n in agg else f"{n} = `{p.text}`"
                          for n, p in zip(g.identity.var_names, g.identity.var_paths))
        return f"`{g.identity.expr}` ({binds})"
    if g.form == "order":
        op = " < " if g.strict else " <= "
        if g.chain_list is not None:
            return f"`{g.chain_list.text}` elements in order ({op.strip()})"
        return op.join(f"`{p.text}`" for p in g.chain)
    if g.form == "finite_domain":
        return f"`{g.inputs[0].text}` in {{{', '.join(g.domain)}}}"
    if g.form == "partition_sum":
        total = f"`{g.total.text}`" if g.total is not None else g.total_text
        return " + ".join(f"`{p.text}`" for p in g.parts) + f" = {total}"
    return g.form


def render_spec(task) -> str:
    """The specification block of ``task`` (between :data:`BEGIN` and :data:`END`)."""
    gates = compile_gates(task)
    severities = {s: sum(1 for g in gates if g.severity == s) for s in ("hard", "claim", "soft")}
    lines = [BEGIN, "", f"### Metrics ({len(task.metrics)})", "",
             "| id | path | unit | direction | weight | band | supported by |", "|---|---|---|---|---|---|---|"]
    for m in task.metrics:
        band = f"{m.band.kind} {m.band.text}" if m.band else "-"
        lines.append(f"| `{m.id}` | `{m.path.text}` | {_cell(m.unit)} | {m.direction} | {exact_text(m.weight)} | "
                     f"{band} | {', '.join(m.supported_by) or '-'} |")
    counts = ", ".join(f"{n} {s}" for s, n in severities.items() if n)
    lines += ["", f"### Gates ({len(gates)}: {counts})", "",
              "| id | form | level | severity | check | tolerance | judges |", "|---|---|---|---|---|---|---|"]
    for g in gates:
        judges = ", ".join(f"`{p.text}`" for p in g.verifies) or "-"
        lines.append(f"| `{g.id}` | {g.form} | {g.level} | {g.severity} | {_cell(_check(g))} | "
                     f"{g.tolerance_text or '-'} | {judges} |")
    lines += ["", "### Rules", ""]
    lines.append(f"- replay: `{task.replay}` (`mmverify.replay.{task.replay}`)" if task.replay else "- replay: none")
    lines.append("- schema: all-or-nothing (`strict_schema`)" if task.strict_schema else
                 "- schema: local (a violation zeroes the scored fields it touches)")
    lines.append(f"- panel: {len(task.panel)} paper(s): " + ", ".join(
        f"{p.paper_id} ({p.award}{', oracle' if p.oracle else ''})" for p in task.panel))
    lines += ["", END]
    return "\n".join(lines)


def readme_with_spec(text: str, task) -> str:
    """``text`` with its specification block replaced (or inserted after the
    first paragraph block under :data:`HEADING`)."""
    block = render_spec(task)
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        return head + block + tail
    return text.rstrip("\n") + f"\n\n{HEADING}\n\n{block}\n"
