"""Panel scoring: per-paper R, O-EVAL, renormalisation, exclusions, named rules."""
from fractions import Fraction

import pytest

from hypothesis import given, settings, strategies as st

from mmverify.scoring.panel import score_panel
from mmverify.scoring.rules import band_width

from tests.helpers.memtask import metric, paper, task

dec = st.decimals(min_value=-1000, max_value=1000, places=3, allow_nan=False, allow_infinity=False)
posdec = st.decimals(min_value="0.001", max_value=1000, places=3)


def data(**values):
    return {"r": values}


@settings(max_examples=60)
@given(vals=st.lists(st.tuples(posdec, posdec, dec), min_size=1, max_size=5),
       weights=st.tuples(st.integers(1, 5), st.integers(1, 5), st.integers(1, 5)))
def test_oeval_is_mean_of_paper_R(vals, weights):
    ms = [metric("a", "higher_is_better", weights[0]), metric("b", "lower_is_better", weights[1]),
          metric("c", "target_value", weights[2], band=("abs", "5"))]
    papers = [paper(f"P{i}", {"a": str(a), "b": str(b), "c": str(c)}) for i, (a, b, c) in enumerate(vals)]
    s = score_panel(task(ms, papers), data(a=Fraction(1), b=Fraction(2), c=Fraction(0)))
    rs = [p.r for p in s.papers]
    assert s.oeval == sum(rs) / len(rs)
    assert all(0 <= r <= 1 for r in rs)


@settings(max_examples=40)
@given(a=posdec, x=posdec)
def test_paper_reporting_nothing_does_not_change_oeval(a, x):
    ms = [metric("a")]
    with_silent = task(ms, [paper("P1", {"a": str(a)}), paper("P2", {}, excluded={"a": "figure_only"})])
    without = task(ms, [paper("P1", {"a": str(a)})])
    d = data(a=Fraction(x))
    s1, s2 = score_panel(with_silent, d), score_panel(without, d)
    assert s1.oeval == s2.oeval
    assert [p.paper_id for p in s1.papers if p.r is None] == ["P2"]


@settings(max_examples=40)
@given(w_unreported=st.integers(1, 1000), a=posdec, x=posdec)
def test_renormalisation_ignores_weights_of_unreported_metrics(w_unreported, a, x):
    def mk(w):
        return task([metric("a", weight=2), metric("b", weight=w)],
                    [paper("P1", {"a": str(a)}, excluded={"b": "no_numeric_estimate"})])
    d = data(a=Fraction(x), b=Fraction(1))
    assert score_panel(mk(1), d).papers[0].r == score_panel(mk(w_unreported), d).papers[0].r


def test_per_paper_weights_renormalised_over_reported_subset():
    ms = [metric("a", weight=3), metric("b", weight=1)]
    t = task(ms, [paper("P1", {"a": "10", "b": "10"}), paper("P2", {"b": "10"}, excluded={"a": "figure_only"})])
    s = score_panel(t, data(a=Fraction(10), b=Fraction(0)))  # a perfect, b far short
    assert s.papers[0].r == Fraction(3, 4)
    assert s.papers[1].r == 0
    assert s.oeval == Fraction(3, 8)


def test_missing_and_not_a_number_score_zero_and_are_not_removed():
    ms = [metric("a"), metric("b"), metric("c")]
    t = task(ms, [paper("P1", {"a": "1", "b": "1", "c": "1"})])
    s = score_panel(t, {"r": {"a": True, "c": "1"}})
    by = {m.metric_id: m for m in s.metrics}
    assert by["a"].read_status == "not_a_number"   # a boolean is never a number
    assert by["b"].read_status == "missing"
    assert by["c"].read_status == "not_a_number"   # nor is a numeric string
    assert s.papers[0].reported == ("a", "b", "c")
    assert s.oeval == 0


