"""Hypothesis fuzzing of the parser, the scorer, the gates and the Lean emitter
against arbitrary JSON values and arbitrary mutations of the 18 oracles.

Properties, for every input:
* the parser returns an object artifact or raises ArtifactError with a known
  code, nothing else; what it accepts round-trips exactly;
* the pipeline returns a report (never raises): known status, O-EVAL exact and
  in [0, 1] (0 for a forced failure), every per-paper R in [0, 1], JSON
  without NaN, identical when computed twice;
* the gates give pass/fail/gap per instance, a wrong type never passes;
* the Lean emitter never writes a forbidden token, never breaks its comment
  structure and never copies an artifact string.

CI runs a modest, derandomised number of examples (the file stays well under
a minute). A long run: ``MMVERIFY_FUZZ_EXAMPLES=20000 python -m pytest
tests/pipeline/test_fuzz_pipeline.py`` (random examples; add ``--hypothesis-seed=N``
to replay one).
"""
from __future__ import annotations

import json
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.helpers.hostile import dump
from tests.helpers.hostile.checks import check_report, foreign_strings, lean_api, lean_problems
from tests.helpers.hostile.strategies import (byte_mutations, fuzz_settings, json_values, mutated_oracle, planted,
                                text_values)
from mmverify.reading.artifact import Artifact, ArtifactError, from_python, parse_bytes
from mmverify.pipeline.evaluate import score_artifact
from mmverify.tasks import load_all

TASKS = load_all()
PARSER_CODES = {"malformed_json", "non_finite_number", "duplicate_key", "number_out_of_range", "number_too_long",
                "not_an_object", "byte_order_mark", "invalid_utf8", "too_deep", "too_large", "too_many_values",
                "invalid_unicode"}


def parse_or_error(raw: bytes) -> Artifact | ArtifactError:
    try:
        a = parse_bytes(raw, source="fuzz")
    except ArtifactError as exc:
        assert exc.code in PARSER_CODES, exc.code
        assert isinstance(exc.message, str) and exc.message
        return exc
    assert isinstance(a, Artifact) and isinstance(a.data, dict)
    return a


def run_pipeline(task, raw: bytes, *, serialise: bool = True):
    artifact = parse_or_error(raw)
    report = score_artifact(task, artifact)
    check_report(report, task.id, render=False, serialise=serialise)
    if isinstance(artifact, ArtifactError):
        assert report.status == "error" and report.error["code"] == artifact.code
    return artifact, report


# ------------------------------------------------------------------ parser

@fuzz_settings(300)
@given(st.one_of(st.binary(max_size=300), st.text(max_size=200).map(lambda s: s.encode("utf-8", "surrogatepass"))))
def test_parser_on_arbitrary_bytes(raw):
    parse_or_error(raw)


@fuzz_settings(150)
@given(byte_mutations(TASKS))
def test_parser_on_damaged_oracle_bytes(case):
    task, raw = case
    parse_or_error(raw)


def _normal(v):
    if isinstance(v, Decimal):
        return ("n", v)          # Decimal equality is numeric: -0 == 0, 1.0 == 1
    if isinstance(v, dict):
        return {k: _normal(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_normal(x) for x in v]
    return v


@fuzz_settings(120)
@given(st.dictionaries(text_values, json_values, max_size=6))
def test_parser_round_trips_exactly(value):
    raw = dump(value).encode("utf-8")
    got = parse_or_error(raw)
    if isinstance(got, ArtifactError):
        # only the documented caps may refuse a well-formed document
        assert got.code in {"number_out_of_range", "number_too_long", "too_deep"}, got.code
        return
    assert _normal(got.data) == _normal(value)
    for x in _leaves(got.data):
        assert not isinstance(x, float)
        if isinstance(x, Decimal):
            assert x.is_finite() and not (x.is_zero() and x.is_signed())


def _leaves(v):
    if isinstance(v, dict):
        for x in v.values():
            yield from _leaves(x)
    elif isinstance(v, list):
        for x in v:
            yield from _leaves(x)
    else:
        yield v


@fuzz_settings(100)
@given(st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=10)),
                    lambda c: st.one_of(st.lists(c, max_size=4), st.dictionaries(st.text(max_size=5), c, max_size=4)),
                    max_leaves=15))
def test_from_python_is_strict(value):
    try:
        a = from_python({"v": value})
    except ArtifactError as exc:
        assert exc.code in {"non_finite_number", "number_out_of_range", "number_too_long", "too_deep"}, exc.code
        return
    assert not any(isinstance(x, float) for x in _leaves(a.data))


