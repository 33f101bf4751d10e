"""What a task is: its metrics, papers and gates as validated, immutable data
(built by :mod:`mmverify.tasks.load`)."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Mapping

from mmverify.reading import paths
from mmverify.scoring.kernels import ONE_SIDED, DirectionName
from mmverify.errors import MmverifyError

EXCLUSION_REASONS = (
    "figure_only",
    "numeric_only_without_method",
    "figure_prior_only",
    "no_numeric_estimate",
    "different_unit_of_analysis",
)
DIRECTIONAL = ONE_SIDED   # the metrics an overclaim can game (the one-sided directions)


class TaskLoadError(MmverifyError, ValueError):
    """A malformed task: names the file, the field and the problem."""

    def __init__(self, file: str, field_: str, problem: str):
        super().__init__(f"{file}: {field_}: {problem}")
        self.file = file
        self.field = field_
        self.problem = problem


@dataclass(frozen=True)
class Band:
    """A metric's closeness band: ``kind`` (abs, rel or endpoint), its exact
    ``value`` and its ``text`` as written in ``task.json``."""

    kind: str  # "abs" | "rel" | "endpoint"
    value: Fraction
    text: str


@dataclass(frozen=True)
class MetricSpec:
    """One scored metric of a task: the artifact path it reads, its unit,
    direction, weight and band, and how a list is matched."""

    id: str
    path: paths.FieldPath
    unit: str
    direction: DirectionName
    weight: Fraction
    band: Band | None
    match_by: str | None = None
    comparable: bool = True
    comparable_reason: str | None = None
    ungated_reason: str | None = None
    description: str = ""
    supported_by: tuple[str, ...] = ()
    guess_reason: str | None = None

    @property
    def is_list(self) -> bool:
        return self.path.is_list


# A panel value: Fraction (number), str (label), tuple (positional list) or a
# tuple of (key, value) pairs sorted by key (list matched by key).
PanelValue = Any


@dataclass(frozen=True)
class Paper:
    """One paper of a task's panel: title, award, whether it is the oracle, its
    values (exact) and their texts, units, exclusions with their reasons,
    context, provenance and audit."""

    paper_id: str
    title: str
    award: str
    oracle: bool
    provenance: Mapping[str, Any]
    values: Mapping[str, PanelValue]
    value_text: Mapping[str, Any]
    units: Mapping[str, str]
    excluded: Mapping[str, str]
    context: Mapping[str, Any]
    audit: Mapping[str, Any]


@dataclass(frozen=True)
class TaskSpec:
    """A task as validated, immutable data: metrics, gates, panel, artifact schema,
    and the folder it was loaded from."""

    id: str
    suite: str
    year: int
    problem: str
    problem_id: str | None
    title: str
    headline: bool
    headline_reason: str | None
    literature_split: Mapping[str, Any] | None
    provenance: Mapping[str, Any]
    metrics: tuple[MetricSpec, ...]
    gates: tuple[Mapping[str, Any], ...]
    panel: tuple[Paper, ...]
    artifact_schema: Mapping[str, Any]
    directory: str
    notes: tuple[str, ...] = field(default=())
    strict_schema: bool = False     # any schema violation makes the artifact invalid (all-or-nothing)
    replay: str | None = None       # module of mmverify.replay that recomputes claims (level C)

    def metric(self, metric_id: str) -> MetricSpec:
        for m in self.metrics:
            if m.id == metric_id:
                return m
        raise KeyError(metric_id)

    @property
    def oracle_path(self) -> str:
        return os.path.join(self.directory, "oracle.json")

    @property
    def oracle_papers(self) -> tuple[Paper, ...]:
        return tuple(p for p in self.panel if p.oracle)
