"""``mmverify gate ARTIFACT``: schema + gates only, safe for an agent to call on
its own work.

It prints what the artifact holds at every gated field, each gate's verdict and
the statement's bound — and nothing from the panel: no anchor value, no oracle
value, no gate description (descriptions are free text written by the anchor's
author and could quote a reference value). Exit 1 when the artifact cannot be
read, breaks its schema, or fails a hard gate; 0 otherwise (gaps and soft
failures are reported, not fatal).
"""
from __future__ import annotations

import sys

import click

from mmverify.cli import EXIT_OK, EXIT_VERDICT

from .common import anchors_option, format_option, task_errors

SCHEMA_VERSION = "mmverify.gate/1"


def gate_result(artifact_path: str, task_id: str | None, anchors_dir: str | None) -> dict:
    """The JSON-able result of ``mmverify gate`` (raises TaskLoadError / TaskNotInferred)."""
    from mmverify.artifact import ArtifactError, parse_file
    from mmverify.evaluate import TaskNotInferred, infer_task_id
    from mmverify.gates import evaluate_gates
    from mmverify.tasks import load_task
    from mmverify.validate import validate_artifact

    try:
        artifact = parse_file(artifact_path)
    except ArtifactError as exc:
        artifact = None
        error = exc.as_dict()
    if task_id is None:
        task_id = infer_task_id(artifact, artifact_path, anchors_dir)
        if task_id is None:
            raise TaskNotInferred(artifact_path)
    task = load_task(task_id, anchors_dir)
    out = {"schema_version": SCHEMA_VERSION, "task": task.id,
           "artifact": {"source": artifact_path, "sha256": artifact.sha256 if artifact else None}}
    if artifact is None:
        return dict(out, status="error", error=error, schema_errors=[], gates=None)
    schema_errors = validate_artifact(task.artifact_schema, artifact.data)
    report = evaluate_gates(task, artifact.data, None)  # no replay: see mmverify.plugin.selfcheck
    if report.hard_failures:
        status = "infeasible"
    elif schema_errors:
        status = "invalid"
    else:
        status = "feasible"
    return dict(out, status=status, error=None, schema_errors=[e.as_dict() for e in schema_errors],
                gates=report.as_dict())


_MEANING = {"feasible": "schema valid, no hard gate fails",
            "infeasible": "a hard gate fails: the task would score 0",
            "invalid": "the artifact breaks its schema: the task would score 0",
            "error": "the artifact could not be read: the task would score 0"}


def render_gate(result: dict, fmt: str) -> str:
    from mmverify.report import dumps

    if fmt == "json":
        return dumps(result)
    md = fmt == "md"
    lines = []
    head = [f"task     {result['task']}", f"artifact {result['artifact']['source']}",
            f"status   {result['status']}: {_MEANING[result['status']]}"]
    if result["error"]:
        head.append(f"error    {result['error']['code']}: {result['error']['message']}")
    for e in result["schema_errors"]:
        head.append(f"schema   {e['field']}: {e['problem']}")
    gates = result["gates"]
    if md:
        lines.append(f"### gates: {result['task']}")
        lines.append("")
        lines += [f"- {h}" for h in head]
    else:
        lines += head
    if gates is not None:
        c = gates["counts"]
        count = (f"{c['total']} gate instance(s): {c['pass']} pass, {c['fail']} fail "
                 f"({c['hard_failures']} hard), {c['gap']} gap")
        if md:
            lines += [f"- {count}", "", "| verdict | severity | level | form | gate | detail |",
                      "|---|---|---|---|---|---|"]
        else:
            lines += [f"gates    {count}", ""]
        for i in gates["instances"]:
            name = i["gate"] if i["index"] is None else f"{i['gate']}[{i['index']}]"
            tol = f" [tolerance {i['tolerance']}]" if i["tolerance"] else ""
            if md:
                cells = [i["verdict"].upper(), i["severity"], i["level"], i["form"], name, i["detail"] + tol]
                lines.append("| " + " | ".join(x.replace("|", "\\|") for x in cells) + " |")
            else:
                lines.append(f"{i['verdict'].upper():<4} {i['severity']:<4} {i['level']} {i['form']:<13} "
                             f"{name}: {i['detail']}{tol}")
    return "\n".join(lines) + "\n"


@click.command()
@click.argument("artifact", type=click.Path(dir_okay=False))
@click.option("--task", "task_id", default=None, help="task id (inferred from the artifact or file name if omitted)")
@anchors_option
@format_option
@task_errors
def gate(artifact, task_id, anchors_dir, fmt):
    """Check ARTIFACT against its schema and its task's gates (no anchor value is shown)."""
    result = gate_result(artifact, task_id, anchors_dir)
    click.echo(render_gate(result, fmt), nl=False)
    sys.exit(EXIT_OK if result["status"] == "feasible" else EXIT_VERDICT)
