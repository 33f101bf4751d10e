"""Resource limits that hold: size, depth and value caps in the parser, work
that stays near-linear in the artifact, and the batch time cap as the last
line of defence."""
from __future__ import annotations

import json
import time

import pytest

from tests.helpers.hostile import oracle_data
from mmverify.batch import score_files as batch
from mmverify.reading.artifact import (DEFAULT_MAX_BYTES, DEFAULT_MAX_DEPTH, DEFAULT_MAX_VALUES, ArtifactError,
                               parse_bytes)
from mmverify.tasks import load_task
from mmverify.pipeline.validate import validate_artifact

SIC = "cumcm-2025-b-sic-thickness"
PROD = "cumcm-2024-b-production-decision"


def test_documented_caps():
    assert DEFAULT_MAX_BYTES == 32 * 1024 * 1024
    assert DEFAULT_MAX_DEPTH == 32
    assert DEFAULT_MAX_VALUES == 250_000


@pytest.mark.parametrize("depth", [33, 1000, 200_000])
def test_depth_cap_even_when_raised_never_leaks_recursion_error(depth):
    raw = ("[" * depth + "]" * depth).encode()
    for cap in (DEFAULT_MAX_DEPTH, 10**9):
        try:
            parse_bytes(b'{"x":' + raw + b"}", max_depth=cap, max_values=10**9)
        except ArtifactError as exc:
            assert exc.code == "too_deep"


def test_at_the_caps_is_accepted():
    parse_bytes(("{" + '"a":' * 0 + '"x":' + "[" * (DEFAULT_MAX_DEPTH - 1) + "]" * (DEFAULT_MAX_DEPTH - 1)
                 + "}").encode())
    parse_bytes(b'{"x":[' + b"0," * (DEFAULT_MAX_VALUES - 3) + b"0]}")


def _unique_items_bomb(n: int) -> bytes:
    """The SiC task's ``multi_beam_samples`` (schema: uniqueItems) holding n
    distinct objects: a few thousand values, far inside every cap."""
    task = load_task(SIC)
    data = json.loads(open(task.directory + "/oracle.json", "rb").read())
    data["experiment_result"]["multi_beam_samples"] = [{"a": i} for i in range(n)]
    return json.dumps(data).encode()


def test_unique_items_check_is_not_quadratic():
    """jsonschema's own uniqueItems compared every pair of unsortable items
    (4,000 objects: 92 s); validate.py's is linear with the same verdicts."""
    task = load_task(SIC)
    art = parse_bytes(_unique_items_bomb(4000))
    t0 = time.process_time()
    with batch.time_cap(120.0):          # a guard only: the check is on CPU time
        try:
            errors = validate_artifact(task.artifact_schema, art.data)
        except batch.ScoreTimeout:
            pytest.fail("uniqueItems on 4,000 objects took more than 120 s")
    assert time.process_time() - t0 < 3.0
    assert any(e.keyword == "type" for e in errors)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # an alarm may land in a gc callback
def test_batch_time_cap_stops_a_slow_artifact(tmp_path, monkeypatch):
    """Whatever the engine's slowest path, the batch cap turns it into a
    timeout row in about the cap's time: here 20,000 list items, each read by
    several gates (an identity among them), about 120,000 values in all.

    The cap's alarm may land in a finalizer run by the garbage collector,
    where Python cannot raise it (an "unraisable" exception, swallowed; the
    alarm repeats until the cap's context ends). The test runner's own hook
    for those formats a traceback, long enough for the repeated alarm to land
    inside it; a hook that only records them keeps the test about the cap."""
    import sys

    unraisable = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: unraisable.append(u.exc_type))
    task = load_task(PROD)
    data = json.loads(open(task.directory + "/oracle.json", "rb").read())
    data["experiment_result"]["q1_sampling"] = data["experiment_result"]["q1_sampling"][:1] * 20_000
    f = tmp_path / f"{PROD}_slow.json"
    f.write_text(json.dumps(data))
    t0 = time.monotonic()
    o = batch.score_one(str(f), timeout_s=1.0, fingerprint="")
    assert time.monotonic() - t0 < 30
    assert o.row["error"]["code"] == "timeout" and o.row["oeval"] == 0
    assert o.row["task"]["id"] == PROD
    assert {t.__name__ for t in unraisable} <= {"ScoreTimeout"}


