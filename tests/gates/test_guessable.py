"""The audit's guessability checks: pinned metrics, small answer spaces and
wide paying sets, and printed constants that pay.

Each kind has a deliberately bad task (a dragon-dance-like fixture with one
defect added) that the audit must flag, and its resolved form; the bundled
anchors must carry none unresolved."""
from __future__ import annotations

import copy
from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st
from tests.gates.test_audit import audit, findings, fresh
from tests.helpers.gatekit import GATES, PANEL
from tests.helpers.taskfactory import number_schema

from mmverify.gates.audit import audit_anchors
from mmverify.gates.guessable import Span, paying_intervals
from mmverify.scoring.kernels import kernel_score
from mmverify.scoring.rules import band_width, ceiling
from mmverify.tasks import Band, MetricSpec
from mmverify.reading import paths

KINDS = ("pinned_metric", "guessable_metric", "printed_bound_in_band")


def _panel_without_audit():
    panel = copy.deepcopy(PANEL)
    del panel[0]["audit"]
    return panel


def _one(out, kind):
    got = findings(out, kind)
    assert len(got) == 1, got
    return got[0]


# ------------------------------------------------------------------ pinned

def test_a_hard_identity_with_no_other_variable_pins_the_metric(tmp_path):
    gates = GATES + [{"id": "q1.handles_count", "form": "identity", "level": "B", "severity": "hard",
                      "expr": "h == 223 + 1", "vars": {"h": "result.handles"}, "description": "223 + 1"}]
    code, out, _ = audit(fresh(tmp_path, gates=gates))
    assert code == 1
    f = _one(out, "pinned_metric")
    assert f["subject"] == "handles" and f["severity"] == "problem" and "q1.handles_count" in f["detail"]
    code, out, text = audit(fresh(tmp_path / "b", gates=gates,
                                  metric_extra={"handles": {"guess_reason": "kept as a reading check"}}))
    assert code == 0, text
    assert _one(out, "pinned_metric")["severity"] == "audited"


def test_a_range_with_equal_bounds_or_one_whole_number_pins_the_metric(tmp_path):
    equal = GATES + [{"id": "h.fixed", "form": "range", "level": "B", "severity": "hard", "path": "result.handles",
                      "min": "224", "max": "224", "description": "fixed"}]
    code, out, _ = audit(fresh(tmp_path, gates=equal))
    assert code == 1 and "min == max == 224" in _one(out, "pinned_metric")["detail"]
    narrow = GATES + [{"id": "h.narrow", "form": "range", "level": "B", "severity": "hard", "path": "result.handles",
                       "min": "223.5", "max": "224.5", "description": "one whole number inside"}]
    code, out, _ = audit(fresh(tmp_path / "b", gates=narrow))
    assert code == 1 and "leave one whole number, 224" in _one(out, "pinned_metric")["detail"]


def test_an_identity_with_two_variables_pins_nothing(tmp_path):
    code, out, text = audit(fresh(tmp_path))
    assert code == 0, text
    assert not [f for k in KINDS for f in findings(out, k)]


# --------------------------------------------------------------- guessable

def test_an_integer_field_with_few_values_is_guessable_unless_supported(tmp_path):
    schema = {"handles": {"type": "integer", "x-unit": "count", "minimum": 220, "maximum": 230}}
    code, out, _ = audit(fresh(tmp_path, schema_extra=schema))
    assert code == 1
    f = _one(out, "guessable_metric")
    assert f["subject"] == "handles" and f["severity"] == "problem" and "11 whole number(s)" in f["detail"]
    code, out, text = audit(fresh(tmp_path / "b", schema_extra=schema,
                                  metric_extra={"handles": {"supported_by": ["speed"]}}))
    assert code == 0, text
    assert _one(out, "guessable_metric")["severity"] == "info"
    code, out, text = audit(fresh(tmp_path / "c", schema_extra=schema,
                                  metric_extra={"handles": {"guess_reason": "the statement fixes it"}}))
    assert code == 0, text
    assert _one(out, "guessable_metric")["severity"] == "audited"


def test_a_label_from_a_small_enum_is_guessable(tmp_path):
    schema = {"handles": {"type": "string", "enum": ["few", "many"]}}
    panel = _panel_without_audit()
    panel[0]["values"]["handles"] = "many"
    code, out, _ = audit(fresh(tmp_path, schema_extra=schema, panel=panel, oracle_extra={"handles": "many"},
                               gates=[g for g in GATES if g["id"] != "q1.handles_integer"]))
    assert code == 1
    assert "answer set of 2 member(s)" in _one(out, "guessable_metric")["detail"]


def test_a_band_covering_more_than_a_sixth_of_a_bounded_range_is_guessable(tmp_path):
    # speed in [0, 2], band 12 %: r >= 1/2 on [1.17, 1.56], 19 % of the range
    code, out, _ = audit(fresh(tmp_path, schema_extra={"speed": number_schema("m/s", minimum=0, maximum=2)}))
    assert code == 1
    f = _one(out, "guessable_metric")
    assert f["subject"] == "speed" and "cover 19%" in f["detail"]
    code, out, text = audit(fresh(tmp_path / "b", schema_extra={"speed": number_schema("m/s", minimum=0, maximum=2)},
                                  metric_extra={"speed": {"band": {"rel": "0.05"}}}))
    assert code == 0, text
    assert not findings(out, "guessable_metric")


