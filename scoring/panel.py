"""Panel scoring: per metric, per paper, per item; R(m, S_p); O-EVAL.

Reading values is :mod:`.reads`; what a task's anchors fix once is the plan
of :mod:`.panel_plan`; the verdict path's reads and kernels, generated from
the plan once per task, are :mod:`.panelcode`.

``score_panel`` is a pure function of a task and parsed artifact data. It never
raises on artifact content: an absent value is ``missing``, a value of the wrong
type is ``not_a_number`` (or ``not_a_label``), and both score 0. A metric removed
by ``incomparable_units`` is kept apart from a zero: it is ``removed`` and takes
no part in any paper's R.

Not split (about 600 lines): the records and the scoring of one panel are one
walk over the plan; the plan, the reads and the generated code are split off.
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any, Sequence

from mmverify.reading import paths
from mmverify.reading.numbers import decimal_fraction, decimal_text, fraction_text, pair_fraction

from .kernels import ONE, ZERO
from .panel_plan import Anchor, MetricPlan, PanelPlan, copy_text, plan_of
from .reads import ListKeys, ListRead, list_keys, read_list, read_scalar
from .rules import (DEFAULT_RULESET, RULESETS, RuleApplication, Unchecked, support_factor, unchecked_values,
                    unverified_improvement)


@dataclass(frozen=True)
class ItemScore:
    """One item of a list metric, scored against one paper's anchor item."""

    key: str            # position ("0", "1", ...) or match_by key
    value: str | None   # the artifact's value as text, None when absent
    anchor: str
    band_width: Fraction | None
    r: Fraction
    status: str         # scored | missing | not_a_number | not_a_label | short


@dataclass(frozen=True)
class PaperMetricScore:
    """One metric against one paper: its status, the anchor, r and the rules applied."""

    paper_id: str
    status: str                 # scored | missing | not_a_number | not_a_label | unwitnessed | refuted | excluded | removed
    anchor: Any                 # decimal/label text, list or mapping of texts (None when excluded)
    band_width: Fraction | None
    r: Fraction | None          # None when the paper does not vote on the metric
    reason: str | None = None   # exclusion reason, or what was missing
    items: tuple[ItemScore, ...] = ()
    audited: bool = False
    rules: tuple[RuleApplication, ...] = ()
    correction: str | None = None   # how an audit record corrected the anchor (paper reported X; ...)


@dataclass(frozen=True)
class MetricResult:
    """One metric of the task: what the artifact holds and its score per paper."""

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
    """One paper of the panel: R over the metrics it reports (None: it does not vote)."""

    paper_id: str
    award: str
    oracle: bool
    reported: tuple[str, ...]       # S_p after removals
    r: Fraction | None              # R(m, S_p); None when S_p is empty (does not vote)


_RECORDS = ("metrics", "papers", "rules")


@dataclass(frozen=True)
class PanelScore:
    """The panel's score of one artifact. One made by :func:`deferred_panel`
    holds its O-EVAL and makes its records (metrics, papers, rules) when one
    is first read, by the same code, checking that they give the same O-EVAL."""

    metrics: tuple[MetricResult, ...]
    papers: tuple[PaperResult, ...]
    oeval: Fraction | None          # None when no paper votes
    rules: tuple[RuleApplication, ...]
    ruleset: str = DEFAULT_RULESET

    @property
    def voting(self) -> tuple[PaperResult, ...]:
        return tuple(p for p in self.papers if p.r is not None)

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        make = d.get("_make") if name in _RECORDS else None
        if make is not None:
            full = make()
            if full.oeval != d["oeval"]:
                raise AssertionError(f"panel records give O-EVAL {full.oeval}, the score {d['oeval']}")
            for k in _RECORDS:              # (two threads may both make them: equal)
                d.setdefault(k, full.__dict__[k])
            d.pop("_make", None)            # the artifact's data is let go
        if name in _RECORDS and name in d:
            return d[name]
        raise AttributeError(name)

    def __getstate__(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in (*_RECORDS, "oeval", "ruleset")}


# ---------------------------------------------------------------- records

# The records below are made for every metric, paper and list item of every
# artifact: each maker returns ``cls(*fields)``, the same object, built without
# the frozen ``__init__`` (which sets one field at a time through
# ``object.__setattr__``). A test keeps each maker equal to its class.

