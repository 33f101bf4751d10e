"""``mmverify score ARTIFACT``: the full report for one artifact."""
from __future__ import annotations

import sys

import click

from mmverify.cli import EXIT_OK, EXIT_VERDICT

from .common import anchors_option, format_option, task_errors


@click.command()
@click.argument("artifact", type=click.Path(dir_okay=False))
@click.option("--task", "task_id", default=None, help="task id (inferred from the artifact or file name if omitted)")
@anchors_option
@format_option
@click.option("--json", "as_json", is_flag=True, help="same as --format json")
@click.option("--fail-under", type=click.FloatRange(0, 1), default=None,
              help="exit 1 when O-EVAL is below this value")
@click.option("--no-gates", is_flag=True, help="closeness only: skip the feasibility gates (diagnostic)")
@task_errors
def score(artifact, task_id, anchors_dir, fmt, as_json, fail_under, no_gates):
    """Score ARTIFACT against its task's panel (O-EVAL), after schema and gates."""
    from mmverify.evaluate import score_path
    from mmverify.report import render

    report = score_path(artifact, task_id, anchors_dir, run_gates=not no_gates)
    click.echo(render(report, "json" if as_json else fmt), nl=False)
    if report.status not in ("scored", "not_scored"):
        sys.exit(EXIT_VERDICT)
    if fail_under is not None and (report.oeval is None or float(report.oeval) < fail_under):
        click.echo(f"O-EVAL below --fail-under {fail_under}", err=True)
        sys.exit(EXIT_VERDICT)
    sys.exit(EXIT_OK)
