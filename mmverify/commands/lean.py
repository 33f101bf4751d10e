"""``mmverify lean emit|check|mutate``: Lean 4 obligations, kernel check, axiom audit, mutation suite.

Exit codes: 0 success; 1 a verdict (disagreement between gates and Lean, a
failed audit, a surviving or stillborn mutant, drift of the committed files,
an unreadable artifact); 2 usage; 3 task definition error; 4 task not
inferred; 5 no Lean toolchain found (``check`` and ``mutate`` only — ``emit``
never needs Lean).
"""
from __future__ import annotations

import json
import sys
from typing import Any, Callable

import click

from mmverify.cli import EXIT_NO_LEAN, EXIT_OK, EXIT_USAGE, EXIT_VERDICT

from .common import deprecated_alias, task_errors

# ``--anchors DIR`` is the anchors folder, as in every other command. Until
# version 0.1 a bare ``--anchors`` was the switch "every anchor" (with the
# folder in ``--anchors-dir``); both still work, with a note on stderr.
_ALL = ":every-anchor:"
DEFAULT_TIMEOUT_S = 900.0


def anchors_dir_option(func):
    func = click.option(
        "--anchors", "anchors_dir", type=click.Path(file_okay=False), default=None, is_flag=False, flag_value=_ALL,
        help="anchors folder (default: $MMVERIFY_ANCHORS or the bundled anchors)")(func)
    return deprecated_alias("--anchors-dir", "--anchors DIR", "anchors_dir",
                            type=click.Path(file_okay=False))(func)


def target_options(func):
    """ARTIFACT, ``--task``, ``--all`` and ``--anchors``: what ``emit`` and ``check`` work on."""
    func = anchors_dir_option(func)
    func = click.option("--all", "all_anchors", is_flag=True,
                        help="every anchor's oracle and panel files (the default without ARTIFACT)")(func)
    func = click.option("--task", "task_id", default=None,
                        help="task id (inferred from the artifact if omitted)")(func)
    return click.argument("artifact", required=False, type=click.Path(dir_okay=False))(func)


def _every_anchor(artifact, all_flag: bool, anchors_dir):
    """(every anchor?, anchors folder) from ARTIFACT, --all and --anchors; exits 2 on a conflict."""
    if anchors_dir == _ALL:
        click.echo("note: a bare --anchors is deprecated; without ARTIFACT every anchor is used "
                   "(or say --all)", err=True)
        anchors_dir, all_flag = None, True
    if artifact and all_flag:
        click.echo("error: give either ARTIFACT or --all (every anchor), not both", err=True)
        sys.exit(EXIT_USAGE)
    return not artifact, anchors_dir


def _no_lean(exc) -> None:
    click.echo("error: no Lean 4 toolchain found", err=True)
    click.echo(f"  missing: {exc.missing}", err=True)
    click.echo(f"  install: {exc.hint}", err=True)
    sys.exit(EXIT_NO_LEAN)


def _toolchain():
    """The Lean toolchain; exits 5 (with what to install) when there is none."""
    from mmverify.lean_gen import runner

    try:
        toolchain = runner.find_lean()
        toolchain.version()
    except runner.LeanNotFound as exc:
        _no_lean(exc)
    return toolchain


def _run_lean(run: Callable[..., Any], *args: Any) -> Any:
    """``run(*args)``: exits 5 when the toolchain is lost, 1 when a Lean run fails."""
    from mmverify.lean_gen import runner

    try:
        return run(*args)
    except runner.LeanNotFound as exc:
        _no_lean(exc)
    except runner.LeanRunError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_VERDICT)


def _artifact_file(artifact: str, task_id: str | None, anchors_dir: str | None):
    """(LeanFile) for one user artifact; exits 1 on an unreadable artifact."""
    from mmverify.reading.artifact import ArtifactError, parse_file
    from mmverify.pipeline.evaluate import TaskNotInferred, infer_task_id
    from mmverify.lean_gen import project
    from mmverify.lean_gen.ir import camel
    from mmverify.tasks import load_task

    try:
        parsed = parse_file(artifact)
    except ArtifactError as exc:
        click.echo(f"error: {exc.code}: {exc.message}", err=True)
        sys.exit(EXIT_VERDICT)
    if task_id is None:
        task_id = infer_task_id(parsed, artifact, anchors_dir)
        if task_id is None:
            raise TaskNotInferred(artifact)
    task = load_task(task_id, anchors_dir)
    oset = project.obligations_for_artifact(task, parsed.data, "submitted artifact", "Artifact",
                                            f"artifact sha256 {parsed.sha256}")
    return project.lean_file([project.OBLIGATIONS_DIR, camel(task.id) + "Artifact"], oset)


def _anchor_files(anchors_dir: str | None, task_ids: tuple[str, ...] = ()):
    from mmverify.lean_gen import project

    return project.anchor_files(anchors_dir, list(task_ids) if task_ids else None)


@click.group()
def lean() -> None:
    """Lean 4 obligations: emit, kernel check with axiom audit, mutation suite."""


@lean.command()
@target_options
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="write the Lean file of ARTIFACT here (default: stdout)")
@click.option("--out-dir", type=click.Path(file_okay=False), default=None,
              help="without ARTIFACT: the Lake project folder (default: the LeanProofs/ shipped with the "
                   "package)")
@click.option("--check", "check_only", is_flag=True,
              help="without ARTIFACT: write nothing, exit 1 if the files in the Lake project differ")