_new = object.__new__


def _item(key: str, value: str | None, anchor: Any, band_width: Fraction | None, r: Fraction,
          status: str) -> ItemScore:
    obj = _new(ItemScore)
    d = obj.__dict__
    d["key"], d["value"], d["anchor"], d["band_width"], d["r"], d["status"] = key, value, anchor, band_width, r, status
    return obj


def _paper_metric(paper_id: str, status: str, anchor: Any, band_width: Fraction | None, r: Fraction | None,
                  reason: str | None, items: tuple[ItemScore, ...], audited: bool,
                  rules: tuple[RuleApplication, ...]) -> PaperMetricScore:
    obj = _new(PaperMetricScore)
    d = obj.__dict__
    d["paper_id"], d["status"], d["anchor"], d["band_width"], d["r"] = paper_id, status, anchor, band_width, r
    d["reason"], d["items"], d["audited"], d["rules"] = reason, items, audited, rules
    d["correction"] = None
    return obj


def _metric(metric_id: str, path: str, unit: str, direction: str, weight: Fraction, band: str | None, value: Any,
            read_status: str, read_detail: str | None, removed: RuleApplication | None,
            per_paper: tuple[PaperMetricScore, ...]) -> MetricResult:
    obj = _new(MetricResult)
    d = obj.__dict__
    d["metric_id"], d["path"], d["unit"], d["direction"], d["weight"], d["band"] = \
        metric_id, path, unit, direction, weight, band
    d["value"], d["read_status"], d["read_detail"], d["removed"], d["per_paper"] = \
        value, read_status, read_detail, removed, per_paper
    return obj


def _paper(paper_id: str, award: str, oracle: bool, reported: tuple[str, ...], r: Fraction | None) -> PaperResult:
    obj = _new(PaperResult)
    d = obj.__dict__
    d["paper_id"], d["award"], d["oracle"], d["reported"], d["r"] = paper_id, award, oracle, reported, r
    return obj


def _replaced(obj: Any, **changes: Any) -> Any:
    """``dataclasses.replace(obj, **changes)`` for a record made by a maker above."""
    new = _new(type(obj))
    new.__dict__.update(obj.__dict__, **changes)
    return new


# ---------------------------------------------------------------- scoring

def score_panel(task, data: Any, gates=None, ruleset: str = DEFAULT_RULESET) -> PanelScore:
    """Score artifact data against every paper of ``task``'s panel.

    ``gates`` (a :class:`mmverify.gates.GateReport` of the same artifact) lets the
    ``unwitnessed_claim`` rule see hard gates that could not be checked, and the
    ``unverified_improvement`` rule see which claims a passing replay gate
    verifies. ``ruleset`` is ``verified`` (default) or ``paper``.
    """
    plan, guarded, claims = _begin(task, gates, ruleset)
    verified = _Verified(gates) if guarded else None
    lists: dict[tuple[str, str | None], ListKeys] = {}    # each list read once per artifact
    table: list[Sequence[Fraction | None]] = []     # per metric: r per paper
    results: list[MetricResult] = []
    rules: list[RuleApplication] = []
    for mp in plan:
        claim = _claim(mp, claims)
        rs, result = _score_metric(mp, data, claim, verified, True, lists, claims)
        assert result is not None
        table.append(rs)
        if mp.removed is not None:
            rules.append(mp.removed)
        if claim is not None:
            rules.append(claim)
        results.append(result)
        for pm in result.per_paper:
            rules.extend(pm.rules)
    if guarded and plan.conclusions:
        _supported(plan, table, results, rules)
    rs = _paper_rs(plan, table)
    papers = tuple(_paper(paper.paper_id, paper.award, paper.oracle, reported, r)
                   for paper, (_, reported, _, _), r in zip(task.panel, plan.votes, rs))
    return PanelScore(tuple(results), papers, _oeval(rs), tuple(rules), ruleset)


