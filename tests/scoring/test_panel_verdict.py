"""The panel's verdict path (``panel_oeval``: a scalar or a list of finite
JSON numbers scored straight from the plan's kernels, anything else by the
general metric scoring) against the report's O-EVAL (``score_panel``), on
the bundled oracles with their scored values perturbed and on in-memory
panels of several papers, under both rulesets and with gate reports that
verify, or do not verify, the values scored."""
from __future__ import annotations

import ast
import copy
from dataclasses import replace
from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mmverify.gates import evaluate_gates
from mmverify.gates.quick import HardGatesPassed
from mmverify.reading.paths import WILDCARD, concrete
from mmverify.scoring.panel import panel_oeval, score_panel
from mmverify.scoring import panel, panelcode
from mmverify.scoring.panel_plan import plan_of
from mmverify.tasks import load_all
from tests.helpers.hostile import oracle_data
from tests.helpers.hostile.strategies import fuzz_settings
from tests.helpers.memtask import metric, paper, task

TASKS = load_all()
ORACLES = {t.id: oracle_data(t.directory) for t in TASKS}
RULESETS = ("verified", "paper")

SCALES = ["0", "-1", "2", "10", "0.5", "1e-6", "1e6", "1.0000001", "0.9999999", "1e100", "1e-100", "3", "1.5"]
# what may stand where a number was: other numbers, and what is no number
ODD_VALUES = [None, True, False, "", "12", "1e400", "NaN", "x", Decimal("1e400"), Decimal("-1e-400"),
              Decimal("NaN"), Decimal("Infinity"), Decimal("-0"), Decimal(0), 7, [], {}, [Decimal(1)]]


def _walk(data: Any, segments: tuple) -> Any:
    for seg in segments:
        if isinstance(seg, str) and isinstance(data, dict) and seg in data:
            data = data[seg]
        elif isinstance(seg, int) and isinstance(data, list) and 0 <= seg < len(data):
            data = data[seg]
        else:
            return None
    return data


def _new_number(draw, old: Any) -> Any:
    if isinstance(old, Decimal) and old.is_finite() and draw(st.booleans()):
        return old * Decimal(draw(st.sampled_from(SCALES)))
    if isinstance(old, str) and draw(st.booleans()):     # a label: the same one written otherwise, or another
        return draw(st.sampled_from([old.upper(), f"  {old}\t", old + "x", old[:-1], " ".join(old)]))
    return draw(st.one_of(st.sampled_from(ODD_VALUES), st.decimals(-10**6, 10**6, places=4)))


def _perturb_scalar(draw, data: Any, segments: tuple) -> None:
    parent = _walk(data, segments[:-1])
    key = segments[-1]
    if isinstance(parent, dict):
        op = draw(st.sampled_from(["value", "value", "delete", "parent"]))
        if op == "delete":
            parent.pop(key, None)
        elif op == "parent" and len(segments) > 1:     # the walk breaks one step early
            grand = _walk(data, segments[:-2])
            if isinstance(grand, dict):
                grand[segments[-2]] = draw(st.sampled_from([None, "x", [parent], Decimal(1)]))
        else:
            parent[key] = _new_number(draw, parent.get(key))
    elif isinstance(parent, list) and isinstance(key, int) and key < len(parent):
        parent[key] = _new_number(draw, parent[key])


