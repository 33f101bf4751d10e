"""``mmverify audit``: run the gates and the schema on every oracle, panel value
and audited original; flag infeasible anchors, degenerate bands, incomparable
units, literature splits, out-of-schema values and ungated directional metrics;
for a task in progress, its unfinished placeholders, unit-less and unranged
number fields and unjustified directions. The table ends with what is left, in
the order to fix it, and the command that runs the task's contracts.

Exit codes: 3 when a task does not load (anchor definition error), else 1 when
an unaudited problem is found, else 0. Audited and info findings are reported
only.
"""
from __future__ import annotations

import sys

import click

from mmverify.cli import EXIT_OK, EXIT_TASK, EXIT_VERDICT

from .common import anchors_option, format_option, task_errors


@click.command()
@anchors_option
@format_option
@click.option("--task", "task_ids", multiple=True, help="audit only this task (repeatable)")
@task_errors
def audit(anchors_dir, fmt, task_ids):
    """Audit the references: gates, schema and scoring rules on every panel value."""
    from mmverify.gates.audit import AuditReport, audit_anchors, audit_task_id, render_markdown, render_table
    from mmverify.report import dumps
    from mmverify.tasks import default_anchors_dir

    if task_ids:
        anchors_dir = anchors_dir or default_anchors_dir()
        report = AuditReport(anchors_dir, tuple(audit_task_id(t, anchors_dir) for t in task_ids))
    else:
        report = audit_anchors(anchors_dir)
    if fmt == "json":
        click.echo(dumps(report.as_dict()), nl=False)
    elif fmt == "md":
        click.echo(render_markdown(report), nl=False)
    else:
        from mmverify.gates.authoring import render_guide

        click.echo(render_table(report) + render_guide(report, anchors_dir), nl=False)
    if report.task_errors:
        sys.exit(EXIT_TASK)
    sys.exit(EXIT_VERDICT if report.problems else EXIT_OK)
