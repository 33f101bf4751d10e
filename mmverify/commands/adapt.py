"""``mmverify adapt mm-agent RUN_DIR --task ID``: build an artifact from an
MM-Agent run folder (see :mod:`mmverify.plugin.mm_agent` for the convention).

Exit codes: 0 the artifact is complete (every required, scored and gated field
is present, no conflict, the schema validates); 1 it was written but is
incomplete (the report says exactly what is missing); 2 usage error (no such
run folder); 3 unknown task or broken anchors.
"""
from __future__ import annotations

import os
import sys

import click

from mmverify.cli import EXIT_OK, EXIT_USAGE, EXIT_VERDICT

from .common import anchors_option, task_errors


@click.group()
def adapt():
    """Turn another system's run output into an mmverify artifact."""


@adapt.command("mm-agent")
@click.argument("run_dir", type=click.Path())
@click.option("--task", "task_id", required=True, help="task id the run answers")
@click.option("--output", "-o", "output", type=click.Path(dir_okay=False), default=None,
              help="write the artifact here (atomically); without it the artifact goes to stdout "
                   "and the report to stderr")
@click.option("--from-stdout", is_flag=True,
              help="also take `<field path> = <number>` lines of the raw execution output, for fields no "
                   "results file gives (marked low-trust in _provenance and the report)")
@click.option("--solution", "solution_file", type=click.Path(dir_okay=False), default=None,
              help="the solution JSON (default: RUN_DIR/solution.json or RUN_DIR/json/*.json)")
@click.option("--report", "report_file", type=click.Path(dir_okay=False), default=None,
              help="also write the adapt report as JSON to this file")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="format of the report")
@anchors_option
@task_errors
def mm_agent(run_dir, task_id, output, from_stdout, solution_file, report_file, fmt, anchors_dir):
    """Build TASK's artifact from the results files of an MM-Agent run in RUN_DIR.

    Each subtask's script writes named numbers (a flat JSON object of artifact
    field paths) to <script>.results.json or results.json next to it. Numbers
    are never guessed from prose.
    """
    from mmverify.plugin.exactjson import dumps_exact
    from mmverify.plugin.mm_agent import adapt_run, render_report
    from mmverify.plugin.verifier import write_atomic

    if not os.path.exists(run_dir):
        click.echo(f"error: run folder not found: {run_dir}", err=True)
        sys.exit(EXIT_USAGE)
    if solution_file and not os.path.isfile(solution_file):
        click.echo(f"error: solution file not found: {solution_file}", err=True)
        sys.exit(EXIT_USAGE)
    result = adapt_run(run_dir, task_id, anchors_dir=anchors_dir, from_stdout=from_stdout,
                       solution_file=solution_file)
    text = dumps_exact(result.artifact)
    result.report["output"] = output
    rendered = dumps_exact(result.report) if fmt == "json" else render_report(result.report)
    if report_file:
        write_atomic(report_file, dumps_exact(result.report))
    if output:
        write_atomic(output, text)
        click.echo(rendered, nl=False)
    else:
        click.echo(text, nl=False)
        click.echo(rendered, nl=False, err=True)
    sys.exit(EXIT_OK if result.complete else EXIT_VERDICT)