def panel_oeval(task, data: Any, gates=None, ruleset: str = DEFAULT_RULESET) -> Fraction | None:
    """``score_panel(task, data, gates, ruleset).oeval`` without the per-metric,
    per-paper and per-item records (and their texts): the verdict-only path of
    the reward. A scalar read as a finite JSON number, a label, and a list of
    numbers, are scored straight from the plan's kernels, in code generated
    once per task (:mod:`.panelcode`); any other metric, and every metric of
    an artifact where a claim may be unwitnessed, by the same code as the
    report's, records left out."""
    plan, guarded, claims = _begin(task, gates, ruleset)
    verified = _Verified(gates) if guarded else None
    lists: dict[tuple[str, str | None], ListKeys] = {}
    code = _table_code(plan) if claims is None else None
    if code is not None:
        table = code(data, guarded, verified, lists)
    else:       # a claim may be unwitnessed (or the task's table could not be compiled)
        table = [_score_metric(mp, data, _claim(mp, claims), verified, False, lists, claims)[0] for mp in plan]
    if guarded and plan.conclusions:
        _supported(plan, table, None, [])
    return _oeval(_paper_rs(plan, table))


def deferred_panel(task, data: Any, gates=None, ruleset: str = DEFAULT_RULESET) -> PanelScore:
    """``score_panel(task, data, gates, ruleset)`` with its O-EVAL worked out now
    (:func:`panel_oeval`) and its records when first read: a score that is
    never rendered never makes them. ``data`` is read again then, so it must
    not be changed in between (the parser's documents are not)."""
    report = object.__new__(PanelScore)
    report.__dict__.update(oeval=panel_oeval(task, data, gates, ruleset), ruleset=ruleset,
                           _make=lambda: score_panel(task, data, gates, ruleset))
    return report


class _Verified:
    """The concrete paths a passing hard gate verifies (``gates.verified()``),
    worked out at the first question: most artifacts never ask one."""

    __slots__ = ("gates", "paths")

    def __init__(self, gates):
        self.gates, self.paths = gates, None

    def __contains__(self, path: str) -> bool:
        if self.paths is None:
            self.paths = self.gates.verified() if self.gates is not None else frozenset()
        return path in self.paths


_ASKED = object()


def _table_code(plan: PanelPlan):
    """The plan's generated table (:mod:`.panelcode`), compiled at the task's
    second verdict in this process (a command scoring one file does not pay
    its compile, about half a millisecond); None before, and when it could not
    be compiled."""
    code = plan.__dict__.get("table_code")
    if code is None:
        plan.table_code = _ASKED
        return None
    if code is _ASKED:
        from .panelcode import compile_table

        # (False: it could not be compiled)
        code = plan.table_code = compile_table(plan, _general) or False
    return code or None


def _claim(mp: MetricPlan, claims: Unchecked | None) -> RuleApplication | None:
    """The refuted_claim or unwitnessed_claim rule on a scalar metric, given
    what the gates say of the claims (:func:`.rules.unchecked_values`,
    :meth:`.rules.Unchecked.judged`); list items are looked up one by one."""
    if claims is None or mp.removed is not None or mp.list_key is not None:
        return None
    hit = claims.judged(mp.metric.path.text, mp.metric.direction)
    return RuleApplication(hit[0], mp.id, None, hit[1]) if hit is not None else None


def _decided(mp: MetricPlan, claims: Unchecked | None) -> RuleApplication | None:
    """The replay_decided rule on a scalar metric (a passing deciding claim gate), or None."""
    if claims is None or not claims.decided or mp.removed is not None or mp.list_key is not None:
        return None
    if mp.metric.path.text not in claims.decided:
        return None
    return RuleApplication("replay_decided", mp.id, None,
                           "a passing claim gate confirms the value against the replay of what the statement "
                           "determines: r = 1 for every paper")


def _general(mp: MetricPlan, data: Any, verified: _Verified | None,
             lists: dict[tuple[str, str | None], ListKeys]) -> list[Fraction | None]:
    """One metric's r per paper by the general scoring, no claim unwitnessed, no records."""
    return _score_metric(mp, data, None, verified, False, lists)[0]


def _list_keys(mp: MetricPlan, data: Any, lists: dict[tuple[str, str | None], ListKeys]) -> ListKeys:
    """The keys of a list metric's list, read once per artifact."""
    keys = lists.get(mp.list_key)
    if keys is None:
        keys = lists[mp.list_key] = list_keys(data, mp.metric.path, mp.metric.match_by, mp.head)
    return keys