def test_tennis_literature_split_gives_majority_ten_elevenths():
    ms = [metric("momentum_exists", "exact_value")]
    papers = [paper("anchor", {"momentum_exists": "no"}, oracle=True)]
    papers += [paper(f"O{i}", {"momentum_exists": "yes"}) for i in range(10)]
    t = task(ms, papers)
    assert score_panel(t, data(momentum_exists="Yes")).oeval == Fraction(10, 11)
    assert score_panel(t, data(momentum_exists="no")).oeval == Fraction(1, 11)


# ---------------------------------------------------------------- named rules

def test_degenerate_band_fires_on_narrow_band():
    m = metric("a", band=("abs", "0.01"))
    eb = band_width(m, Fraction(10), "P1")
    assert eb.rule is not None and eb.rule.rule == "degenerate_band"
    assert eb.width == Fraction(1, 2)  # 5 % of 10
    s = score_panel(task([m], [paper("P1", {"a": "10"})]), data(a=Fraction(975, 100)))
    assert s.oeval == Fraction(1, 2)
    assert [r.rule for r in s.rules] == ["degenerate_band"]


def test_degenerate_band_does_not_fire_on_ordinary_band():
    m = metric("a", band=("rel", "0.12"))
    assert band_width(m, Fraction(10), "P1").rule is None
    assert band_width(metric("b", band=("abs", "0.2")), Fraction(10), "P1").rule is None  # exactly 2 %: kept


def test_endpoint_band_scores_baseline_zero_and_anchor_one():
    m = metric("a", "target_value", band=("endpoint", "4"))
    t = task([m], [paper("P1", {"a": "10"})])
    assert score_panel(t, data(a=Fraction(4))).oeval == 0
    assert score_panel(t, data(a=Fraction(10))).oeval == 1
    assert score_panel(t, data(a=Fraction(7))).oeval == Fraction(1, 2)


def test_incomparable_units_removes_metric_for_everyone_including_oracle():
    ms = [metric("sust", "higher_is_better", unit="score"), metric("visitors", "target_value")]
    papers = [paper("oracle", {"sust": "1.007", "visitors": "100"}, oracle=True),
              paper("other", {"sust": "79.1", "visitors": "100"}, units={"sust": "score/100"})]
    s = score_panel(task(ms, papers), data(sust=Fraction(0), visitors=Fraction(100)))
    assert s.oeval == 1
    assert all(p.reported == ("visitors",) for p in s.papers)
    assert [r.rule for r in s.rules] == ["incomparable_units"]
    removed = s.metrics[0]
    assert removed.removed is not None and all(pm.status == "removed" for pm in removed.per_paper)


def test_incomparable_units_declared_false_fires_and_same_units_do_not():
    ms = [metric("sust", comparable=False), metric("x")]
    s = score_panel(task(ms, [paper("P", {"sust": "1", "x": "1"})]), data(sust=Fraction(1), x=Fraction(1)))
    assert s.metrics[0].removed is not None
    ms2 = [metric("sust"), metric("x")]
    s2 = score_panel(task(ms2, [paper("P", {"sust": "1", "x": "1"}), paper("Q", {"sust": "2", "x": "1"})]),
                     data(sust=Fraction(1), x=Fraction(1)))
    assert s2.metrics[0].removed is None and not s2.rules


def list_metric(match_by=None):
    return metric("items", "target_value", band=("abs", "1"), path="r.items[*].value", match_by=match_by)


def test_cardinality_mismatch_drops_extras_and_zeroes_shortfall():
    t = task([list_metric()], [paper("P", {"items": ["1", "2", "3"]})])
    more = score_panel(t, {"r": {"items": [{"value": 1}, {"value": 2}, {"value": 3}, {"value": 99}]}})
    assert more.oeval == 1
    assert [r.rule for r in more.rules] == ["cardinality_mismatch"]
    assert "1 item(s) beyond" in more.rules[0].detail
    fewer = score_panel(t, {"r": {"items": [{"value": 1}, {"value": 2}]}})
    assert fewer.oeval == Fraction(2, 3)
    assert "not supplied score 0" in fewer.rules[0].detail


