"""Named rules. Every application is recorded with its name and the numbers
that made it fire, so a report can be traced back to the rule.

Design notes: docs/architecture.md, `scoring/rules.py`.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import TYPE_CHECKING, Literal, Mapping, NamedTuple, Sequence

from mmverify.reading.numbers import fraction_text

from .kernels import ONE, ONE_SIDED, ZERO

if TYPE_CHECKING:  # pragma: no cover
    from mmverify.tasks import MetricSpec, TaskSpec

DEGENERATE_FLOOR = Fraction(2, 100)
DEGENERATE_WIDTH = Fraction(5, 100)


@dataclass(frozen=True)
class RuleApplication:
    """One named rule applied to one metric (and paper): the record a report lists."""

    rule: str
    metric_id: str
    paper_id: str | None
    detail: str

    def as_dict(self) -> dict:
        return {"rule": self.rule, "metric": self.metric_id, "paper": self.paper_id, "detail": self.detail}


@dataclass(frozen=True)
class EffectiveBand:
    """The band width used for one anchor, the declared one, and the rule that
    changed it (degenerate_band), if any."""

    width: Fraction
    declared: Fraction
    rule: RuleApplication | None


def band_width(metric: "MetricSpec", anchor: Fraction, paper_id: str | None) -> EffectiveBand:
    """The band width w for one anchor, with the degenerate_band rule applied."""
    band = metric.band
    if band is None:
        raise ValueError(f"metric {metric.id} has no band")
    if band.kind == "abs":
        declared = band.value
    elif band.kind == "rel":
        declared = band.value * abs(anchor)
    else:  # endpoint
        declared = abs(anchor - band.value)
    if anchor != 0 and declared < DEGENERATE_FLOOR * abs(anchor):
        width = DEGENERATE_WIDTH * abs(anchor)
        return EffectiveBand(width, declared, RuleApplication(
            "degenerate_band", metric.id, paper_id,
            f"declared {band.kind} band gives w = {fraction_text(declared)} < 2% of |anchor| "
            f"{fraction_text(abs(anchor))}; using w = 5% of |anchor| = {fraction_text(width)}"))
    if declared <= 0:
        # only reachable with a zero anchor and a non-abs band, which loading rejects
        raise ValueError(f"metric {metric.id}: zero band for anchor 0 (declare an abs band)")
    return EffectiveBand(declared, declared, None)


def incomparable(task: "TaskSpec", metric: "MetricSpec") -> RuleApplication | None:
    """The incomparable_units rule for one metric, or None when it does not fire."""
    if not metric.comparable:
        return RuleApplication("incomparable_units", metric.id, None,
                               f"declared not comparable: {metric.comparable_reason}")
    scales = {}
    for paper in task.panel:
        if metric.id in paper.values:
            scales.setdefault(paper.units.get(metric.id, metric.unit), []).append(paper.paper_id)
    if len(scales) > 1:
        listing = "; ".join(f"{unit!r}: {', '.join(ids)}" for unit, ids in sorted(scales.items()))
        return RuleApplication("incomparable_units", metric.id, None,
                               f"panel values on different unit scales ({listing}); removed for everyone")
    return None


# the named rulesets (``--ruleset``); a test keeps the alias equal to the table
Ruleset = Literal["verified", "paper"]
RULESETS: dict[Ruleset, str] = {
    "verified": "one-sided credit beyond the panel's best plus the band only for verified claims "
                "(unverified_improvement on)",
    "paper": "the TB-MathModel paper's pure one-sided semantics (unverified_improvement off)",
}
DEFAULT_RULESET: Ruleset = "verified"


@dataclass(frozen=True)
class Ceiling:
    """Where unverified one-sided credit ends: the panel's best value for a
    metric (or a list item) in its good direction, and the band width there."""

    best: Fraction
    width: Fraction
    higher: bool

    def excess(self, x: Fraction) -> Fraction:
        """How far ``x`` lies beyond the best value, in the good direction."""
        return x - self.best if self.higher else self.best - x

    @cached_property
    def reach(self) -> Fraction:
        """The last value that keeps full credit: one band past the best."""
        return self.best + self.width if self.higher else self.best - self.width

    @cached_property
    def _reach_pair(self) -> tuple[int, int]:
        return self.reach.numerator, self.reach.denominator

    def factor(self, x: Fraction) -> Fraction:
        """1 up to one band past the best, then linearly down to 0 at two bands."""
        rn, rd = self._reach_pair
        # x <= reach (higher) or x >= reach (lower), on integers: excess(x) <= width
        if (x.numerator * rd <= rn * x.denominator) if self.higher else (x.numerator * rd >= rn * x.denominator):
            return ONE
        e = self.excess(x)
        return max(ZERO, (2 * self.width - e) / self.width)


def ceiling(metric: "MetricSpec", anchors: list[Fraction]) -> Ceiling | None:
    """The unverified-credit ceiling of a one-sided metric over its panel anchors."""
    if metric.direction not in ONE_SIDED or not anchors:
        return None
    higher = metric.direction == "higher_is_better"
    best = max(anchors) if higher else min(anchors)
    return Ceiling(best, band_width(metric, best, None).width, higher)


def support_factor(rows: Sequence[Sequence[Fraction | None]], paper_index: int) -> tuple[int, int] | None:
    """Mean r of a metric's supporting metrics for one paper, as a numerator
    and a positive denominator not reduced (None: no supporting metric scored
    by that paper). ``rows`` holds each supporting metric's r for each paper,
    in panel order (a metric named twice in ``supported_by`` counts twice)."""
    n, d, count = 0, 1, 0
    for row in rows:
        r = row[paper_index]
        if r is ONE:        # (the kernels' 1)
            n, count = n + d, count + 1
        elif r is not None:
            rn, rd = r.as_integer_ratio()
            n, d, count = n * rd + rn * d, d * rd, count + 1
    return (n, d * count) if count else None


def unverified_improvement(metric_id: str, item: str | None, x: Fraction, cap: Ceiling) -> RuleApplication:
    """The record of one unverified improvement (``factor(x) < 1``)."""
    where = f"item {item}: " if item is not None else ""
    return RuleApplication(
        "unverified_improvement", metric_id, None,
        f"{where}{fraction_text(x)} is {fraction_text(cap.excess(x))} beyond the panel's best "
        f"{fraction_text(cap.best)} (band {fraction_text(cap.width)}) and no passing replay gate verifies it; "
        f"credit x {fraction_text(cap.factor(x))} (0 at two bands)")


def unwitnessed(metric: "MetricSpec", gates) -> RuleApplication | None:
    """The unwitnessed_claim rule for one scalar metric, or None,
    leaving out gates whose only absent inputs are replayed values (what the
    self-check, which runs no replay, can tell)."""
    return unwitnessed_among(metric, gates.hard_gaps()) if gates is not None else None


def unwitnessed_among(metric: "MetricSpec", gaps: Sequence, replayed: bool = False) -> RuleApplication | None:
    """:func:`unwitnessed` over the hard gaps of a gate report (``hard_gaps()``:
    the hard instances that could not be checked, the only ones it looks at).
    ``replayed``: see :func:`unchecked_values`."""
    if not gaps or metric.is_list:
        return None
    why = unchecked_values(gaps, replayed).why(metric.path.text, metric.direction)
    return RuleApplication("unwitnessed_claim", metric.id, None, why) if why is not None else None


class Unchecked(NamedTuple):
    """What the gates say of an artifact's claims beyond pass and fail of the
    task, by concrete path, each with why (the first gate that says it):
    ``witness`` the values hard gaps read that a replay could not check (the
    witness did not determine a replayed input), ``every`` the values every
    hard gap reads; ``refuted`` the claims a failing claim gate refutes
    (``refuted_claim``), ``decided`` those a passing deciding claim gate
    decides (``replay_decided``)."""

    witness: dict[str, str]
    every: dict[str, str]
    refuted: Mapping[str, str] = {}
    decided: frozenset[str] = frozenset()

    def why(self, path: str, direction: str) -> str | None:
        """Why a metric's value at ``path`` is unwitnessed (scores 0), or None:
        a one-sided claim by any hard gap, any other one by a witness gap only."""
        return (self.every if direction in ONE_SIDED else self.witness).get(path)

    def judged(self, path: str, direction: str) -> tuple[str, str] | None:
        """(rule, why) when the value at ``path`` scores 0: refuted by a claim
        gate, or unwitnessed; else None."""
        why = self.refuted.get(path)
        if why is not None:
            return "refuted_claim", why
        why = self.why(path, direction)
        return ("unwitnessed_claim", why) if why is not None else None


def unchecked_values(gaps: Sequence, replayed: bool = False) -> Unchecked:
    """:class:`Unchecked` of hard gaps. ``replayed``: the replay ran on this
    artifact and the ``verified`` ruleset applies, so a gate whose only absent
    inputs are replayed values counts (the witness did not determine them)."""
    witness: dict[str, str] = {}
    every: dict[str, str] = {}
    for inst in gaps:
        absent = [p for p, v in zip(inst.paths, inst.values) if v is None]
        replay_only = bool(absent) and all(p.startswith("$replay.") for p in absent)
        if replay_only:
            if not replayed:
                continue  # no replay here (or the paper's rules): nothing tells the witness absent
            why = (f"hard gate {inst.name} reads this value but cannot be checked: the witness does not "
                   f"determine {', '.join(absent)}; a claim the replay cannot check scores 0")
        else:
            why = (f"hard gate {inst.name} reads this value but cannot be checked: "
                   f"{', '.join(absent) or 'an input'} absent; the one-sided claim scores 0")
        for p, v in zip(inst.paths, inst.values):
            if v is not None:
                every.setdefault(p, why)
                if replay_only:
                    witness.setdefault(p, why)
    return Unchecked(witness, every)