def _perturb_list(draw, data: Any, m) -> None:
    segments = m.path.segments
    i = segments.index(WILDCARD)
    head, tail = segments[:i], segments[i + 1:]
    items = _walk(data, head)
    if not isinstance(items, list):
        return
    op = draw(st.sampled_from(["value", "value", "value", "drop", "duplicate", "reorder", "key", "item", "empty",
                               "not_a_list"]))
    if op == "empty":
        items.clear()
    elif op == "not_a_list":
        parent = _walk(data, head[:-1])
        if isinstance(parent, dict) and head:
            parent[head[-1]] = draw(st.sampled_from([None, {}, "x", Decimal(3)]))
    elif not items:
        return
    elif op == "drop":
        del items[draw(st.integers(0, len(items) - 1))]
    elif op == "duplicate":
        k = draw(st.integers(0, len(items) - 1))
        items.insert(draw(st.integers(0, len(items))), copy.deepcopy(items[k]))
    elif op == "reorder":
        items[:] = draw(st.permutations(items))
    elif op == "item":
        items[draw(st.integers(0, len(items) - 1))] = draw(st.sampled_from([None, "x", Decimal(2), [], {}]))
    elif op == "key" and m.match_by:
        item = items[draw(st.integers(0, len(items) - 1))]
        if isinstance(item, dict):
            old = item.get(m.match_by)
            item[m.match_by] = draw(st.sampled_from(
                [None, True, "", " " + str(old).upper() + " ", Decimal(1), "1.0", "#0", str(old) + "x"]))
    else:
        k = draw(st.integers(0, len(items) - 1))
        if not tail:
            items[k] = _new_number(draw, items[k])
        elif isinstance(items[k], (dict, list)):
            _perturb_scalar(draw, items[k], tail)


def _scored_paths(task_spec, data: Any) -> list[str]:
    """The concrete paths of every value the panel scores (what a replay gate may verify)."""
    out = []
    for m in task_spec.metrics:
        if not m.is_list:
            out.append(m.path.text)
            continue
        items = _walk(data, m.path.segments[:m.path.segments.index(WILDCARD)])
        out.extend(concrete(m.path, i) for i in range(len(items) if isinstance(items, list) else 0))
    return out


@st.composite
def perturbed_oracles(draw, t):
    """(task, data, verified paths): the oracle of ``t`` with some scored values changed."""
    data = copy.deepcopy(ORACLES[t.id])
    for _ in range(draw(st.integers(1, 6))):
        m = draw(st.sampled_from(t.metrics))
        if m.is_list:
            _perturb_list(draw, data, m)
        else:
            _perturb_scalar(draw, data, m.path.segments)
    scored = _scored_paths(t, data)
    verified = draw(st.sampled_from([frozenset(), frozenset(scored), frozenset(draw(st.sets(
        st.sampled_from(scored))) if scored else ())]))
    return t, data, verified


def _same(t, data, gates) -> None:
    for ruleset in RULESETS:
        want = score_panel(t, data, gates, ruleset).oeval
        got = panel_oeval(t, data, gates, ruleset)
        assert got == want and type(got) is type(want), (t.id, ruleset)


@pytest.mark.parametrize("t", TASKS, ids=lambda t: t.id)
@given(data=st.data())
@fuzz_settings(15)
def test_verdict_path_equals_the_report_on_perturbed_oracles(t, data):
    t, doc, verified = data.draw(perturbed_oracles(t))
    # no gate report; all hard gates passing with these paths verified; the
    # gates' own report on this data, without a replay (a replayed value is absent)
    for gates in (None, HardGatesPassed(t.id, verified), evaluate_gates(t, doc, None)):
        _same(t, doc, gates)


def test_every_oracle_scores_its_values_on_the_verdict_path():
    # the bundled oracles hold finite numbers where their scalar and list
    # metrics read them: each such metric is planned for the verdict path
    quick = sum(mp.quick is not None or mp.quick_items is not None for t in TASKS for mp in plan_of(t))
    assert quick >= sum(len(t.metrics) for t in TASKS) * 3 // 4
    for t in TASKS:
        _same(t, ORACLES[t.id], None)
        _same(t, ORACLES[t.id], HardGatesPassed(t.id, frozenset()))


# ---------------------------------------------------------------- several papers

values = st.one_of(st.decimals(-30, 30, places=2), st.sampled_from([None, "x", True, Decimal("1e400")]))


@settings(max_examples=120, deadline=None)
@given(a=values, b=values, c=values, items=st.lists(st.one_of(st.decimals(-30, 30, places=1), st.none()),
                                                    max_size=5),
       verified=st.sets(st.sampled_from(["r.a", "r.b", "r.c", "r.l[0]", "r.l[1]", "r.l[2]"])))