def test_cardinality_rule_silent_when_counts_match():
    t = task([list_metric()], [paper("P", {"items": ["1", "2"]})])
    s = score_panel(t, {"r": {"items": [{"value": 1}, {"value": "2"}]}})
    assert s.oeval == Fraction(1, 2)  # the string item is not a number: scores 0, no cardinality rule
    assert not s.rules


def test_match_by_pairs_items_by_key_not_position():
    t = task([list_metric("name")], [paper("P", {"items": {"plan A": "10", "plan B": "20"}})])
    d = {"r": {"items": [{"name": "Plan B", "value": 20}, {"name": "plan a", "value": 10},
                         {"name": "plan C", "value": 5}]}}
    s = score_panel(t, d)
    assert s.oeval == 1
    assert [r.rule for r in s.rules] == ["cardinality_mismatch"]


def test_match_by_numeric_keys_pair_by_value():
    t = task([list_metric("level")], [paper("P", {"items": {"0.9": "10", "1.5": "20"}})])
    d = {"r": {"items": [{"level": Fraction(9, 10), "value": 10}, {"level": "1.50", "value": 20}]}}
    s = score_panel(t, d)
    assert s.oeval == 1 and not s.rules


def test_list_metric_reports_what_the_artifact_holds():
    from decimal import Decimal

    by_pos = score_panel(task([list_metric()], [paper("P", {"items": ["1", "2"]})]),
                         {"r": {"items": [{"value": Decimal("1.50")}, {"value": "x"}]}})
    assert by_pos.metrics[0].value == ["1.5", None]
    assert [(it.key, it.value, it.status) for it in by_pos.metrics[0].per_paper[0].items] == \
        [("0", "1.5", "scored"), ("1", None, "not_a_number")]
    by_key = score_panel(task([list_metric("name")], [paper("P", {"items": {"a": "1"}})]),
                         {"r": {"items": [{"name": "A", "value": Decimal("2")}]}})
    assert by_key.metrics[0].value == {"a": "2"}


def test_records_made_without_init_equal_their_classes():
    from dataclasses import fields

    from mmverify.scoring import panel
    from mmverify.scoring.rules import RuleApplication

    rule = RuleApplication("degenerate_band", "a", "P", "w")
    item = panel.ItemScore("0", "1.5", "2", Fraction(1, 10), Fraction(1, 2), "scored")
    cases = [
        (panel._item, panel.ItemScore, ("0", "1.5", "2", Fraction(1, 10), Fraction(1, 2), "scored")),
        (panel._paper_metric, panel.PaperMetricScore,
         ("P", "scored", ["1"], None, Fraction(1, 3), None, (item,), True, (rule,))),
        (panel._metric, panel.MetricResult,
         ("a", "r.a", "m", "target_value", Fraction(2), "abs 1", "1.5", "ok", None, None, ())),
        (panel._paper, panel.PaperResult, ("P", "O", True, ("a",), Fraction(1, 2))),
    ]
    for make, cls, values in cases:
        made, built = make(*values), cls(*values)
        assert [f.name for f in fields(cls)] == list(made.__dict__)
        assert made == built and repr(made) == repr(built)
        if cls is not panel.PaperMetricScore:   # a list anchor is unhashable
            assert hash(made) == hash(built)
    changed = panel._replaced(cases[1][0](*cases[1][2]), r=Fraction(1, 4))
    assert changed.r == Fraction(1, 4) and changed.items == (item,)

list_items = st.lists(st.fixed_dictionaries({}, optional={
    "name": st.sampled_from(["a", "B", "b ", "0.5", "#0", True]),
    "value": st.one_of(st.decimals(-20, 20, places=1), st.sampled_from(["x", None])),
    "total": st.decimals(-20, 20, places=1),
}), max_size=6)


