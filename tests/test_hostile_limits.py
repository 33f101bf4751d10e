"""Resource limits that hold: size, depth and value caps in the parser, work
that stays near-linear in the artifact, and the batch time cap as the last
line of defence."""
from __future__ import annotations

import json
import time

import pytest

from hostile import oracle_data
from mmverify import batch as B
from mmverify.artifact import (DEFAULT_MAX_BYTES, DEFAULT_MAX_DEPTH, DEFAULT_MAX_VALUES, ArtifactError,
                               parse_bytes)
from mmverify.tasks import load_task
from mmverify.validate import validate_artifact

SIC = "cumcm-2025-b-sic-thickness"


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


@pytest.mark.xfail(strict=True, reason=(
    "mmverify/validate.py: jsonschema's uniqueItems falls back to an O(n^2) pairwise comparison for "
    "unhashable or mixed-type items (4,000 objects: 92 s), far inside every parser cap; needs an O(n) "
    "uniqueItems keyword in ExactValidator. Left to the validate.py work in progress (uncommitted there)."))
def test_unique_items_check_is_not_quadratic():
    task = load_task(SIC)
    art = parse_bytes(_unique_items_bomb(4000))
    with B.time_cap(3.0):
        try:
            errors = validate_artifact(task.artifact_schema, art.data)
        except B.ScoreTimeout:
            pytest.fail("uniqueItems on 4,000 objects took more than 3 s")
    assert any(e.keyword == "type" for e in errors)


def test_batch_time_cap_stops_a_validation_bomb(tmp_path):
    """Whatever the engine's slowest path, the batch cap turns it into a
    timeout row in about the cap's time."""
    f = tmp_path / f"{SIC}_bomb.json"
    f.write_bytes(_unique_items_bomb(20_000))
    t0 = time.monotonic()
    o = B.score_one(str(f), timeout_s=1.0, fingerprint="")
    assert time.monotonic() - t0 < 15
    assert o.row["error"]["code"] == "timeout" and o.row["oeval"] == 0
    assert o.row["task"]["id"] == SIC


def test_oracle_data_helper_is_a_fresh_copy():
    a = oracle_data(load_task(SIC).directory)
    a["x"] = 1
    assert "x" not in oracle_data(load_task(SIC).directory)


MULTIPLE_OF_XFAIL = pytest.mark.xfail(strict=True, reason=(
    "mmverify/validate.py: jsonschema's multipleOf computes Decimal % Decimal in the default 28-digit "
    "context (DivisionImpossible for 1e299 % 0.01) and Decimal / float for a float multipleOf (TypeError): "
    "the exception escapes score_artifact. No bundled anchor uses multipleOf yet; needs an exact "
    "Fraction-based multipleOf keyword in ExactValidator."))


@pytest.mark.parametrize("value", [pytest.param("1e299", marks=MULTIPLE_OF_XFAIL),
                                   pytest.param("5e40", marks=MULTIPLE_OF_XFAIL), "123.456", "-7e-250"])
def test_multiple_of_on_hostile_magnitudes_is_a_report(tmp_path, value):
    from taskfactory import speed_task

    from mmverify.evaluate import score_artifact
    from mmverify.tasks import load_task as load

    anchors = speed_task(str(tmp_path / "anchors"))
    schema_file = tmp_path / "anchors" / "t-speed" / "artifact.schema.json"
    schema = json.loads(schema_file.read_text())
    schema["properties"]["result"]["properties"]["pitch"]["multipleOf"] = 0.01
    schema_file.write_text(json.dumps(schema))
    task = load("t-speed", anchors)
    raw = ('{"result": {"speed": 1.2, "pitch": %s, "handles": 224}}' % value).encode()
    report = score_artifact(task, parse_bytes(raw))
    assert report.status == "invalid" and "multipleOf" in {e.keyword for e in report.schema_errors}