def test_verdict_path_equals_the_report_over_several_papers(a, b, c, items, verified):
    # one-sided scalars with ceilings (one paper silent on one), a target, a
    # numeric exact conclusion supported by two of them, a positional list
    # with ceilings per item, and a metric removed for incomparable units
    ms = [metric("a", "higher_is_better", 2, band=("abs", "3")), metric("b", "lower_is_better", band=("rel", "0.2")),
          metric("c", "target_value", band=("abs", "5")),
          replace(metric("d", "exact_value", path="r.a"), supported_by=("a", "c", "nothing")),
          metric("l", "higher_is_better", 3, band=("abs", "2"), path="r.l[*]"),
          metric("u", "target_value", band=("abs", "1"), path="r.c")]
    papers = [paper("P1", {"a": "10", "b": "4", "c": "0", "d": "10", "l": ["1", "5", "-2"], "u": "1"}),
              paper("P2", {"a": "7.5", "c": "-3", "d": "7.5", "l": ["3"], "u": "2"},
                    excluded={"b": "figure_only"}, units={"u": "percent"}),
              paper("P3", {"a": "12", "b": "1.5", "c": "8", "d": "12", "l": []})]
    t = task(ms, papers)
    assert plan_of(t)[5].removed is not None
    d = {"r": {"a": a, "b": b, "c": c, "l": items}}
    for gates in (None, HardGatesPassed("mem", frozenset(verified))):
        _same(t, d, gates)


def test_edges_of_the_ceiling_and_of_the_reads():
    # the ceiling of "a" is the best anchor 12 plus one band 3: at 15 full
    # credit without a replay, past it the credit falls (the general scoring),
    # unless a passing gate verifies the value
    ms = [metric("a", "higher_is_better", band=("abs", "3"))]
    t = task(ms, [paper("P1", {"a": "10"}), paper("P2", {"a": "12"})])
    vouched = HardGatesPassed("mem", frozenset({"r.a"}))
    for x, want in [("15", 1), ("15.0", 1), ("16.5", Fraction(1, 2)), ("18", 0), ("9.7", Fraction(9, 10))]:
        d = {"r": {"a": Decimal(x)}}
        assert panel_oeval(t, d) == score_panel(t, d).oeval
        assert score_panel(t, d).papers[0].r == want
        assert panel_oeval(t, d, vouched) == score_panel(t, d, vouched).oeval
        assert panel_oeval(t, d, ruleset="paper") == score_panel(t, d, ruleset="paper").oeval
        if Decimal(x) > 12:
            assert panel_oeval(t, d, vouched) == panel_oeval(t, d, ruleset="paper") == 1
    # a path through a list index, a dict standing for a number, a bool, a missing step
    ms = [metric("v", "target_value", band=("abs", "2"), path="r.rows[1].v")]
    t = task(ms, [paper("P1", {"v": "1"})])
    for rows in ([{"v": Decimal("2")}, {"v": Decimal("2")}], [{"v": Decimal(2)}], [{}, {"v": {"x": 1}}],
                 [{}, {"v": True}], "rows", [{}, []]):
        d = {"r": {"rows": rows}}
        assert panel_oeval(t, d) == score_panel(t, d).oeval
    assert panel_oeval(t, {"r": {"rows": [{}, {"v": Decimal(2)}]}}) == Fraction(1, 2)


