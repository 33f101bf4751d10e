"""The plan of a task's panel: everything about a metric that does not depend
on the artifact (the anchors' texts, band widths and their degenerate_band
records, the kernel made against each anchor, the unverified-improvement
ceilings, where its values are read), and what follows from the metrics alone
(which papers vote on which metrics and their weights' sums, the conclusions,
whether any claim can be unwitnessed), worked out once per task and kept for
the tasks last used.
"""
from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import Any, Callable

from mmverify.reading.labels import normalise_label
from mmverify.reading.numbers import exact_decimal

from .kernels import DIRECTIONS, anchored, kernel_score
from .reads import LABEL, NUMBER, anchor_text, item_key, want_of
from .rules import Ceiling, RuleApplication, band_width, ceiling, incomparable


class Anchor:
    """One paper's anchor for one metric (or one item of a list anchor)."""

    __slots__ = ("paper_id", "votes", "reason", "audited", "correction", "anchor", "text", "width", "num", "rule",
                 "rules",
                 "items", "keys", "error")

    def __init__(self, paper_id: str):
        self.paper_id = paper_id
        self.votes = False
        self.reason: str | None = None
        self.audited = False
        self.correction: str | None = None     # "paper reported X; ... corrected" (an audit record's original)
        self.anchor: Any = None
        self.text: Any = None
        self.width: Fraction | None = None
        # the kernel against this anchor, on a numeric read value's (num, den)
        self.num: Callable[[int, int], Fraction] | None = None
        self.rule: RuleApplication | None = None
        self.rules: tuple[RuleApplication, ...] = ()   # (rule,) when there is one
        self.items: tuple[tuple[str, Anchor], ...] = ()
        self.keys: frozenset[str] = frozenset()
        self.error: ValueError | None = None