def _begin(task, gates, ruleset: str) -> tuple[PanelPlan, bool, Unchecked | None]:
    """The task's plan, whether the ``verified`` ruleset's rules apply, and the
    values the artifact's hard gaps read (:func:`.rules.unchecked_values`;
    None where there is no gap): under ``verified``, with the replay run, also
    those whose witness is absent."""
    if ruleset not in RULESETS:
        raise ValueError(f"unknown ruleset {ruleset!r}; one of {sorted(RULESETS)}")
    plan = plan_of(task)
    guarded = ruleset == "verified"
    gaps = gates.hard_gaps() if gates is not None and plan.claimable else ()
    claims = unchecked_values(gaps, guarded and gates.replay is not None) if gaps else None
    if plan.judged and gates is not None:
        refuted, decided = gates.refuted(), gates.decided()
        if refuted or decided:
            claims = (claims or Unchecked({}, {}))._replace(refuted=refuted, decided=decided)
    return plan, guarded, claims


def _paper_rs(plan: PanelPlan, table: list[Sequence[Fraction | None]]) -> list[Fraction | None]:
    """R(m, S_p) per paper: sum(weight * r) / sum(weight) over the metrics the
    paper votes on (the weights' sum is the plan's), summed on integers and
    reduced once; None for a paper that votes on none."""
    out: list[Fraction | None] = []
    for i, (at, _, den_n, den_d) in enumerate(plan.votes):
        if den_n <= 0:
            out.append(None)
            continue
        num_n, num_d = 0, 1
        for k, wn, wd in at:
            r = table[k][i]
            if r is ONE:
                num_n, num_d = num_n * wd + wn * num_d, num_d * wd
            elif r is not ZERO:
                rn, rd = r.as_integer_ratio()
                if rn:
                    td = wd * rd
                    num_n, num_d = num_n * td + wn * rn * num_d, num_d * td
        out.append(pair_fraction(num_n * den_d, num_d * den_n))
    return out


def _oeval(paper_rs: list[Fraction | None]) -> Fraction | None:
    """O-EVAL: the mean R over the papers that vote (None when none does)."""
    voting = [r for r in paper_rs if r is not None]
    if len(voting) <= 1:
        return voting[0] if voting else None
    n, d = 0, 1
    for r in voting:
        rn, rd = r.as_integer_ratio()
        n, d = n * rd + rn * d, d * rd
    return pair_fraction(n, d * len(voting))


def _supported(plan: PanelPlan, table: list[Sequence[Fraction | None]],
               results: list[MetricResult] | None, rules: list[RuleApplication]) -> None:
    """The unsupported_conclusion rule: a conclusion's r times its support's mean
    r (from the r before this rule), in place; records only when ``results``."""
    before = tuple(table)       # a changed row is replaced by a copy, never changed in place
    for k, support in zip(plan.conclusions, plan.support):
        mp = plan[k]
        rows = [before[s] for s in support]
        rs = per_paper = None     # copies, made at the first change
        for i, r in enumerate(table[k]):
            if r is None or (r is not ONE and r == 0):
                continue
            mean = support_factor(rows, i)
            if mean is None or mean[0] == mean[1]:      # no support, or a mean of 1
                continue
            f = pair_fraction(*mean)
            if rs is None:
                rs = list(table[k])
            rs[i] = f if r is ONE else r * f
            if results is not None:
                if per_paper is None:
                    per_paper = list(results[k].per_paper)
                pm = per_paper[i]
                rule = RuleApplication("unsupported_conclusion", mp.id, pm.paper_id,
                                       f"r {fraction_text(r)} x mean r {fraction_text(f)} of its support "
                                       f"({', '.join(mp.metric.supported_by)})")
                rules.append(rule)
                per_paper[i] = _replaced(pm, r=rs[i], rules=pm.rules + (rule,))
        if rs is not None:
            table[k] = rs
        if results is not None and per_paper is not None:
            results[k] = _replaced(results[k], per_paper=tuple(per_paper))


# ------------------------------------------------------- one metric