def test_oracle_data_helper_is_a_fresh_copy():
    a = oracle_data(load_task(SIC).directory)
    a["x"] = 1
    assert "x" not in oracle_data(load_task(SIC).directory)


@pytest.mark.parametrize("value,multiple", [("1e299", True), ("5e40", True), ("5.001e40", True),
                                            ("1.00000000000000000000000000000000000000000001e40", False),
                                            ("123.456", False), ("-7e-250", False)])
def test_multiple_of_on_hostile_magnitudes_is_a_report(tmp_path, value, multiple):
    """jsonschema's own multipleOf raised DivisionImpossible on 1e299 % 0.01
    (28-digit context) and TypeError on Decimal / float: out of score_artifact."""
    from tests.helpers.taskfactory import speed_task

    from mmverify.pipeline.evaluate import score_artifact
    from mmverify.tasks import load_task as load

    anchors = speed_task(str(tmp_path / "anchors"))
    schema_file = tmp_path / "anchors" / "t-speed" / "artifact.schema.json"
    schema = json.loads(schema_file.read_text())
    schema["properties"]["result"]["properties"]["pitch"]["multipleOf"] = 0.01
    schema_file.write_text(json.dumps(schema))
    task = load("t-speed", anchors)
    raw = ('{"result": {"speed": 1.2, "pitch": %s, "handles": 224}}' % value).encode()
    report = score_artifact(task, parse_bytes(raw))
    assert ("multipleOf" in {e.keyword for e in report.schema_errors}) is not multiple
    assert report.status == "scored"
    pitch = next(m for m in report.panel.metrics if m.path == "result.pitch")
    assert (pitch.read_status == "missing") is not multiple   # the violation zeroes its own field only
    strict = score_artifact(task, parse_bytes(raw), strict_schema=True)
    assert strict.status == ("scored" if multiple else "invalid")


def test_unique_items_agrees_with_the_pairwise_definition():
    import random
    from decimal import Decimal

    from jsonschema._utils import equal, uniq

    rnd = random.Random(7)
    atoms = [None, True, False, Decimal(0), Decimal("0.0"), Decimal(1), "a", "1", [], {}, [Decimal(1)],
             [Decimal("1.0")], [True], {"k": Decimal(1)}, {"k": Decimal("1.0")}, {"k": True}, {"j": Decimal(1)}]
    for _ in range(3000):
        arr = [rnd.choice(atoms) for _ in range(rnd.randint(0, 5))]
        brute = not any(equal(arr[i], arr[j]) for i in range(len(arr)) for j in range(i))
        assert (not validate_artifact({"uniqueItems": True}, arr)) == brute, arr
    # jsonschema's own sort-based shortcut misses [1] twice around [true] (1 == True
    # when sorting): the pairwise definition says they repeat, and so do we
    arr = [[Decimal(1)], [True], [Decimal(1)]]
    assert uniq(arr) and validate_artifact({"uniqueItems": True}, arr)


# ---------------------------------------------------------------- numbers hidden in strings

VEG = "cumcm-2023-c-vegetable-pricing"


@pytest.mark.parametrize("key", ["1e999999999", "-1e-999999999", "9" * 200_000, "0." + "3" * 5000, "1e301"])
def test_match_by_keys_that_look_numeric_stay_bounded(key):
    """Found by the long fuzz run (20,000 mutated oracles): a match_by key of
    200,000 digits reached str(int) (ValueError: int max str digits) and a key
    "1e999999999" would have built a 10^999999999 integer. Such keys are labels."""
    from tests.helpers.hostile import dump
    from mmverify.pipeline.evaluate import score_artifact

    task = load_task(VEG)
    data = oracle_data(task.directory)
    data["reproduced"]["correlation_comparison"][0]["category"] = key
    t0 = time.process_time()
    report = score_artifact(task, parse_bytes(dump(data).encode()))
    assert time.process_time() - t0 < 10
    assert report.status in ("scored", "invalid", "infeasible") and 0 <= report.oeval <= 1
    report.to_json()