class MetricPlan:
    __slots__ = ("metric", "id", "band", "want", "removed", "caps", "entries", "tail",
                 "head", "list_key", "general", "full_at", "within", "quick", "quick_label", "quick_items", "fixed",
                 "corrected")

    def __init__(self, task, metric):
        self.metric, self.id = metric, metric.id
        # a scalar is read at its path; a list's items are read once per
        # artifact for every metric over the same list and match_by key (at
        # ``head``), and each item at the path after the [*] (``tail``)
        head, tail = metric.path.split() if metric.is_list else (None, metric.path)
        self.tail, self.head = tail, head
        self.list_key = (head.text, metric.match_by) if head is not None else None
        self.band = f"{metric.band.kind} {metric.band.text}" if metric.band else None
        sample = next((p.values[metric.id] for p in task.panel if metric.id in p.values), None)
        if metric.is_list and sample:
            sample = sample[0][1] if metric.match_by else sample[0]
        self.want = want_of(sample) if metric.direction == "exact_value" else NUMBER
        self.removed = incomparable(task, metric)
        self.caps = caps_of(task, metric)
        self.entries = tuple(self._entry(metric, paper) for paper in task.panel)
        self.corrected = any(e.correction for e in self.entries)
        # some voting anchor of a scalar is scored through kernel_score, not a kernel made against it
        self.general = any(e.votes and e.num is None for e in self.entries)
        # a removed metric's r is None for every paper, whatever the artifact holds
        self.fixed: tuple[None, ...] | None = (None,) * len(self.entries) if self.removed is not None else None
        # the verdict path's common case, a scalar that every voting anchor
        # scores with the kernel made against it: (the path's segments, per
        # paper that kernel or None, per paper its anchor as an exact Decimal
        # (a Fraction where it does not terminate) or None, the ceiling's
        # reach, exact the same way, or None); the value is a finite JSON
        # number, no claim is in question. A value ``x`` with ``x <full_at>
        # anchor`` scores 1 (:attr:`.kernels.Direction.full_at`); one past
        # the reach (``x > reach`` higher, ``x < reach`` lower) is left to the
        # general scoring, where the ceiling applies.
        self.full_at = DIRECTIONS[metric.direction].full_at
        # ``x <within> reach``: the value keeps full credit (:meth:`.rules.Ceiling.factor`)
        self.within = "<=" if metric.direction == "higher_is_better" else ">="
        self.quick: tuple[tuple[Any, ...], tuple[Callable[[int, int], Fraction] | None, ...],
                          tuple[Decimal | Fraction | None, ...], Decimal | Fraction | None] | None = None
        if not metric.is_list and self.removed is None and not self.general:
            self.quick = (tail.segments, tuple(e.num if e.votes else None for e in self.entries),
                          tuple(exact_decimal(e.anchor) if e.votes else None for e in self.entries),
                          self._reach(None))
        # and a label compared with label anchors (exact_value): (the path's
        # segments, per paper the anchor's normalised label or None)
        self.quick_label: tuple[tuple[Any, ...], tuple[str | None, ...]] | None = None
        if metric.direction == "exact_value" and not metric.is_list and self.removed is None and \
                self.want == LABEL and all(type(e.anchor) is str for e in self.entries if e.votes):
            self.quick_label = (tail.segments, tuple(normalise_label(e.anchor) if e.votes else None
                                                     for e in self.entries))
        # and a list whose items are numbers (``[*]``) or an item's field
        # (``[*].name``) that every voting anchor item scores with its kernel:
        # (the field or None, per paper None or its items as (key, anchor,
        # reach or None, an, ad, wd, aw)), anchor and reach exact as above,
        # then the integers a band kernel is written with
        # (:attr:`.kernels.Direction.shortfall`: the anchor an/ad, the band
        # wn/wd, aw = ad * wn; None for exact_value)
        self.quick_items: tuple[str | None, tuple[tuple[tuple[Any, ...], ...] | None, ...]] | None = None
        if metric.is_list and self.removed is None and len(tail.segments) <= 1 and \
                all(s.__class__ is str for s in tail.segments) and \
                all(a.num is not None for e in self.entries for _, a in e.items):
            def item(k: str, a: Anchor) -> tuple[Any, ...]:
                an, ad = a.anchor.numerator, a.anchor.denominator
                wn, wd = (a.width.numerator, a.width.denominator) if a.width is not None else (None, None)
                return (k, exact_decimal(a.anchor), self._reach(k), an, ad, wd, None if wn is None else ad * wn)
            self.quick_items = (tail.segments[0] if tail.segments else None,
                                tuple(tuple(item(k, a) for k, a in e.items) if e.votes else None
                                      for e in self.entries))

    def _reach(self, key: str | None) -> Decimal | Fraction | None:
        """The reach of the ceiling of a scalar (``key`` None) or a list item,
        exact as a Decimal where it terminates; None where there is none."""
        cap = self.caps.get(key)
        return None if cap is None else exact_decimal(cap.reach)

    def _entry(self, metric, paper) -> Anchor:
        e = Anchor(paper.paper_id)
        if metric.id not in paper.values:
            e.reason = paper.excluded.get(metric.id)
            return e
        e.votes, e.anchor, e.audited = True, paper.values[metric.id], metric.id in paper.audit
        e.correction = correction_text(paper.audit.get(metric.id), paper.value_text.get(metric.id))
        if self.removed is not None:
            e.text = anchor_text_any(e.anchor)
        elif metric.is_list:
            pairs = (tuple((item_key(k), a) for k, a in e.anchor) if metric.match_by
                     else tuple((str(i), a) for i, a in enumerate(e.anchor)))
            e.text = ({k: anchor_text(a) for k, a in e.anchor} if metric.match_by
                      else [anchor_text(a) for a in e.anchor])
            items = []
            for key, a in pairs:
                item = self._banded(metric, a, paper.paper_id)
                if item.rule is not None:
                    item.rule = RuleApplication(item.rule.rule, metric.id, paper.paper_id,
                                                f"item {key}: {item.rule.detail}")
                items.append((key, item))
            e.items = tuple(items)
            e.keys = frozenset(k for k, _ in pairs)
        else:
            banded = self._banded(metric, e.anchor, paper.paper_id)
            e.text, e.width, e.num, e.rule, e.error = banded.text, banded.width, banded.num, banded.rule, \
                banded.error
            e.rules = (e.rule,) if e.rule else ()
        return e

    def _banded(self, metric, a: Any, paper_id: str) -> Anchor:
        item = Anchor(paper_id)
        item.anchor, item.text = a, anchor_text(a)
        if not DIRECTIONS[metric.direction].needs_band:
            item.num = anchored(metric.direction, a, None)
            return item
        try:
            eb = band_width(metric, a, paper_id)
        except ValueError as exc:   # raised when the anchor is scored, as the kernel would
            item.error = exc
            return item
        item.width, item.rule = eb.width, eb.rule
        item.num = anchored(metric.direction, a, eb.width)
        return item

    def score(self, x: Any, a: Anchor) -> Fraction:
        """The direction's kernel on one read value and one (planned) anchor."""
        if a.error is not None:
            raise a.error
        if a.num is not None and type(x) is Fraction:
            return a.num(x.numerator, x.denominator)
        return kernel_score(self.metric.direction, x, a.anchor, a.width)


