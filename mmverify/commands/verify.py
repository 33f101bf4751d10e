"""``mmverify verify``: the harness verifier (writes reward.json + reward-details.json).

See :mod:`mmverify.plugin.verifier` for the files, the exit codes and the
options (declared once there; :mod:`mmverify.launch` reads plain command lines
with the same declaration without click). It never crashes on a bad artifact
or task: reward 0.0 and the reason in the details.
"""
from __future__ import annotations

import sys

import click

from mmverify.plugin.verifier import VERIFY_OPTIONS, verify_command

from .common import options_of


@click.command()
@options_of(VERIFY_OPTIONS)
def verify(task_id, artifact_path, reward_dir, anchors_dir, quiet):
    """Score one artifact for a terminal-agent harness and write the reward files.

    reward.json holds exactly {"reward": <O-EVAL>}; reward-details.json the full
    report. A missing or malformed artifact, an unknown task or a broken anchor
    folder gives reward 0 with the reason in the details (exit 1 or 3).
    """
    sys.exit(verify_command(task_id, artifact_path, reward_dir, anchors_dir, quiet))
