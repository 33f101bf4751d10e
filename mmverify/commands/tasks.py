"""``mmverify tasks``: list tasks with their metrics, gates and panels."""
from __future__ import annotations

import click

from mmverify.pipeline.report import dumps

from .common import anchors_option, format_option, task_errors


def task_summary(task) -> dict:
    return {
        "id": task.id, "suite": task.suite, "year": task.year, "problem": task.problem,
        "title": task.title, "headline": task.headline, "headline_reason": task.headline_reason,
        "metrics": [{"id": m.id, "path": m.path.text, "unit": m.unit, "direction": m.direction,
                     "weight": str(m.weight), "band": f"{m.band.kind} {m.band.text}" if m.band else None,
                     "comparable": m.comparable} for m in task.metrics],
        "gates": [{"id": g["id"], "form": g["form"], "level": g["level"], "severity": g["severity"]}
                  for g in task.gates],
        "panel": [{"paper": p.paper_id, "award": p.award, "oracle": p.oracle,
                   "reports": len(p.values), "excluded": len(p.excluded), "audited": sorted(p.audit)}
                  for p in task.panel],
    }


@click.command()
@anchors_option
@format_option
@click.option("--verbose", "-v", is_flag=True, help="list every metric and gate")
@task_errors
def tasks(anchors_dir, fmt, verbose):
    """List tasks, their metrics, gates and panels."""
    from mmverify.tasks import load_all

    rows = [task_summary(t) for t in load_all(anchors_dir)]
    if fmt == "json":
        click.echo(dumps({"tasks": rows}), nl=False)
        return
    md = fmt == "md"
    if md:
        click.echo("| task | suite | year | problem | headline | metrics | gates | papers |")
        click.echo("|---|---|---|---|---|---|---|---|")
    for r in rows:
        cells = [r["id"], r["suite"], str(r["year"]), r["problem"], "yes" if r["headline"] else "no",
                 str(len(r["metrics"])), str(len(r["gates"])), str(len(r["panel"]))]
        if md:
            click.echo("| " + " | ".join(cells) + " |")
        else:
            click.echo(f"{cells[0]:<36} {cells[1]:<6} {cells[2]} {cells[3]}  headline={cells[4]:<3} "
                       f"metrics={cells[5]:<3} gates={cells[6]:<3} papers={cells[7]}")
        if verbose and not md:
            for m in r["metrics"]:
                click.echo(f"    metric {m['id']:<40} {m['direction']:<17} {m['unit']:<10} w={m['weight']} "
                           f"band={m['band'] or '-'}")
            for g in r["gates"]:
                click.echo(f"    gate   {g['id']:<40} {g['form']:<14} level {g['level']} {g['severity']}")
            for p in r["panel"]:
                click.echo(f"    paper  {p['paper']:<12} award={p['award']} oracle={p['oracle']} "
                           f"reports={p['reports']} excluded={p['excluded']} audited={','.join(p['audited']) or '-'}")
    if not md:
        click.echo(f"{len(rows)} task(s)")