def test_bounded_decimal():
    from decimal import Decimal

    from mmverify.reading.artifact import bounded_decimal

    assert bounded_decimal("0.90") == Decimal("0.9") and bounded_decimal("-1.5e3") == Decimal(-1500)
    for text in ("1e999999999", "9" * 401, "0.9\n", " 1", "1_000", "\u0661", "\uff11", "NaN", "Infinity", "0x10",
                 "+1", "1.", ".5", "", "1e-301"):
        assert bounded_decimal(text) is None, text
    assert bounded_decimal("1e300") == Decimal("1e300") and str(bounded_decimal("-0")) == "0"


# ---------------------------------------------------------------- exact values past 4,300 digits

HUGE_TEXT = ("CPython refuses str() of an integer over 4,300 digits (ValueError). The parser keeps every "
             "artifact number within 100 characters and |exponent| <= 300, so an anchor identity of degree d "
             "produces at most about 400*d digits: 3,200 for the degree-8 smoke-screen identities. With the "
             "parser's earlier 400-character literals those identities reached it (found by a targeted "
             "probe after the fuzz run), hence the lower cap. The rendering below still assumes the parser's caps: ")
REPORT_XFAIL = pytest.mark.xfail(strict=True, raises=ValueError, reason=HUGE_TEXT + (
    "gates/model.py GateInstance.as_dict -> mmverify/numbers.py fraction_text renders p/q with str(), "
    "so a report of a rational over 4,300 digits cannot be written (owner: gates / numbers)."))
LEAN_XFAIL = pytest.mark.xfail(strict=True, raises=ValueError, reason=HUGE_TEXT + (
    "lean_gen/ir.py claim_identity formats the cleared denominator and the scaled literals with str(), "
    "so the emitter raises on such an obligation (owner: lean_gen)."))


def _dragon_with(value):
    from decimal import Decimal

    from mmverify.reading.artifact import Artifact

    task = load_task("cumcm-2024-a-dragon-dance")
    data = oracle_data(task.directory)
    q5 = data["experiment_result"]["q5"]
    q5["max_head_speed_mps"] = q5["max_speed_ratio_when_head_1mps"] = Decimal(value)
    return task, Artifact(data=data, source="built in memory, past the parser's caps", sha256="0" * 64)


def test_the_parser_caps_keep_exact_values_renderable():
    """Through the parser, the largest literals (100 characters, exponent
    +-300) render, in the report and in Lean: the identity v_head * ratio_max
    <= 2 at two such values."""
    from tests.helpers.hostile import Raw, dump
    from tests.helpers.hostile.checks import lean_api
    from mmverify.pipeline.evaluate import score_artifact

    for text in ("1." + "7" * 92 + "e-300", "-9." + "9" * 91 + "e300"):
        assert len(text) <= 100
        task, art = _dragon_with("0")
        q5 = art.data["experiment_result"]["q5"]
        q5["max_head_speed_mps"] = q5["max_speed_ratio_when_head_1mps"] = Raw(text)
        parsed = parse_bytes(dump(art.data).encode())
        score_artifact(task, parsed).to_json()
        api = lean_api()
        if api is not None:
            api[1](api[0](task, parsed.data, "caps", "Caps"))


@REPORT_XFAIL
def test_report_renders_rationals_past_4300_digits():
    from mmverify.pipeline.evaluate import score_artifact

    task, art = _dragon_with("1.7e-2200")
    score_artifact(task, art).to_json()


@LEAN_XFAIL
def test_lean_emitter_renders_rationals_past_4300_digits():
    from tests.helpers.hostile.checks import lean_api

    api = lean_api()
    if api is None:
        pytest.skip("no Lean emitter")
    task, art = _dragon_with("1.7e-2200")
    api[1](api[0](task, art.data, "latent", "Latent"))