@task_errors
def emit(artifact, task_id, all_anchors, anchors_dir, output, out_dir, check_only):
    """Write the Lean obligations of ARTIFACT (without ARTIFACT: of every anchor)."""
    from mmverify.lean_gen import project, runner

    all_anchors, anchors_dir = _every_anchor(artifact, all_anchors, anchors_dir)
    if not all_anchors:
        f = _artifact_file(artifact, task_id, anchors_dir)
        if output:
            with open(output, "w", encoding="utf-8") as fh:
                fh.write(f.text)
            click.echo(f"{output}: {len(f.oset.obligations)} obligation(s), "
                       f"{len(f.oset.unstated)} instance(s) without one", err=True)
        else:
            click.echo(f.text, nl=False)
        sys.exit(EXIT_OK)
    files = _anchor_files(anchors_dir, (task_id,) if task_id else ())
    root = out_dir or str(runner.project_dir())
    if check_only:
        d = project.drift(files, root)
        if task_id:
            d["stale"] = []
        bad = d["changed"] + d["missing"] + d["stale"]
        for k in ("changed", "missing", "stale"):
            for rel in d[k]:
                click.echo(f"{k}: {rel}")
        click.echo(f"{len(files)} file(s) generated; {'drift' if bad else 'no drift'} against {root}")
        sys.exit(EXIT_VERDICT if bad else EXIT_OK)
    if task_id:
        click.echo("error: writing every anchor's files with --task would drop the other tasks' files; "
                   "use --check, or omit --task", err=True)
        sys.exit(EXIT_USAGE)
    before = project.write_project(files, root)
    oracle = sum(len(f.oset.obligations) for f in files if f.oset.artifact == "oracle artifact")
    total = sum(len(f.oset.obligations) for f in files)
    click.echo(f"wrote {len(files)} file(s) to {root}: {oracle} obligation(s) on the oracles, {total} in all "
               f"({len(before['changed'])} changed, {len(before['missing'])} new, "
               f"{len(before['stale'])} removed)")
    from mmverify.lean_gen.check import ledger

    click.echo(ledger(files).line())
    sys.exit(EXIT_OK)


@lean.command()
@target_options
@click.option("--json", "as_json", is_flag=True, help="JSON report")
@click.option("--timeout-s", "timeout", type=click.FloatRange(min=0, min_open=True), default=None,
              help=f"seconds for the Lean process (default: {DEFAULT_TIMEOUT_S:g})")
@deprecated_alias("--timeout", "--timeout-s", "timeout", type=click.FloatRange(min=0, min_open=True))
@click.option("--jobs", "-j", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Lean processes side by side (each checks one batch of files)")
@task_errors
def check(artifact, task_id, all_anchors, anchors_dir, as_json, timeout, jobs):
    """Kernel-check the obligations (one Lean process), audit axioms, compare with the gates."""
    from mmverify.lean_gen.check import check_files, render

    all_anchors, anchors_dir = _every_anchor(artifact, all_anchors, anchors_dir)
    timeout = DEFAULT_TIMEOUT_S if timeout is None else timeout
    toolchain = _toolchain()
    files = ([_artifact_file(artifact, task_id, anchors_dir)] if artifact
             else _anchor_files(anchors_dir, (task_id,) if task_id else ()))
    report = _run_lean(check_files, files, toolchain, timeout, jobs)
    if as_json:
        click.echo(json.dumps(report.as_dict(), indent=2, sort_keys=True))
    else:
        click.echo(render(report), nl=False)
    sys.exit(EXIT_OK if report.ok else EXIT_VERDICT)


@lean.command()
@anchors_dir_option
@click.option("--task", "task_ids", multiple=True, help="restrict the target files to these tasks")
@click.option("--list", "list_only", is_flag=True, help="list the operators and their worked examples")
@click.option("--json", "as_json", is_flag=True, help="JSON report")
@task_errors
def mutate(anchors_dir, task_ids, list_only, as_json):
    """The mutation suite: every mutant must be rejected by the kernel or the axiom audit."""
    from mmverify.lean_gen.mutate import KILLED, OPERATORS, VALUE_OPERATORS, value_mutants
    from mmverify.lean_gen.mutate_run import run_suite

    anchors_dir = None if anchors_dir == _ALL else anchors_dir

    if list_only:
        for op in OPERATORS + VALUE_OPERATORS:
            click.echo(f"{op.name:<24} rejected by the {op.expect}: {op.summary}")
            click.echo(f"{'':<24}   before: {op.example[0]}")
            click.echo(f"{'':<24}   after:  {op.example[1]}")
        sys.exit(EXIT_OK)
    toolchain = _toolchain()
    files = _anchor_files(anchors_dir, task_ids)
    extra = value_mutants(files, anchors_dir)
    suite = _run_lean(run_suite, [(f.relpath, f.text) for f in files], toolchain, OPERATORS, extra)
    if as_json:
        click.echo(json.dumps(suite.as_dict(), indent=2, sort_keys=True))
    else:
        click.echo(f"Lean: {suite.version}; native_decide spelled `{suite.spelling}`")
        for o in suite.outcomes:
            m = o.mutant
            by = f" by the {o.rejected_by}" if o.rejected_by else ""
            click.echo(f"{m.operator:<24} {o.outcome.upper()}{by}  [{m.label} :: {m.target}]")
            if o.outcome != KILLED:
                click.echo(f"{'':<24}   {o.detail}")
        for name in suite.not_applicable:
            click.echo(f"{name:<24} NOT APPLICABLE (no site in the target files)")
        click.echo(f"mutants: {suite.killed} killed, {suite.stillborn} stillborn, {suite.survived} survived, "
                   f"{suite.total} total ({suite.seconds:.2f} s)")
    ok = suite.killed == suite.total and suite.total > 0
    sys.exit(EXIT_OK if ok else EXIT_VERDICT)
