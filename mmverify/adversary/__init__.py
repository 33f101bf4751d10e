"""A blind adversary: how much of the score can be had without modelling.

It builds artifacts for a task from public material only (statement, artifact
schema, ``gate`` verdicts) with the strategies of :mod:`.attack`, scores each
once and reports the per-task best and the mean O-EVAL. A benchmark whose
blind best is high pays for confident fabrication; ``mmverify attack`` and
``benchmarks/blind_attack.py`` measure it, and a contract test keeps it low.
"""
from __future__ import annotations

from .attack import ATTEMPTS, CLASSIC, STRATEGIES, Attempt, TaskAttack, attack_task, to_json

__all__ = ["ATTEMPTS", "CLASSIC", "STRATEGIES", "Attempt", "TaskAttack", "attack_task", "to_json"]
