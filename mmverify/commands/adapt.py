"""``mmverify adapt mm-agent``: the block for MM-Agent's code template
(``--emit-prompt TASK``), and an artifact built from an MM-Agent run folder
(``RUN_DIR --task ID``; see :mod:`mmverify.plugin.mm_agent`).

Exit codes: 0 the block was printed, or the artifact is complete (every
required, scored and gated field is present, no conflict, the schema
validates); 1 the artifact was written but is incomplete (the report says
exactly what is missing); 2 usage error (no such run folder, RUN_DIR and
--emit-prompt together or neither); 3 unknown task or broken anchors.
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


def _usage(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(EXIT_USAGE)


@adapt.command("mm-agent")
@click.argument("run_dir", required=False, type=click.Path())
@click.option("--task", "task_id", default=None, help="task id the run answers (with RUN_DIR)")
@click.option("--emit-prompt", "emit_task", metavar="TASK", default=None,
              help="print the block to paste into MM-Agent's code template for TASK, and exit")
@click.option("--output", "-o", "output", type=click.Path(dir_okay=False), default=None,
              help="write the artifact here (atomically); without it the artifact goes to stdout "
                   "and the report to stderr")
@click.option("--from-text", is_flag=True,
              help="also take labelled numbers from execution_result and solution_interpretation, by the "
                   "task's mm_agent_labels.json, for fields no results file gives (low trust: marked in "
                   "_provenance and the report)")
@click.option("--solution", "solution_file", type=click.Path(dir_okay=False), default=None,
              help="the solution JSON (default: RUN_DIR/json/<task>.json)")
@click.option("--report", "report_file", type=click.Path(dir_okay=False), default=None,
              help="also write the adapt report as JSON to this file")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="format of the report")
@anchors_option
@task_errors
def mm_agent(run_dir, task_id, emit_task, output, from_text, solution_file, report_file, fmt, anchors_dir):
    """Build TASK's artifact from an MM-Agent run folder RUN_DIR
    (MMAgent/output/<method>/<task>_<timestamp>/), or print the template block.

    Each subtask's script saves its numbers to code/main<k>.results.json, keyed
    by the task's field paths (the --emit-prompt block asks for it). Subtasks
    are matched to their scripts by code, only scripts that passed are read,
    unknown keys are rejected and other files ignored, all of it listed.
    Numbers are never guessed from prose; --from-text is opt-in and low-trust.
    """
    if emit_task is not None:
        if run_dir or task_id or output or from_text or solution_file or report_file:
            _usage("--emit-prompt TASK takes no run folder and no other option but --anchors")
        from mmverify.plugin.mm_agent_prompt import emit_block
        from mmverify.tasks import load_task

        click.echo(emit_block(load_task(emit_task, anchors_dir)), nl=False)
        sys.exit(EXIT_OK)
    if not run_dir:
        _usage("give RUN_DIR and --task ID, or --emit-prompt TASK")
    if not task_id:
        _usage("--task ID is required with RUN_DIR")
    if not os.path.isdir(run_dir):
        _usage(f"run folder not found: {run_dir}")
    if solution_file and not os.path.isfile(solution_file):
        _usage(f"solution file not found: {solution_file}")

    from mmverify.plugin.exactjson import dumps_exact
    from mmverify.plugin.mm_agent import adapt_run, render_report
    from mmverify.plugin.verifier import write_atomic

    result = adapt_run(run_dir, task_id, anchors_dir=anchors_dir, from_text=from_text,
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
