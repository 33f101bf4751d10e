"""``mmverify gate ARTIFACT``: schema + gates only, safe for an agent to call on
its own work.

It prints what the artifact holds at every gated field, each gate's verdict and
the statement's bound — and nothing from the panel: no anchor value, no oracle
value, no gate description (descriptions are free text written by the anchor's
author and could quote a reference value). Exit 1 when the artifact cannot be
read, breaks its schema, or fails a hard gate; 0 otherwise (gaps and soft
failures are reported, not fatal). The verdict is the one ``mmverify score``
gives, in the same words; ``feasible`` is its ``scored``.
"""
from __future__ import annotations

import sys

import click

from mmverify.cli import EXIT_OK, EXIT_VERDICT

from .common import anchors_option, format_option, strict_schema_option, task_errors

SCHEMA_VERSION = "mmverify.gate/1"


def gate_result(artifact_path: str, task_id: str | None, anchors_dir: str | None,
                strict_schema: bool = False) -> dict:
    """The JSON-able result of ``mmverify gate`` (raises TaskLoadError /
    TaskNotInferred / TaskMismatch).

    It is the self-check (:func:`mmverify.plugin.selfcheck.self_check`) in the
    command's format: the same verdict, in the same order, as scoring gives
    (:func:`mmverify.pipeline.violations.verdict`), computed without the panel."""
    from mmverify.reading.artifact import ArtifactError, parse_file
    from mmverify.pipeline.evaluate import TaskNotInferred, bind_task
    from mmverify.plugin.selfcheck import self_check
    from mmverify.tasks import load_task

    try:
        artifact = parse_file(artifact_path)
    except ArtifactError as exc:
        artifact = exc
    # --task binds the task (TaskMismatch when the artifact names another); else inferred
    bound = task_id
    task_id = bind_task(artifact if not isinstance(artifact, ArtifactError) else None, artifact_path, bound,
                        anchors_dir)
    if bound is None:
        if task_id is None:
            if isinstance(artifact, ArtifactError):
                # the file itself is the problem: say so rather than "cannot tell the task"
                return {"schema_version": SCHEMA_VERSION, "task": None,
                        "artifact": {"source": artifact_path, "sha256": None},
                        "status": "missing" if artifact.code == "missing_artifact" else "error",
                        "error": artifact.as_dict(), "schema_errors": [], "gates": None,
                        "missing_scored_fields": [], "unwitnessed_claims": []}
            raise TaskNotInferred(artifact_path)
    task = load_task(task_id, anchors_dir)
    check = self_check(task, artifact, strict_schema=strict_schema)   # no replay: see mmverify.plugin.selfcheck
    status = "feasible" if check["status"] == "ok" else check["status"]
    return {"schema_version": SCHEMA_VERSION, "task": task.id,
            "artifact": {"source": artifact_path, "sha256": check["artifact"]["sha256"]},
            "status": status, "error": check["error"], "schema_errors": check["schema_errors"],
            "gates": _replay_gaps_said(check["gates"]), "missing_scored_fields": check["missing_scored_fields"],
            "unwitnessed_claims": check["unwitnessed_claims"]}


REPLAY_GAP = ("decided by `mmverify score`: this gate reads the replay of the artifact's own plan, "
              "which `gate` does not run (nothing to add to the artifact)")


def _replay_gaps_said(gates: dict | None) -> dict | None:
    """Replay gates (level C, reading ``$replay.`` values) are gaps here because
    the replay is not run; say that instead of "no field '$replay'", which
    would invite the user to add such a field. Their reason becomes ``replay``."""
    if gates is None:
        return None
    instances = []
    for i in gates["instances"]:
        if i["verdict"] == "gap" and any(str(p).startswith("$replay.") for p in i.get("paths") or ()) \
                and "'$replay'" in (i.get("detail") or ""):
            i = dict(i, reason="replay", detail=REPLAY_GAP)
        instances.append(i)
    return dict(gates, instances=instances)


# the words are those of ``mmverify score``; "feasible" is what score calls
# scored (or not_scored): nothing zeroes the whole artifact
_MEANING = {"feasible": "no hard gate fails and the schema does not zero the artifact: it would be scored",
            "infeasible": "a hard gate fails: the task would score 0",
            "invalid": "the artifact breaks its schema (all-or-nothing): the task would score 0",
            "error": "the artifact could not be read: the task would score 0",
            "missing": "the artifact file does not exist: the task would score 0"}


def render_gate(result: dict, fmt: str) -> str:
    from mmverify.pipeline.report import dumps, effect_note
    from mmverify.render.tables import printable

    if fmt == "json":
        return dumps(result)
    md = fmt == "md"
    lines = []
    head = [f"task     {result['task'] or '-'}", f"artifact {result['artifact']['source']}",
            f"status   {result['status']}: {_MEANING[result['status']]}"]
    if result["error"]:
        head.append(f"error    {result['error']['code']}: {result['error']['message']}")
    for e in result["schema_errors"]:
        head.append(f"schema   {e['field']}: {e['problem']}{effect_note(e.get('effect'))}")
    for f in result["missing_scored_fields"]:
        head.append(f"missing  {f['path']} ({f['unit']}): a scored field the artifact lacks; it would score 0")
    for c in result["unwitnessed_claims"]:
        head.append(f"claim    {c['path']}: unwitnessed: {c['detail']}")
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
    return "\n".join(map(printable, lines)) + "\n"


@click.command()
@click.argument("artifact", type=click.Path(dir_okay=False))
@click.option("--task", "task_id", default=None, help="task id (inferred from the artifact or file name if omitted)")
@anchors_option
@format_option
@strict_schema_option
@task_errors
def gate(artifact, task_id, anchors_dir, fmt, strict_schema):
    """Check ARTIFACT against its schema and its task's gates (no anchor value is shown).

    Lists the scored fields the artifact lacks and the claims a hard gate
    cannot check (both score 0), and gives the verdict score would give."""
    result = gate_result(artifact, task_id, anchors_dir, strict_schema)
    click.echo(render_gate(result, fmt), nl=False)
    sys.exit(EXIT_OK if result["status"] == "feasible" else EXIT_VERDICT)
