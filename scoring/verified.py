"""Which part of a score a replay decided.

Design notes: docs/architecture.md, `scoring/verified.py`.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Mapping

from mmverify.reading import paths

VERIFIED, REFUTED, CLOSENESS = "verified", "refuted", "closeness only"
JUDGEMENTS = (VERIFIED, REFUTED, CLOSENESS)


@dataclass(frozen=True)
class VerifiedShare:
    """The judgement of every metric (by id) and what follows for the score."""

    judgements: Mapping[str, str]
    verified_weight: Fraction
    total_weight: Fraction
    verified_credit: Fraction | None      # None when no paper votes

    @property
    def share(self) -> Fraction:
        return self.verified_weight / self.total_weight if self.total_weight else Fraction(0)

    def as_dict(self) -> dict[str, Any]:
        from mmverify.reading.numbers import fraction_text, report_float

        return {"share": report_float(self.share), "share_exact": fraction_text(self.share),
                "verified_weight": fraction_text(self.verified_weight),
                "total_weight": fraction_text(self.total_weight),
                "verified_credit": report_float(self.verified_credit),
                "judgements": dict(self.judgements)}


def judgement(metric, verified: frozenset[str], refuted: Mapping[str, str]) -> str:
    """How the value of one metric (a :class:`~mmverify.scoring.panel.MetricResult`) was judged."""
    pattern = paths.parse_path(metric.path)
    if not pattern.is_list:
        if metric.path in refuted:
            return REFUTED
        return VERIFIED if metric.path in verified and metric.read_status == "ok" else CLOSENESS
    if any(paths.matches(pattern, p) for p in refuted):
        return REFUTED
    items = len(metric.value) if isinstance(metric.value, (list, dict)) else 0
    checked = sum(1 for p in verified if paths.matches(pattern, p))
    return VERIFIED if items and checked >= items else CLOSENESS


def verified_share(panel, gates) -> VerifiedShare:
    """The :class:`VerifiedShare` of a panel score (with its records) and its gate report."""
    verified = gates.verified() if gates is not None else frozenset()
    refuted = gates.refuted() if gates is not None else {}
    judged: dict[str, str] = {}
    vw = tw = Fraction(0)
    for m in panel.metrics:
        if m.removed is not None:
            continue
        j = judged[m.metric_id] = judgement(m, verified, refuted)
        tw += m.weight
        if j == VERIFIED:
            vw += m.weight
    return VerifiedShare(judged, vw, tw, verified_credit(panel, judged))


def verified_credit(panel, judged: Mapping[str, str]) -> Fraction | None:
    """O-EVAL counting only verified metrics' credit (the others at r = 0),
    from the panel's per-paper records (the same r, weights and votes)."""
    rs: list[Fraction] = []
    for paper in panel.papers:
        if paper.r is None:
            continue
        num = den = Fraction(0)
        for m in panel.metrics:
            if m.metric_id not in paper.reported:
                continue
            pm = next(x for x in m.per_paper if x.paper_id == paper.paper_id)
            den += m.weight
            if judged.get(m.metric_id) == VERIFIED and pm.r is not None:
                num += m.weight * pm.r
        rs.append(num / den if den else Fraction(0))
    return sum(rs, Fraction(0)) / len(rs) if rs else None
