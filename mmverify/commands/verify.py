"""``mmverify verify``: the harness verifier (writes reward.json + reward-details.json).

See :mod:`mmverify.plugin.verifier` for the files and the exit codes. It never
crashes on a bad artifact or task: reward 0.0 and the reason in the details.
"""
from __future__ import annotations

import sys

import click

from .common import anchors_option


@click.command()
@click.option("--task", "task_id", required=True, help="task id (the harness knows it; it is not inferred)")
@click.option("--artifact", "artifact_path", default=None, type=click.Path(dir_okay=True),
              help="the agent's artifact (default: ./<task-id>_result.json)")
@click.option("--reward-dir", required=True, type=click.Path(), help="folder for reward.json and reward-details.json "
              "(created if absent), e.g. /logs/verifier")
@anchors_option
@click.option("--quiet", "-q", is_flag=True, help="print nothing on success")
def verify(task_id, artifact_path, reward_dir, anchors_dir, quiet):
    """Score one artifact for a terminal-agent harness and write the reward files.

    reward.json holds exactly {"reward": <O-EVAL>}; reward-details.json the full
    report. A missing or malformed artifact, an unknown task or a broken anchor
    folder gives reward 0 with the reason in the details (exit 1 or 3).
    """
    from mmverify.plugin.verifier import run_verifier

    result = run_verifier(task_id, artifact_path, reward_dir, anchors_dir)
    err = result.details.get("error") or {}
    if result.reward_path is None:
        click.echo(f"error: {result.details.get('write_error')}", err=True)
    elif not quiet or result.exit_code:
        line = f"reward {result.reward:.6f} ({result.details.get('status')})"
        if err:
            line += f": {err.get('code')}: {err.get('message')}"
        click.echo(line + f" -> {result.reward_path}", err=bool(result.exit_code))
    sys.exit(result.exit_code)
