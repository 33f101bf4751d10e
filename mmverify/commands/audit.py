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
@click.option("--review", is_flag=True,
              help="print the one-sided review instead: for every higher/lower_is_better metric, its band, the "
                   "panel's best value, the bounds on its good side and the rule that governs a claim beyond it")
@click.option("--write-readmes", is_flag=True,
              help="with --review: write the specification (generated from task.json) and the review table into each "
                   "task's README.md (a contract test checks both are current)")
@task_errors
def audit(anchors_dir, fmt, task_ids, review, write_readmes):
    """Audit the references: gates, schema and scoring rules on every panel value."""
    if review:
        sys.exit(_review(anchors_dir, task_ids, write_readmes))
    from mmverify.gates.audit import AuditReport, audit_anchors, audit_task_id
    from mmverify.gates.audit_render import render_markdown, render_table
    from mmverify.pipeline.report import dumps
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


def _review(anchors_dir, task_ids, write: bool) -> int:
    import os

    from mmverify.gates.review import readme_with_review, render_markdown
    from mmverify.gates.spec_readme import readme_with_spec
    from mmverify.tasks import load_task, task_ids as all_ids

    for tid in task_ids or all_ids(anchors_dir):
        task = load_task(tid, anchors_dir)
        if write:
            path = os.path.join(task.directory, "README.md")
            text = open(path, encoding="utf-8").read() if os.path.exists(path) else f"# {task.id}\n"
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(readme_with_review(readme_with_spec(text, task), task))
            click.echo(f"{path}: specification and one-sided review written")
        else:
            click.echo(f"## {task.id}\n\n{render_markdown(task)}\n")
    return EXIT_OK