# ------------------------------------------------------------------ pipeline

@fuzz_settings(100)
@given(mutated_oracle(TASKS))
def test_pipeline_on_mutated_oracles(case):
    task, data, _ = case
    run_pipeline(task, dump(data).encode("utf-8"))


@fuzz_settings(80)
@given(planted(TASKS))
def test_pipeline_on_arbitrary_values_at_read_paths(case):
    task, data = case
    run_pipeline(task, dump(data).encode("utf-8"))


@fuzz_settings(40)
@given(st.sampled_from(TASKS), st.dictionaries(text_values, json_values, max_size=6))
def test_pipeline_on_arbitrary_objects(task, value):
    run_pipeline(task, dump(value).encode("utf-8"))


@fuzz_settings(25)
@given(mutated_oracle(TASKS))
def test_scores_are_deterministic_in_process(case):
    task, data, _ = case
    raw = dump(data).encode("utf-8")
    a1, r1 = run_pipeline(task, raw)
    a2, r2 = run_pipeline(task, raw)
    assert r1.to_json() == r2.to_json()
    assert r1.oeval == r2.oeval


# ------------------------------------------------------------------ gates and scorer

@fuzz_settings(80)
@given(st.one_of(mutated_oracle(TASKS).map(lambda c: (c[0], c[1])), planted(TASKS)))
def test_gates_and_scorer_directly(case):
    """Gates and the panel scorer on parsed data, without the schema in front:
    they must be total on any JSON, and a non-number never passes a numeric gate."""
    from mmverify.gates import evaluate_gates
    from mmverify.scoring.panel import score_panel

    task, data = case
    art = parse_or_error(dump(data).encode("utf-8"))
    if isinstance(art, ArtifactError):
        return
    gates = evaluate_gates(task, art.data)
    assert gates.task_id == task.id
    for inst in gates.instances:
        assert inst.verdict in ("pass", "fail", "gap")
        if inst.verdict == "pass":
            assert inst.reason is None
        if inst.verdict == "gap":
            assert inst.reason in ("missing", "empty_list"), inst.reason
        if inst.reason in ("not_a_number", "not_a_label", "not_a_list"):
            assert inst.verdict == "fail"
    json.dumps(gates.as_dict(), allow_nan=False)
    panel = score_panel(task, art.data, gates)
    assert panel.oeval is None or 0 <= panel.oeval <= 1
    for p in panel.papers:
        assert p.r is None or 0 <= p.r <= 1
    for m in panel.metrics:
        if m.read_status == "not_a_number":
            assert all(pm.r in (None, 0) for pm in m.per_paper), m.metric_id


# ------------------------------------------------------------------ Lean emitter

LEAN = lean_api()


@pytest.mark.skipif(LEAN is None, reason="the Lean emitter (mmverify.lean_gen) is not available")
@fuzz_settings(60)
@given(st.one_of(mutated_oracle(TASKS).map(lambda c: (c[0], c[1])), planted(TASKS)),
       st.sampled_from(["fuzz", "-/ axiom evil : False /-", "sorry", "#eval 1", "x\n-/\nimport Mathlib\n/-"]))
def test_lean_emitter_never_emits_a_forbidden_token(case, label):
    obligations_for_artifact, emit, wellformed = LEAN
    task, data = case
    art = parse_or_error(dump(data).encode("utf-8"))
    if isinstance(art, ArtifactError):
        return
    text = emit(obligations_for_artifact(task, art.data, label, "Fuzz"))
    assert not lean_problems(text, foreign_strings(task, art.data))
    assert not wellformed(text)


# ------------------------------------------------------------------ schema pre-check

@fuzz_settings(100)
@given(st.one_of(mutated_oracle(TASKS).map(lambda c: (c[0], c[1])), planted(TASKS)))
def test_schema_precheck_never_hides_an_error(case):
    """Differential: validate.py's compiled pre-check may answer "valid" only
    when jsonschema (with the exact types and keywords) finds no error."""
    from mmverify.pipeline import validate

    task, data = case
    art = parse_or_error(dump(data).encode("utf-8"))
    if isinstance(art, ArtifactError):
        return
    check = validate.fast_check_for(task.artifact_schema) if hasattr(validate, "fast_check_for") else None
    full = list(validate.validator_for(task.artifact_schema).iter_errors(art.data))
    if check is not None and check(art.data):
        assert not full, [e.message[:120] for e in full[:3]]
    assert bool(validate.validate_artifact(task.artifact_schema, art.data)) == bool(full)