def caps_of(task, metric) -> dict[str | None, Ceiling | None]:
    """The unverified-improvement ceilings of one metric: one for a scalar
    (key None), one per item key of a list; empty when the metric is not one-sided."""
    caps: dict[str | None, Ceiling | None] = {}
    voting = [p.values[metric.id] for p in task.panel if metric.id in p.values]
    if metric.direction not in ("higher_is_better", "lower_is_better") or not voting:
        return caps
    if not metric.is_list:
        caps[None] = ceiling(metric, list(voting))
        return caps
    by_key: dict[str, list[Fraction]] = {}
    for anchor in voting:
        pairs = ([(item_key(k), a) for k, a in anchor] if metric.match_by
                 else [(str(i), a) for i, a in enumerate(anchor)])
        for k, a in pairs:
            by_key.setdefault(k, []).append(a)
    for k, anchors in by_key.items():
        caps[k] = ceiling(metric, anchors)
    return caps


class PanelPlan(tuple):
    """The :class:`MetricPlan` of every metric of a task, in task order, and what
    follows from them alone:

    * ``conclusions``: the positions of the metrics the unsupported_conclusion
      rule scales (declared ``supported_by``, not removed);
    * ``support``: per conclusion, the positions of the metrics it names in
      ``supported_by`` (a name that is no metric of the task left out);
    * ``claimable``: whether any metric can meet the unwitnessed_claim rule
      (any not removed: a list item too);
    * ``judged``: whether a claim gate can refute or decide a metric (the
      task declares claim gates);
    * ``votes``: per paper, the metrics it votes on (anchored, not removed:
      whatever the artifact holds, these and only these have an r) as
      (position, weight numerator, weight denominator), their ids and the sum
      of their weights as numerator and denominator.
    """

    conclusions: tuple[int, ...]
    support: tuple[tuple[int, ...], ...]
    claimable: bool
    judged: bool
    votes: tuple[tuple[tuple[tuple[int, int, int], ...], tuple[str, ...], int, int], ...]

    def __new__(cls, task, metrics):
        plan = super().__new__(cls, metrics)
        plan.conclusions = tuple(k for k, mp in enumerate(plan) if mp.metric.supported_by and mp.removed is None)
        at = {mp.id: k for k, mp in enumerate(plan)}
        plan.support = tuple(tuple(at[s] for s in plan[k].metric.supported_by if s in at) for k in plan.conclusions)
        plan.claimable = any(mp.removed is None for mp in plan)
        # a claim gate can refute a claim (r = 0) or decide it (r = 1) whatever the ruleset
        plan.judged = plan.claimable and any(g.get("severity") == "claim" for g in task.gates)
        votes = []
        for i in range(len(task.panel)):
            at = tuple(k for k, mp in enumerate(plan) if mp.entries[i].votes and mp.removed is None)
            total = sum((plan[k].metric.weight for k in at), Fraction(0))
            weighted = tuple((k, plan[k].metric.weight.numerator, plan[k].metric.weight.denominator) for k in at)
            votes.append((weighted, tuple(plan[k].id for k in at), total.numerator, total.denominator))
        plan.votes = tuple(votes)
        return plan


_PLANS: dict[int, tuple[Any, PanelPlan]] = {}
PLANS_KEPT = 256


def plan_of(task) -> PanelPlan:
    # a pure function of the (immutable) task: made once per task object
    hit = _PLANS.get(id(task))
    if hit is not None and hit[0] is task:
        return hit[1]
    plan = PanelPlan(task, [MetricPlan(task, m) for m in task.metrics])
    if len(_PLANS) >= PLANS_KEPT:
        _PLANS.clear()
    _PLANS[id(task)] = (task, plan)
    return plan


def correction_text(record: Any, anchor_text: Any) -> str | None:
    """How an anchor was corrected, for a report: ``paper reported 464.0; replay
    412.4738; corrected`` (an audit record with ``corrected_by: replay``), or
    ``paper reported 1.406276; corrected to 1.246266 (SOURCE)``; None without
    an ``original``."""
    if not isinstance(record, dict) or "original" not in record:
        return None
    original = record["original"]
    if record.get("corrected_by") == "replay":
        return f"paper reported {original}; replay {anchor_text}; corrected"
    source = f" ({record['source']})" if record.get("source") else ""
    return f"paper reported {original}; corrected to {anchor_text}{source}"


def copy_text(text: Any) -> Any:
    """A report's own copy of a planned anchor text (lists and dicts are mutable)."""
    return list(text) if type(text) is list else dict(text) if type(text) is dict else text


def anchor_text_any(anchor: Any) -> Any:
    if isinstance(anchor, tuple):
        if anchor and isinstance(anchor[0], tuple):
            return {k: anchor_text(v) for k, v in anchor}
        return [anchor_text(v) for v in anchor]
    return anchor_text(anchor)


