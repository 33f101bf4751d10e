"""The strict parser under hostile bytes: every defect is a specific ArtifactError,
and the caps are enforced before ``json`` builds anything."""
import json
import time
from decimal import Decimal

import pytest

from mmverify.artifact import (DEFAULT_MAX_VALUES, ArtifactError, from_python, parse_bytes)


def code_of(raw: bytes, **kw) -> str:
    with pytest.raises(ArtifactError) as exc:
        parse_bytes(raw, **kw)
    assert exc.value.message and exc.value.code
    return exc.value.code


def test_many_tiny_values_are_rejected_by_count_before_parsing():
    n = DEFAULT_MAX_VALUES + 10
    raw = b'{"x":[' + b"0," * (n - 1) + b"0]}"
    t0 = time.perf_counter()
    assert code_of(raw) == "too_many_values"
    assert time.perf_counter() - t0 < 2.0
    ok = b'{"x":[' + b"0," * 999 + b"0]}"
    assert len(parse_bytes(ok).data["x"]) == 1000


def test_value_cap_is_configurable_and_ignores_commas_inside_strings():
    assert code_of(b'{"a":1,"b":2,"c":3}', max_values=2) == "too_many_values"
    text = json.dumps({"s": "," * 10_000 + "[" * 10_000 + "{" * 100})
    assert parse_bytes(text.encode(), max_values=10).data["s"].startswith(",")


def test_escaped_quotes_do_not_end_a_string_for_the_scanner():
    raw = json.dumps({"s": '\\"[[[[' * 20 + '"' * 5}).encode()
    parse_bytes(raw, max_depth=2)


def test_long_string_scan_is_fast():
    raw = b'{"x":"' + b"a" * (8 * 1024 * 1024) + b'"}'
    t0 = time.perf_counter()
    assert len(parse_bytes(raw).data["x"]) == 8 * 1024 * 1024
    assert time.perf_counter() - t0 < 3.0


@pytest.mark.parametrize("raw", [
    b'{"x": "\\ud800"}',
    b'{"x": "a\\udfffb"}',
    b'{"\\udc00": 1}',
    b'{"x": ["\\ud83d"]}',
    b'{"x": "\\ud83d\\u0041"}',
])
def test_lone_surrogates_are_rejected(raw):
    assert code_of(raw) == "invalid_unicode"


def test_surrogate_pairs_are_characters():
    assert parse_bytes(b'{"x": "\\ud83d\\ude00"}').data["x"] == "\U0001F600"
    with pytest.raises(ArtifactError) as exc:
        from_python({"x": "\ud800"})
    assert exc.value.code == "invalid_unicode"


@pytest.mark.parametrize("text", ["0e999999999", "0e-999999999", "-0.0e-400", "0E+301"])
def test_zero_with_an_absurd_exponent_is_plain_zero(text):
    v = parse_bytes(('{"x": %s}' % text).encode()).data["x"]
    assert v == 0 and not v.is_signed() and str(v) == "0"


def test_small_exponents_on_zero_keep_their_text():
    assert str(parse_bytes(b'{"x": 0.00}').data["x"]) == "0.00"
    assert parse_bytes(b'{"x": -0}').data["x"] == Decimal(0)
