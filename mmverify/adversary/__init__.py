"""A blind adversary: how much of the score can be had without modelling.

It builds artifacts for a task from public material only (statement, artifact
schema with its descriptions, scored paths and directions, ``gate`` verdicts)
with the strategies of :mod:`.attack` and the generic families of
:mod:`.families`, scores each once and reports per task the best attempt, the
mean score per attempt and the expected best of ``n`` attempts. A benchmark
whose blind best is high pays for confident fabrication; ``mmverify attack``
and ``benchmarks/blind_attack.py`` measure it, and a contract test watches it.

:mod:`.feedback` plays a stronger threat, a policy trained on the reward: a
search that reads scores, from a blind start, with a fixed budget of them
(``benchmarks/feedback_attack.py``).
"""
from __future__ import annotations

from .attack import ATTEMPTS, CLASSIC, STRATEGIES, Attempt, TaskAttack, attack_task, to_json

__all__ = ["ATTEMPTS", "CLASSIC", "STRATEGIES", "Attempt", "TaskAttack", "attack_task", "to_json"]
