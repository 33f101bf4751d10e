"""Panel scoring: per metric, per paper, per item; R(m, S_p); O-EVAL.

``score_panel`` is a pure function of a task and parsed artifact data. It never
raises on artifact content: an absent value is ``missing``, a value of the wrong
type is ``not_a_number`` (or ``not_a_label``), and both score 0. A metric removed
by ``incomparable_units`` is kept apart from a zero: it is ``removed`` and takes
no part in any paper's R.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from mmverify import paths
from mmverify.numbers import decimal_text, fraction_text, to_fraction

from mmverify.labels import normalise_label

from .kernels import DIRECTIONS, ONE, ZERO, kernel_score
from .rules import (DEFAULT_RULESET, RULESETS, Ceiling, RuleApplication, band_width, ceiling, incomparable,
                    support_factor, unverified_improvement, unwitnessed)


@dataclass(frozen=True)
class ItemScore:
    key: str            # position ("0", "1", ...) or match_by key
    value: str | None   # the artifact's value as text, None when absent
    anchor: str
    band_width: Fraction | None
    r: Fraction
    status: str         # scored | missing | not_a_number | not_a_label | short


@dataclass(frozen=True)
class PaperMetricScore:
    paper_id: str
    status: str                 # scored | missing | not_a_number | not_a_label | unwitnessed | excluded | removed
    anchor: Any                 # decimal/label text, list or mapping of texts (None when excluded)
    band_width: Fraction | None
    r: Fraction | None          # None when the paper does not vote on the metric
    reason: str | None = None   # exclusion reason, or what was missing
    items: tuple[ItemScore, ...] = ()
    audited: bool = False
    rules: tuple[RuleApplication, ...] = ()


@dataclass(frozen=True)
class MetricResult:
    metric_id: str
    path: str
    unit: str
    direction: str
    weight: Fraction
    band: str | None
    value: Any                  # what the artifact holds, as text (list/mapping for list metrics)
    read_status: str            # ok | missing | not_a_number | not_a_label
    read_detail: str | None
    removed: RuleApplication | None
    per_paper: tuple[PaperMetricScore, ...]


@dataclass(frozen=True)
class PaperResult:
    paper_id: str
    award: str
    oracle: bool
    reported: tuple[str, ...]       # S_p after removals
    r: Fraction | None              # R(m, S_p); None when S_p is empty (does not vote)


@dataclass(frozen=True)
class PanelScore:
    metrics: tuple[MetricResult, ...]
    papers: tuple[PaperResult, ...]
    oeval: Fraction | None          # None when no paper votes
    rules: tuple[RuleApplication, ...]
    ruleset: str = DEFAULT_RULESET

    @property
    def voting(self) -> tuple[PaperResult, ...]:
        return tuple(p for p in self.papers if p.r is not None)


# ---------------------------------------------------------------- reading values

_LABEL = "label"
_NUMBER = "number"


def _read_scalar(raw: Any, want: str) -> tuple[Any, str, str | None]:
    """(value, status, text) for one artifact value; value is Fraction or str."""
    if isinstance(raw, paths.Missing):
        return None, "missing", None
    if want == _LABEL and isinstance(raw, str):
        return raw, "ok", raw
    num = to_fraction(raw) if not isinstance(raw, str) else None
    if num is not None:
        return num, "ok", decimal_text(raw)
    if want == _LABEL:
        return None, "not_a_label", _type_text(raw)
    return None, "not_a_number", _type_text(raw)


def _type_text(raw: Any) -> str:
    from mmverify.artifact import json_type

    if isinstance(raw, str):
        return f"string of {len(raw)} characters"
    return json_type(raw)


def _want(anchor_sample: Any) -> str:
    return _LABEL if isinstance(anchor_sample, str) else _NUMBER


def _anchor_text(value: Any) -> Any:
    return fraction_text(value) if isinstance(value, Fraction) else value


def _item_key(raw: Any) -> str | None:
    """Canonical match_by key: numbers (or decimal text) by exact value, so that
    ``0.90``, ``0.9`` and ``"0.9"`` pair; other text trimmed and case-folded.

    A string is read as a number only within the parser's number caps
    (:func:`mmverify.artifact.bounded_decimal`): an artifact key such as
    ``"1e999999999"`` or 200,000 digits is a label, not a giant integer."""
    if isinstance(raw, bool) or raw is None:
        return None
    if isinstance(raw, str):
        from mmverify.artifact import bounded_decimal

        dec = bounded_decimal(raw)
        return fraction_text(Fraction(dec)) if dec is not None else normalise_label(raw)
    num = to_fraction(raw)
    return fraction_text(num) if num is not None else None


# ---------------------------------------------------------------- scoring

def score_panel(task, data: Any, gates=None, ruleset: str = DEFAULT_RULESET) -> PanelScore:
    """Score artifact data against every paper of ``task``'s panel.

    ``gates`` (a :class:`mmverify.gates.GateReport` of the same artifact) lets the
    ``unwitnessed_claim`` rule see hard gates that could not be checked, and the
    ``unverified_improvement`` rule see which claims a passing replay gate
    verifies. ``ruleset`` is ``verified`` (default) or ``paper``.
    """
    if ruleset not in RULESETS:
        raise ValueError(f"unknown ruleset {ruleset!r}; one of {sorted(RULESETS)}")
    verified = gates.verified() if gates is not None and ruleset == "verified" else frozenset()
    results: list[MetricResult] = []
    rules: list[RuleApplication] = []
    for metric in task.metrics:
        removed = incomparable(task, metric)
        if removed is not None:
            rules.append(removed)
        claim = unwitnessed(metric, gates) if removed is None else None
        if claim is not None:
            rules.append(claim)
        guard = _Guard(task, metric, verified) if ruleset == "verified" else None
        result = _score_metric(task, metric, data, removed, claim, guard)
        if guard is not None and guard.applied:
            result = _with_rules(result, tuple(guard.applied.values()))
        results.append(result)
        for pm in result.per_paper:
            rules.extend(pm.rules)
    if ruleset == "verified":
        results = _supported(task, results, rules)
    papers = []
    for i, paper in enumerate(task.panel):
        num = den = ZERO
        reported = []
        for metric, res in zip(task.metrics, results):
            pm = res.per_paper[i]
            if pm.r is None:
                continue
            reported.append(metric.id)
            num += metric.weight * pm.r
            den += metric.weight
        papers.append(PaperResult(paper.paper_id, paper.award, paper.oracle, tuple(reported),
                                  num / den if den > 0 else None))
    voting = [p.r for p in papers if p.r is not None]
    oeval = sum(voting, ZERO) / len(voting) if voting else None
    return PanelScore(tuple(results), tuple(papers), oeval, tuple(rules), ruleset)


def _with_rules(result: MetricResult, applied: tuple[RuleApplication, ...]) -> MetricResult:
    """Each voting paper's entry names the rules that scaled its r (traceability)."""
    from dataclasses import replace

    return replace(result, per_paper=tuple(
        replace(pm, rules=pm.rules + tuple(replace(a, paper_id=pm.paper_id) for a in applied))
        if pm.status == "scored" else pm for pm in result.per_paper))