def test_values_at_and_about_their_anchors():
    # the verdict path scores a value at (or beyond, one-sided) its anchor 1 by
    # comparing the Decimal with the anchor exactly: anchors that terminate and
    # anchors that do not (1/3, a Fraction), values written with other exponents
    # and just either side, each direction, a scalar and a list's items, with
    # the ceiling's reach (12 + 3, or 1/3 - 1/10) on the one-sided ones
    third = Fraction(1, 3)
    ms = [metric("h", "higher_is_better", band=("abs", "3")), metric("lo", "lower_is_better", band=("abs", "0.1")),
          metric("tv", "target_value", band=("abs", "0.5")), metric("e", "exact_value"),
          metric("l", "higher_is_better", band=("abs", "1"), path="r.l[*]"),
          metric("k", "target_value", band=("rel", "0.5"), path="r.k[*].v", match_by="id"),
          metric("m", "lower_is_better", band=("abs", "0.25"), path="r.l[*]"),
          metric("x", "exact_value", path="r.k[*].v", match_by="id")]
    t = task(ms, [paper("P1", {"h": "12", "lo": third, "tv": third, "e": "1.5", "l": [third, "2"],
                               "k": {"a": third, "b": "0.25"}, "m": ["1", third], "x": {"a": "1.5"}}),
                  paper("P2", {"h": "10", "lo": "1", "tv": "0.25", "e": third, "l": ["0.5"], "k": {"a": "1"},
                               "m": ["0.25"], "x": {"b": "0.25", "a": "12"}})])
    near = [Decimal(x) for x in ("12", "12.000", "1.2E+1", "15", "15.0", "15.01", "11.99", "0.3333333333333333333333333333",
                                 "0.3333333333333333333333333334", "0.2333333333333333333333333333", "0.25", "0.250",
                                 "2.5E-1", "1.5", "1.50", "1", "0.5", "2", "-0", "0", "1E+3", "1E-30")]
    picks = st.sampled_from(near)

    @settings(max_examples=150, deadline=None, database=None, derandomize=True)
    @given(h=picks, lo=picks, tv=picks, e=picks, l0=picks, l1=picks, a=picks, b=picks)
    def check(h, lo, tv, e, l0, l1, a, b):
        d = {"r": {"h": h, "lo": lo, "tv": tv, "e": e, "l": [l0, l1],
                   "k": [{"id": "A", "v": a}, {"id": "b", "v": b}]}}
        for gates in (None, HardGatesPassed("mem", frozenset({"r.h", "r.lo"}))):
            _same(t, d, gates)
    check()
    # against P1: h 12 at 12, lo 0.3 under 1/3, e 1.50 at 1.5: 1 each; tv 0.25 is 1/12 from 1/3 in a band
    # of 1/2: 5/6; l: item 0 at 2 is past its reach 0.5 + 1 by half a band (no replay): 1/2, item 1 at 2: 1,
    # mean 3/4; k: a at 1.0 is 2/3 from 1/3 (band 1/6): 0, b: 1, mean 1/2; m: 2 is 1 over 1 (band 1/4): 0,
    # 2.0 is 5/3 over 1/3: 0; x: a at 1.0 is not 1.5: 0. R = (3 + 5/6 + 3/4 + 1/2) / 8
    d = {"r": {"h": Decimal("1.2E+1"), "lo": Decimal("0.3"), "tv": Decimal("0.25"), "e": Decimal("1.50"),
               "l": [Decimal("2"), Decimal("2.0")],
               "k": [{"id": "a", "v": Decimal("1.0")}, {"id": "b", "v": Decimal("0.25")}]}}
    assert score_panel(t, d).papers[0].r == Fraction(61, 96)
    _same(t, d, None)


def test_the_generated_table_names_only_the_plan():
    # every text in a task's generated source is a key of one of its metrics'
    # paths; every name is a constant of its namespace or one of its locals
    for t in TASKS:
        plan = plan_of(t)
        source, names = panelcode.generate(plan, panel._general)
        keys = {s for m in t.metrics for s in m.path.segments if isinstance(s, str)}
        tree = ast.parse(source)
        texts = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
        assert texts <= keys, t.id
        local = {"view", "guarded", "verified", "lists", "t", "n", "d", "x", "rs", "ix", "it", "i", "v",
                 "r", "sn", "sd", "q", "key", "num", "a", "c", "s", "g", "an", "ad", "wd", "aw"}
        used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        assert all(u in names or u in local or u in ("len", "dict", "list", "str", "abs") or
                   (u[0] in "rL" and u[1:].isdigit()) or (u[:2] == "ix" and u[2:].isdigit()) for u in used), t.id
        assert "abs" not in used or "abs(n * ad - an * d)" in source
        assert panelcode.compile_table(plan, panel._general) is not None


def test_the_table_is_compiled_at_a_tasks_second_verdict():
    t = task([metric("a")], [paper("P1", {"a": "2"})])
    plan = plan_of(t)
    d = {"r": {"a": Decimal("1.5")}}
    want = score_panel(t, d).oeval
    assert panel_oeval(t, d) == want and "table_code" in plan.__dict__ and panel._table_code(plan) is not None
    assert panel_oeval(t, d) == want and callable(plan.table_code)