@settings(max_examples=80)
@given(items=list_items, scalar=st.one_of(st.decimals(-20, 20, places=1), st.sampled_from(["x", True])))
def test_verdict_only_panel_equals_the_report_panel_over_shared_lists(items, scalar):
    # two metrics over one list (read once), another keyed by position, a scalar,
    # three papers (one silent on a metric): the O-EVAL without records is the
    # report's, and each metric scores as it does alone
    from mmverify.scoring.panel import panel_oeval

    ms = [metric("v", "target_value", band=("abs", "3"), path="r.items[*].value", match_by="name"),
          metric("t", "higher_is_better", band=("abs", "2"), path="r.items[*].total", match_by="name"),
          metric("p", "lower_is_better", band=("rel", "0.5"), path="r.items[*].total"),
          metric("s", "target_value", band=("abs", "4"))]
    papers = [paper("P1", {"v": {"a": "1", "b": "2", "#0": "3"}, "t": {"a": "5"}, "p": ["1", "2"], "s": "1"}),
              paper("P2", {"v": {"0.50": "-4"}, "t": {"b": "1", "a": "-3"}, "p": ["-1"], "s": "3"}),
              paper("P3", {"t": {"b": "7"}, "p": ["2", "0.5", "1"], "s": "-2"}, excluded={"v": "figure_only"})]
    d = {"r": {"items": items, "s": scalar}}
    full = score_panel(task(ms, papers), d)
    assert panel_oeval(task(ms, papers), d) == full.oeval
    for k, m in enumerate(ms):
        alone = score_panel(task([m], papers), d)
        assert alone.metrics[0] == full.metrics[k]


@given(best=st.fractions(min_value=-100, max_value=100, max_denominator=100),
       width=st.fractions(min_value=Fraction(1, 100), max_value=100, max_denominator=100),
       x=st.fractions(min_value=-500, max_value=500, max_denominator=1000), higher=st.booleans())
def test_ceiling_factor_is_one_to_one_band_then_falls_to_zero_at_two(best, width, x, higher):
    from mmverify.scoring.rules import Ceiling

    cap = Ceiling(best, width, higher)
    excess = x - best if higher else best - x
    want = Fraction(1) if excess <= width else max(Fraction(0), (2 * width - excess) / width)
    assert cap.factor(x) == want


@given(rs=st.lists(st.one_of(st.none(), st.fractions(min_value=0, max_value=1, max_denominator=50)), max_size=5))
def test_support_factor_is_the_mean_of_the_supporting_r(rs):
    from mmverify.scoring.rules import support_factor

    # each supporting metric's r for two papers; the second paper's are asked
    rows = [[Fraction(1, 3), r] for r in rs]
    got = support_factor(rows, 1)
    voting = [r for r in rs if r is not None]
    assert (Fraction(*got) if got is not None else None) == (sum(voting, Fraction(0)) / len(voting) if voting
                                                             else None)
    assert got is None or got[1] > 0


def test_plan_support_names_the_supporting_metrics_positions():
    from dataclasses import replace

    from mmverify.scoring.panel_plan import plan_of

    ms = [metric("a"), metric("b"), replace(metric("c", "exact_value"), supported_by=("b", "absent", "a", "b"))]
    plan = plan_of(task(ms, [paper("P1", {"a": "1", "b": "2", "c": "3"})]))
    assert plan.conclusions == (2,) and plan.support == ((1, 0, 1),)


def test_deferred_panel_makes_its_records_once_and_checks_its_oeval():
    """A deferred panel answers its O-EVAL at once; its records, made at the
    first read, are score_panel's, it pickles as them, and records that would
    give another O-EVAL than the one already answered are refused."""
    import pickle

    from mmverify.scoring.panel import PanelScore, deferred_panel

    ms = [metric("a"), metric("b", "lower_is_better")]
    t = task(ms, [paper("P1", {"a": "10", "b": "2"}), paper("P2", {"a": "8"})])
    d = data(a=Fraction(9), b=Fraction(3))
    full = score_panel(t, d)
    lazy = deferred_panel(t, d)
    assert lazy.oeval == full.oeval and "metrics" not in lazy.__dict__
    assert pickle.loads(pickle.dumps(lazy)) == full
    assert lazy.metrics is lazy.metrics and lazy == full

    wrong = object.__new__(PanelScore)
    wrong.__dict__.update(oeval=full.oeval + 1, ruleset="verified", _make=lambda: full)
    with pytest.raises(AssertionError, match="O-EVAL"):
        assert wrong.papers is None