def _supported(task, results: list[MetricResult], rules: list[RuleApplication]) -> list[MetricResult]:
    """The unsupported_conclusion rule: a conclusion's r times its support's mean r."""
    from dataclasses import replace

    by_id = {m.metric_id: m for m in results}
    out = []
    for metric, res in zip(task.metrics, results):
        if not metric.supported_by or res.removed is not None:
            out.append(res)
            continue
        per_paper = []
        for i, pm in enumerate(res.per_paper):
            f = support_factor(metric, by_id, i)
            if pm.r is None or f is None or f == 1 or pm.r == 0:
                per_paper.append(pm)
                continue
            rule = RuleApplication("unsupported_conclusion", metric.id, pm.paper_id,
                                   f"r {fraction_text(pm.r)} x mean r {fraction_text(f)} of its support "
                                   f"({', '.join(metric.supported_by)})")
            rules.append(rule)
            per_paper.append(replace(pm, r=pm.r * f, rules=pm.rules + (rule,)))
        out.append(replace(res, per_paper=tuple(per_paper)))
    return out


class _Guard:
    """The unverified_improvement rule for one metric of one artifact: the
    credit factor of each read value (1 unless the value is an unverified
    improvement), recording each application once."""

    def __init__(self, task, metric, verified: frozenset[str]):
        self.metric, self.verified = metric, verified
        self.applied: dict[str | None, RuleApplication] = {}
        self.caps: dict[str | None, Ceiling | None] = {}
        voting = [p.values[metric.id] for p in task.panel if metric.id in p.values]
        if metric.direction not in ("higher_is_better", "lower_is_better") or not voting:
            return
        if not metric.is_list:
            self.caps[None] = ceiling(metric, list(voting))
            return
        by_key: dict[str, list[Fraction]] = {}
        for anchor in voting:
            pairs = ([(_item_key(k), a) for k, a in anchor] if metric.match_by
                     else [(str(i), a) for i, a in enumerate(anchor)])
            for k, a in pairs:
                by_key.setdefault(k, []).append(a)
        for k, anchors in by_key.items():
            self.caps[k] = ceiling(metric, anchors)

    def factor(self, key: str | None, x: Any, concrete: str) -> Fraction:
        cap = self.caps.get(key)
        if cap is None or not isinstance(x, Fraction) or concrete in self.verified:
            return ONE
        f = cap.factor(x)
        if f < 1 and key not in self.applied:
            self.applied[key] = unverified_improvement(self.metric.id, key, x, cap)
        return f


