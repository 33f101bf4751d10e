"""Named rules. Every application is recorded with its name and the numbers
that made it fire, so a report can be traced back to the rule.

* ``degenerate_band``: a band narrower than 2 % of |anchor| is widened to 5 %.
* ``incomparable_units``: a metric whose panel values sit on different unit
  scales, or that is declared ``comparable: false``, is removed for everyone.
* ``cardinality_mismatch``: list items beyond the anchor's count are dropped;
  items short of it score 0.
* ``unwitnessed_claim``: a one-sided metric whose value is present while a hard
  gate reading that value cannot be checked (another of the gate's inputs is
  absent) scores 0. One-sided metrics reward overclaiming; the gate that bounds
  the claim must not be sidestepped by leaving its other inputs out.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from mmverify.numbers import fraction_text

if TYPE_CHECKING:  # pragma: no cover
    from mmverify.tasks import MetricSpec, TaskSpec

DEGENERATE_FLOOR = Fraction(2, 100)
DEGENERATE_WIDTH = Fraction(5, 100)


@dataclass(frozen=True)
class RuleApplication:
    rule: str
    metric_id: str
    paper_id: str | None
    detail: str

    def as_dict(self) -> dict:
        return {"rule": self.rule, "metric": self.metric_id, "paper": self.paper_id, "detail": self.detail}


@dataclass(frozen=True)
class EffectiveBand:
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


ONE_SIDED = ("higher_is_better", "lower_is_better")


def unwitnessed(metric: "MetricSpec", gates) -> RuleApplication | None:
    """The unwitnessed_claim rule for one scalar one-sided metric, or None."""
    if gates is None or metric.direction not in ONE_SIDED or metric.is_list:
        return None
    target = metric.path.text
    for inst in gates.instances:
        if not inst.hard or inst.verdict != "gap" or target not in inst.paths:
            continue
        if inst.values[inst.paths.index(target)] is None:
            continue  # the claim itself is absent: the metric scores 0 as missing anyway
        absent = [p for p, v in zip(inst.paths, inst.values) if v is None]
        return RuleApplication(
            "unwitnessed_claim", metric.id, None,
            f"hard gate {inst.name} reads this value but cannot be checked: "
            f"{', '.join(absent) or 'an input'} absent; the one-sided claim scores 0")
    return None
