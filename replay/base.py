"""The result type every per-task replay returns.

A replay is a pure function from an artifact's witness fields (the plan behind
a claim) and the task's official data to *derived values*. Ordinary gates read
them at paths rooted ``$replay.`` (``$replay.q1.effective_duration_s``), so the
six forms still decide; a derived value the witness does not determine is a
*gap* with its reason, and a gate reading it is a witnessed gap, never a pass.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Mapping

ROOT = "$replay"


@dataclass(frozen=True)
class Derived:
    """Derived values by name (exact), and a reason for each name left out."""

    values: Mapping[str, Fraction] = field(default_factory=dict)
    gaps: Mapping[str, str] = field(default_factory=dict)