def _score_metric(task, metric, data: Any, removed: RuleApplication | None,
                  claim: RuleApplication | None = None, guard: _Guard | None = None) -> MetricResult:
    band = f"{metric.band.kind} {metric.band.text}" if metric.band else None
    sample = next((p.values[metric.id] for p in task.panel if metric.id in p.values), None)
    if metric.is_list and sample:
        sample = sample[0][1] if metric.match_by else sample[0]
    want = _want(sample) if metric.direction == "exact_value" else _NUMBER

    factor = ONE
    if metric.is_list:
        read = _read_list(metric, data, want)
        value, read_status, detail = read.text, read.status, read.detail
    else:
        x, read_status, value = _read_scalar(paths.get(data, metric.path), want)
        detail = None
        if read_status == "missing":
            detail = paths.get(data, metric.path).reason
        elif guard is not None and removed is None and claim is None:
            factor = guard.factor(None, x, metric.path.text)
    per_paper = []
    for paper in task.panel:
        if metric.id not in paper.values:
            per_paper.append(PaperMetricScore(paper.paper_id, "excluded", None, None, None,
                                              reason=paper.excluded.get(metric.id)))
            continue
        anchor = paper.values[metric.id]
        audited = metric.id in paper.audit
        if removed is not None:
            per_paper.append(PaperMetricScore(paper.paper_id, "removed", _once(_anchor_text_any, anchor), None,
                                              None, reason="incomparable_units", audited=audited))
            continue
        if claim is not None:
            per_paper.append(PaperMetricScore(paper.paper_id, "unwitnessed", _once(_anchor_text_any, anchor), None,
                                              ZERO, reason=claim.detail, audited=audited))
        elif metric.is_list:
            per_paper.append(_score_list(metric, paper.paper_id, anchor, read, audited, guard))
        elif read_status != "ok":
            per_paper.append(PaperMetricScore(paper.paper_id, read_status, _once(_anchor_text, anchor), None, ZERO,
                                              reason=detail, audited=audited))
        else:
            w, rule = _width(metric, anchor, paper.paper_id)
            r = kernel_score(metric.direction, x, anchor, w) * factor
            per_paper.append(PaperMetricScore(paper.paper_id, "scored", _once(_anchor_text, anchor), w, r,
                                              audited=audited, rules=(rule,) if rule else ()))
    return MetricResult(metric.id, metric.path.text, metric.unit, metric.direction, metric.weight, band,
                        value, read_status, detail, removed, tuple(per_paper))


_WIDTHS: dict[tuple[int, int, str], tuple[Any, Any, tuple[Fraction | None, RuleApplication | None]]] = {}


def _width(metric, anchor: Any, paper_id: str) -> tuple[Fraction | None, RuleApplication | None]:
    # a pure function of the task's own (immutable) metric and anchor objects:
    # computed once per process, not once per artifact
    key = (id(metric), id(anchor), paper_id)
    hit = _WIDTHS.get(key)
    if hit is not None and hit[0] is metric and hit[1] is anchor:
        return hit[2]
    if not DIRECTIONS[metric.direction].needs_band:
        out: tuple[Fraction | None, RuleApplication | None] = (None, None)
    else:
        eb = band_width(metric, anchor, paper_id)
        out = (eb.width, eb.rule)
    _WIDTHS[key] = (metric, anchor, out)
    return out


_STATIC: dict[tuple[Any, int], tuple[Any, Any]] = {}


def _once(fn, anchor: Any) -> Any:
    """``fn(anchor)`` for one of the task's own (immutable) anchor objects,
    computed once per process rather than once per artifact. Lists and dicts
    are handed out as copies, so a report never shares a mutable value."""
    key = (fn, id(anchor))
    hit = _STATIC.get(key)
    if hit is None or hit[0] is not anchor:
        hit = (anchor, fn(anchor))
        _STATIC[key] = hit
    out = hit[1]
    return list(out) if type(out) is list else dict(out) if type(out) is dict else out