class _Credit:
    """The unverified_improvement rule on one metric of one artifact: the credit
    factor of a read value, and (with records on) each application, once per key."""

    __slots__ = ("mp", "verified", "applied")

    def __init__(self, mp: MetricPlan, verified: _Verified, detail: bool):
        self.mp, self.verified = mp, verified
        self.applied: dict[str | None, RuleApplication] | None = {} if detail else None

    def factor(self, key: str | None, x: Any, where: str | tuple[Any, int]) -> Fraction:
        """``where`` is the value's concrete path, or (``[*]`` path, index) for a list item."""
        cap = self.mp.caps.get(key)
        if cap is None or type(x) is not Fraction:
            return ONE
        f = cap.factor(x)
        if f == 1 or (where if isinstance(where, str) else paths.concrete(*where)) in self.verified:
            return ONE
        if self.applied is not None and key not in self.applied:
            self.applied[key] = unverified_improvement(self.mp.id, key, x, cap)
        return f


def _score_metric(mp: MetricPlan, data: Any, claim: RuleApplication | None, verified: _Verified | None,
                  detail: bool, lists: dict[tuple[str, str | None], ListKeys],
                  claims: Unchecked | None = None) -> tuple[list[Fraction | None], MetricResult | None]:
    """r per paper for one metric (None where the paper does not vote), and with
    ``detail`` its :class:`MetricResult`. ``lists`` holds the lists this artifact
    has had read so far, by :attr:`MetricPlan.list_key`; ``claims`` the values
    hard gaps read (a list item among them scores 0, as ``claim`` does a scalar)."""
    metric, removed = mp.metric, mp.removed
    decided = _decided(mp, claims) if claim is None else None
    # no ceiling, no unverified_improvement: the factor is 1 throughout
    credit = _Credit(mp, verified, detail) if verified is not None and mp.caps else None
    factor = ONE
    read: ListRead | None = None
    x = value = reason = None
    if mp.list_key is not None:
        read = read_list(metric, data, mp.want, detail, _list_keys(mp, data, lists), mp.tail)
        value, status, reason = read.text, read.status, read.detail
    else:
        raw = paths.get(data, mp.tail)
        if type(raw) is Decimal and raw.is_finite():     # the common case: a JSON number
            status, value = "ok", decimal_text(raw) if detail else None
            ratio = raw.as_integer_ratio()      # x exactly, in lowest terms: what the kernels read
            x = decimal_fraction(raw) if credit is not None or mp.general else None
        else:
            x, status, value = read_scalar(raw, mp.want, detail)
            ratio = (x.numerator, x.denominator) if type(x) is Fraction else None
            if status == "missing":
                reason = raw.reason
        if status == "ok" and credit is not None and removed is None and claim is None:
            factor = credit.factor(None, x, metric.path.text)
    rs: list[Fraction | None] = []
    per_paper: list[PaperMetricScore] = []
    for e in mp.entries:
        if not e.votes:
            rs.append(None)
            if detail:
                per_paper.append(_paper_metric(e.paper_id, "excluded", None, None, None, e.reason, (), False, ()))
            continue
        if removed is not None:
            rs.append(None)
            if detail:
                per_paper.append(_paper_metric(e.paper_id, "removed", copy_text(e.text), None, None,
                                               "incomparable_units", (), e.audited, ()))
            continue
        if claim is not None:
            rs.append(ZERO)
            if detail:
                per_paper.append(_paper_metric(e.paper_id, "refuted" if claim.rule == "refuted_claim" else
                                               "unwitnessed", copy_text(e.text), None, ZERO, claim.detail, (),
                                               e.audited, ()))
        elif decided is not None and status == "ok":
            rs.append(ONE)
            if detail:
                per_paper.append(_paper_metric(e.paper_id, "scored", e.text, e.width, ONE, None, (), e.audited,
                                               e.rules + (decided,)))
        elif read is not None:
            r, pm = _score_list(mp, e, read, credit, detail, claims)
            rs.append(r)
            if pm is not None:
                per_paper.append(pm)
        elif status != "ok":
            rs.append(ZERO)
            if detail:
                per_paper.append(_paper_metric(e.paper_id, status, e.text, None, ZERO, reason, (), e.audited, ()))
        else:
            num = e.num
            r = num(*ratio) if num is not None and ratio is not None else mp.score(x, e)
            if factor is not ONE:
                r = r * factor
            rs.append(r)
            if detail:
                per_paper.append(_paper_metric(e.paper_id, "scored", e.text, e.width, r, None, (), e.audited,
                                               e.rules))
    if not detail:
        return rs, None
    if mp.corrected:
        per_paper = [_replaced(pm, correction=e.correction) if e.correction and pm.status == "scored" else pm
                     for pm, e in zip(per_paper, mp.entries)]
    if credit is not None and credit.applied:
        per_paper = _with_rules(per_paper, tuple(credit.applied.values()))
    return rs, _metric(metric.id, metric.path.text, metric.unit, metric.direction, metric.weight, mp.band,
                       value, status, reason, removed, tuple(per_paper))


