"""The rules of the verified ruleset: unverified_improvement and unsupported_conclusion.

Promises (hypothesis): a verified improvement keeps r = 1 however large; no
unverified value beyond the panel's best plus the band scores 1; r rises in the
good direction up to the band and never rises after it; matching a stronger
paper never scores below matching a weaker one; the paper ruleset is purely
one-sided.
"""
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mmverify.scoring.panel import score_panel
from mmverify.tasks import load_task

from tests.helpers.taskfactory import paper, speed_task

BEST, BAND = Fraction("1.246266"), Fraction("1.246266") * Fraction("0.12")


class _Verified:
    """A gate report stand-in that verifies the given concrete paths (as a passing
    replay gate would) and has no instances for the other rules to read."""

    instances = ()

    def __init__(self, *paths):
        self._paths = frozenset(paths)

    def verified(self):
        return self._paths

    def hard_gaps(self):
        return ()


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    anchors = speed_task(str(tmp_path_factory.mktemp("a")),
                         extra_papers=[paper("P2", {"speed": "1.1", "pitch": "0.45"},
                                                   excluded={"handles": "figure_only"})])
    return load_task("t-speed", anchors)


def dec(x):
    if isinstance(x, Fraction):
        return Decimal(x.numerator) / Decimal(x.denominator)
    return Decimal(str(x))


def r_of(task, speed, gates=None, ruleset="verified"):
    data = {"result": {"speed": dec(speed), "pitch": Decimal("0.4"), "handles": Decimal(224)}}
    res = score_panel(task, data, gates, ruleset)
    row = next(m for m in res.metrics if m.metric_id == "speed")
    return [pm.r for pm in row.per_paper], res


speeds = st.decimals(min_value=Decimal("0.5"), max_value=Decimal("1e6"), places=6, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(x=speeds)
def test_verified_improvement_keeps_full_credit_however_large(task, x):
    rs, res = r_of(task, x, _Verified("result.speed"))
    if Fraction(x) >= BEST:
        assert rs == [1, 1]
    assert not [r for r in res.rules if r.rule == "unverified_improvement"]


@settings(max_examples=60, deadline=None)
@given(x=speeds)
def test_no_unverified_value_past_the_band_scores_one(task, x):
    rs, res = r_of(task, x)
    if Fraction(x) > BEST + BAND:
        assert all(r < 1 for r in rs)
        assert [r.rule for r in res.rules if r.rule == "unverified_improvement"]
    if Fraction(x) >= BEST + 2 * BAND:
        assert rs == [0, 0]


@settings(max_examples=60, deadline=None)
@given(a=speeds, b=speeds)
def test_rises_up_to_the_band_and_never_after(task, a, b):
    lo, hi = sorted((Fraction(a), Fraction(b)))
    r_lo, _ = r_of(task, lo)
    r_hi, _ = r_of(task, hi)
    cap = BEST + BAND
    for x, y in zip(r_lo, r_hi):
        if hi <= cap:
            assert y >= x          # good direction, within the band: never costs
        if lo >= cap:
            assert y <= x          # past the band: never pays


def test_matching_a_stronger_paper_never_scores_below_a_weaker_one(task):
    strong, _ = r_of(task, BEST)
    weak, _ = r_of(task, Fraction("1.1"))
    assert all(s >= w for s, w in zip(strong, weak)) and strong == [1, 1]


@settings(max_examples=40, deadline=None)
@given(x=speeds)
def test_paper_ruleset_is_purely_one_sided(task, x):
    rs, res = r_of(task, x, ruleset="paper")
    if Fraction(x) >= BEST:
        assert rs == [1, 1]
    assert res.ruleset == "paper" and not [r for r in res.rules if r.rule == "unverified_improvement"]


def test_unknown_ruleset_is_refused(task):
    with pytest.raises(ValueError, match="unknown ruleset"):
        r_of(task, 1, ruleset="lenient")


# ------------------------------------------------------------- supported_by

@pytest.fixture(scope="module")
def conclusion_task(tmp_path_factory):
    anchors = speed_task(str(tmp_path_factory.mktemp("c")))
    import json
    import os

    path = os.path.join(anchors, "t-speed", "task.json")
    spec = json.load(open(path, encoding="utf-8"))
    spec["metrics"][2]["supported_by"] = ["speed", "pitch"]
    json.dump(spec, open(path, "w", encoding="utf-8"))
    return load_task("t-speed", anchors)


def handles_r(task, speed, pitch, handles=224):
    data = {"result": {"speed": Decimal(str(speed)), "pitch": Decimal(str(pitch)), "handles": Decimal(handles)}}
    res = score_panel(task, data)
    return next(m for m in res.metrics if m.metric_id == "handles").per_paper[0].r, res


def test_a_right_conclusion_on_wrong_numbers_is_worth_nothing(conclusion_task):
    r, res = handles_r(conclusion_task, speed=0.1, pitch=5)
    assert r == 0
    r, res = handles_r(conclusion_task, speed="1.246266", pitch="0.4")
    assert r == 1 and not res.rules


def test_support_scales_the_conclusion(conclusion_task):
    # speed r = 1, pitch r = 1/2 (half a band short): support 3/4
    pitch = Fraction("0.4") + Fraction("0.4") * Fraction("0.12") / 2
    r, res = handles_r(conclusion_task, speed="1.246266", pitch=float(pitch))
    assert r == Fraction(3, 4)
    assert [x.rule for x in res.rules] == ["unsupported_conclusion"]
    r, _ = handles_r(conclusion_task, speed="1.246266", pitch=float(pitch), handles=223)
    assert r == 0


def test_support_must_name_an_unsupported_metric(tmp_path):
    import json
    import os

    from mmverify.tasks import TaskLoadError

    anchors = speed_task(str(tmp_path))
    path = os.path.join(anchors, "t-speed", "task.json")
    spec = json.load(open(path, encoding="utf-8"))
    spec["metrics"][2]["supported_by"] = ["nope"]
    json.dump(spec, open(path, "w", encoding="utf-8"))
    with pytest.raises(TaskLoadError, match="supported_by"):
        load_task("t-speed", anchors)