def _pairs_by_key(anchor: tuple) -> tuple:
    return tuple((_item_key(k), a) for k, a in anchor), {k: _anchor_text(a) for k, a in anchor}


def _pairs_by_position(anchor: tuple) -> tuple:
    return tuple((str(i), a) for i, a in enumerate(anchor)), [_anchor_text(a) for a in anchor]


def _anchor_text_any(anchor: Any) -> Any:
    if isinstance(anchor, tuple):
        if anchor and isinstance(anchor[0], tuple):
            return {k: _anchor_text(v) for k, v in anchor}
        return [_anchor_text(v) for v in anchor]
    return _anchor_text(anchor)


@dataclass(frozen=True)
class _ListRead:
    status: str                      # ok | missing
    detail: str | None
    text: Any                        # list of texts, or mapping key -> text
    values: tuple[tuple[str, Any, str], ...]   # (key, value or None, status)
    index: dict[str, int] = field(default_factory=dict)   # key -> position in the artifact's list


def _read_list(metric, data: Any, want: str) -> _ListRead:
    raw_items = paths.list_items(data, metric.path)
    if isinstance(raw_items, paths.Missing):
        return _ListRead("missing", raw_items.reason, None, ())
    _, inner = metric.path.split()
    out: list[tuple[str, Any, str]] = []
    seen: set[str] = set()
    index: dict[str, int] = {}
    dupes = 0
    for i, item in enumerate(raw_items):
        raw = paths.get(item, inner) if inner.segments else item
        value, status, _ = _read_scalar(raw, want)
        if metric.match_by:
            key = _item_key(item.get(metric.match_by)) if isinstance(item, dict) else None
            if key is None:
                out.append((f"#{i}", value, "no_key"))
                continue
            if key in seen:
                dupes += 1
                continue
            seen.add(key)
        else:
            key = str(i)
        out.append((key, value, status))
        index[key] = i
    detail = f"{dupes} item(s) with a repeated {metric.match_by!r} ignored" if dupes else None
    if metric.match_by:
        text = {k: _anchor_text(v) if v is not None else None for k, v, s in out if s != "no_key"}
    else:
        text = [_anchor_text(v) if v is not None else None for _, v, _ in out]
    return _ListRead("ok", detail, text, tuple(out), index)


def _score_list(metric, paper_id: str, anchor: tuple, read: _ListRead, audited: bool,
                guard: _Guard | None = None) -> PaperMetricScore:
    pairs, anchor_text = _once(_pairs_by_key if metric.match_by else _pairs_by_position, anchor)
    anchor_text = type(anchor_text)(anchor_text)   # this report's own copy
    if read.status != "ok":
        return PaperMetricScore(paper_id, read.status, anchor_text, None, ZERO, reason=read.detail,
                                audited=audited)
    got = {k: (v, s) for k, v, s in read.values if s != "no_key"}
    items = []
    rules = []
    for key, a in pairs:
        w, rule = _width(metric, a, paper_id)
        if rule:
            rules.append(RuleApplication(rule.rule, metric.id, paper_id, f"item {key}: {rule.detail}"))
        if key not in got:
            items.append(ItemScore(key, None, _once(_anchor_text, a), w, ZERO, "short"))
            continue
        v, status = got[key]
        if status != "ok":
            items.append(ItemScore(key, None, _once(_anchor_text, a), w, ZERO, status))
            continue
        r = kernel_score(metric.direction, v, a, w)
        if guard is not None:
            r *= guard.factor(key, v, paths.concrete(metric.path, read.index[key]))
        items.append(ItemScore(key, _anchor_text(v), _once(_anchor_text, a), w, r, "scored"))
    anchor_keys = {k for k, _ in pairs}
    extra = [k for k, _, s in read.values if k not in anchor_keys]
    short = [it.key for it in items if it.status == "short"]
    if extra or short:
        parts = []
        if extra:
            parts.append(f"{len(extra)} item(s) beyond the anchor's {len(pairs)} dropped")
        if short:
            parts.append(f"{len(short)} anchor item(s) not supplied score 0")
        rules.append(RuleApplication("cardinality_mismatch", metric.id, paper_id, "; ".join(parts)))
    r = sum((it.r for it in items), ZERO) / len(items) if items else ZERO
    return PaperMetricScore(paper_id, "scored", anchor_text, None, r, items=tuple(items), audited=audited,
                            rules=tuple(rules))