def _with_rules(per_paper: list[PaperMetricScore], applied: tuple[RuleApplication, ...]) -> list[PaperMetricScore]:
    """Each voting paper's entry names the rules that scaled its r (traceability)."""
    from dataclasses import replace

    return [_replaced(pm, rules=pm.rules + tuple(replace(a, paper_id=pm.paper_id) for a in applied))
            if pm.status == "scored" else pm for pm in per_paper]


def _score_list(mp: MetricPlan, e: Anchor, read: ListRead, credit: _Credit | None,
                detail: bool, claims: Unchecked | None = None) -> tuple[Fraction, PaperMetricScore | None]:
    """The mean r over one paper's anchor items, and with ``detail`` its record;
    an item a hard gap reads (``claims``) scores 0 (unwitnessed_claim)."""
    metric, paper_id = mp.metric, e.paper_id
    if read.status != "ok":
        return ZERO, (_paper_metric(paper_id, read.status, copy_text(e.text), None, ZERO, read.detail, (),
                                    e.audited, ()) if detail else None)
    items: list[ItemScore] = []
    rules = []
    short = 0
    ok, texts = read.ok, read.texts
    # the mean, summed on integers and reduced once
    sum_n, sum_d = 0, 1
    for key, a in e.items:
        if detail and a.rule is not None:
            rules.append(a.rule)
        v = ok.get(key)
        if v is None:
            if a.error is not None:
                raise a.error
            status = read.bad.get(key)
            if status is None:
                short += 1
            if detail:
                items.append(_item(key, None, a.text, a.width, ZERO, "short" if status is None else status))
            continue
        num = a.num
        if type(v) is Decimal:      # a JSON number: scored on its exact ratio
            if num is not None:
                r = num(*v.as_integer_ratio())
                if credit is not None:
                    v = decimal_fraction(v)
            else:
                v = decimal_fraction(v)
                r = mp.score(v, a)
        else:
            r = num(v.numerator, v.denominator) if num is not None and type(v) is Fraction else mp.score(v, a)
        if credit is not None:
            f = credit.factor(key, v, (metric.path, read.index[key]))
            if f is not ONE:
                r = r * f
        if claims is not None:
            where = paths.concrete(metric.path, read.index[key])
            hit = claims.judged(where, metric.direction)
            if hit is not None:
                if detail:
                    rules.append(RuleApplication(hit[0], metric.id, paper_id, f"item {key}: {hit[1]}"))
                    items.append(_item(key, texts[key], a.text, a.width, ZERO,
                                       "refuted" if hit[0] == "refuted_claim" else "unwitnessed"))
                continue
            if where in claims.decided:
                r = ONE
        if r is ONE:        # the kernels' 1 and 0 are these two objects
            sum_n += sum_d
        elif r is not ZERO:
            rd = r.denominator
            sum_n, sum_d = sum_n * rd + r.numerator * sum_d, sum_d * rd
        if detail:
            items.append(_item(key, texts[key], a.text, a.width, r, "scored"))
    mean = pair_fraction(sum_n, sum_d * len(e.items)) if e.items else ZERO
    if not detail:
        return mean, None
    extra = [k for k in read.order if k not in e.keys]
    if extra or short:
        parts = []
        if extra:
            parts.append(f"{len(extra)} item(s) beyond the anchor's {len(e.items)} dropped")
        if short:
            parts.append(f"{short} anchor item(s) not supplied score 0")
        rules.append(RuleApplication("cardinality_mismatch", metric.id, paper_id, "; ".join(parts)))
    return mean, _paper_metric(paper_id, "scored", copy_text(e.text), None, mean, None, tuple(items), e.audited,
                               tuple(rules))