# ----------------------------------------------------------- printed bounds

def test_a_soft_gate_bound_less_ten_percent_that_pays_is_flagged(tmp_path):
    # the soft cap prints 0.5; 0.5 x 0.9 = 0.45 is within the 12 % band of the 0.4375 anchor (lower is better)
    code, out, _ = audit(fresh(tmp_path, metric_extra={"pitch": {"band": {"rel": "0.12"}}}))
    assert code == 1
    f = _one(out, "printed_bound_in_band")
    assert f["subject"] == "pitch" and "0.5 x 0.9 = 0.45" in f["detail"] and "soft gate q3.pitch_soft_cap" in f["detail"]


def test_an_identity_constant_that_pays_is_flagged(tmp_path):
    gates = GATES + [{"id": "pitch.hint", "form": "identity", "level": "B", "severity": "soft",
                      "expr": "p <= 0.41", "vars": {"p": "result.pitch"}, "description": "a printed hint"}]
    code, out, _ = audit(fresh(tmp_path, gates=gates))
    assert code == 1
    f = _one(out, "printed_bound_in_band")
    assert "0.41" in f["detail"] and "soft gate pitch.hint" in f["detail"]


# ------------------------------------------------------------ the anchors

def test_the_bundled_anchors_have_no_unresolved_guessable_metric():
    report = audit_anchors()
    assert not [f for f in report.findings if f.kind in KINDS and f.severity == "problem"]
    # every resolution is written down: a guess_reason (audited) or a supported_by (info)
    for f in report.findings:
        if f.kind in KINDS:
            assert f.severity in ("audited", "info")
            assert ("guess_reason:" in f.detail) if f.severity == "audited" else ("supported_by:" in f.detail)


# ------------------------------------------------------------ the promise

def _metric(direction: str, band: Fraction) -> MetricSpec:
    return MetricSpec("m", paths.parse_path("x"), "1", direction, Fraction(1), Band("rel", band, str(band)))


def _r(metric, x, anchors, a):
    r = kernel_score(metric.direction, x, a, band_width(metric, a, None).width)
    cap = ceiling(metric, anchors)
    return r * cap.factor(x) if cap is not None else r


@given(st.sampled_from(["target_value", "higher_is_better", "lower_is_better"]),
       st.lists(st.fractions(min_value=Fraction(1, 10), max_value=100), min_size=1, max_size=3),
       st.fractions(min_value=Fraction(3, 100), max_value=Fraction(1, 2)))
def test_the_paying_interval_is_exactly_where_r_is_at_least_a_half(direction, anchors, rel):
    metric = _metric(direction, rel)
    eps = Fraction(1, 10**6)
    for a, lo, hi in paying_intervals(metric, anchors):
        assert lo <= a <= hi
        assert _r(metric, lo, anchors, a) >= Fraction(1, 2) and _r(metric, hi, anchors, a) >= Fraction(1, 2)
        assert _r(metric, lo - eps, anchors, a) < Fraction(1, 2)
        assert _r(metric, hi + eps, anchors, a) < Fraction(1, 2)


@given(st.fractions(min_value=-10, max_value=10), st.fractions(min_value=Fraction(1, 10), max_value=10),
       st.fractions(min_value=-20, max_value=20), st.fractions(min_value=0, max_value=20), st.booleans())
def test_coverage_is_a_share_and_grows_with_the_interval(lo, width, a, w, integer):
    span = Span(lo, lo + width, integer)
    small, large = span.cover(a, a + w), span.cover(a - 1, a + w + 1)
    if small is None:
        return
    assert 0 <= small <= large <= 1


def test_the_audit_guide_names_the_fix_through_the_real_cli(tmp_path):
    from tests.helpers.gatekit import run_cli

    anchors = fresh(tmp_path, metric_extra={"pitch": {"band": {"rel": "0.12"}}})
    r = run_cli("audit", "--anchors", anchors)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "printed_bound_in_band: narrow the band" in r.stdout
    assert "t-dragon  pitch" in r.stdout


def test_a_strict_bound_of_a_whole_number_field_excludes_the_bound(tmp_path):
    # 219..230 is 12 whole numbers (guessable); 218..230 is 13, and one exact answer covers 1/13 of them
    strict = {"handles": {"type": "integer", "x-unit": "count", "exclusiveMinimum": 218, "maximum": 230}}
    code, out, _ = audit(fresh(tmp_path, schema_extra=strict))
    assert code == 1 and "12 whole number(s) in [219, 230]" in _one(out, "guessable_metric")["detail"]
    closed = {"handles": {"type": "integer", "x-unit": "count", "minimum": 218, "maximum": 230}}
    code, out, text = audit(fresh(tmp_path / "b", schema_extra=closed))
    assert code == 0, text
    assert not findings(out, "guessable_metric")
