"""The strict parser under hostile bytes: every defect is a specific ArtifactError,
and the caps are enforced before ``json`` builds anything. Work is measured in
CPU time (``time.process_time``), so a loaded machine does not fail the tests."""
import json
import time
from decimal import Decimal

import pytest

from mmverify.reading.artifact import (DEFAULT_MAX_VALUES, ArtifactError, from_python, parse_bytes)


def code_of(raw: bytes, **kw) -> str:
    with pytest.raises(ArtifactError) as exc:
        parse_bytes(raw, **kw)
    assert exc.value.message and exc.value.code
    return exc.value.code


def test_many_tiny_values_are_rejected_by_count_before_parsing():
    n = DEFAULT_MAX_VALUES + 10
    raw = b'{"x":[' + b"0," * (n - 1) + b"0]}"
    t0 = time.process_time()
    assert code_of(raw) == "too_many_values"
    assert time.process_time() - t0 < 2.0
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
    t0 = time.process_time()
    assert len(parse_bytes(raw).data["x"]) == 8 * 1024 * 1024
    assert time.process_time() - t0 < 3.0


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


# ---------------------------------------------------------------- scanner work is linear

PATHOLOGICAL = {
    # an unterminated string of escaped quotes: a backtracking string pattern
    # restarts at every escaped quote (quadratic: 80 kB took 99 s)
    "escaped_quotes_unterminated": b'{"x": "' + b'\\"' * 200_000,
    "escaped_quotes_trailing_backslash": b'{"x": "' + b'\\"' * 200_000 + b"\\",
    "escapes_outside_strings": b'{"x": ' + b'\\"' * 200_000,
    "quotes_only": b'"' * 400_001,
    "backslashes_only": b'{"x": "' + b"\\" * 400_001,
    "escaped_brackets": b'{"x": "' + b'\\\\\\"[{' * 70_000,
    "closers_only": b'{"x": ' + b"]" * 400_000 + b"}",
    "openers_then_closers": b"[" * 100_000 + b"]" * 100_001,
    "many_short_strings": b'{"x": [' + b'"\\"",' * 40_000 + b'"a"]}',
}


@pytest.mark.parametrize("name", sorted(PATHOLOGICAL))
def test_scanner_is_linear_on_pathological_text(name):
    raw = PATHOLOGICAL[name]
    t0 = time.process_time()
    try:
        parse_bytes(raw)
    except ArtifactError as exc:
        assert exc.code in {"malformed_json", "too_deep", "too_many_values", "not_an_object"}, exc.code
    assert time.process_time() - t0 < 5.0


def _actual(value, depth=0):
    """(JSON values, empty containers, maximum nesting depth) of parsed JSON."""
    if isinstance(value, (dict, list)):
        children = list(value.values()) if isinstance(value, dict) else value
        parts = [_actual(v, depth + 1) for v in children]
        return (1 + sum(p[0] for p in parts), (not children) + sum(p[1] for p in parts),
                max([depth + 1] + [p[2] for p in parts]))
    return 1, 0, depth


from hypothesis import given, settings, strategies as st  # noqa: E402

JSONISH = st.lists(st.sampled_from(list('[]{}",:\\ a0-.eu') + ["\\u00e9", "\\ud800", "\\\"", "\\\\"]),
                   max_size=60).map("".join)
json_docs = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.text(alphabet='[]{}",:\\ab', max_size=8)),
    lambda c: st.one_of(st.lists(c, max_size=4), st.dictionaries(st.text(alphabet='[]{}",:\\ab', max_size=5), c,
                                                                  max_size=4)),
    max_leaves=30)


@settings(max_examples=300, deadline=None, database=None, derandomize=True)
@given(json_docs)
def test_scanner_bounds_agree_with_json(doc):
    """For valid JSON the scanner's depth is the real depth and its value
    count is the real count plus the number of empty containers (an upper
    bound, at most twice the count): brackets, commas and backslashes inside
    strings never count."""
    raw = json.dumps({"d": doc}).encode()
    count, empties, depth = _actual(json.loads(raw))
    with pytest.raises(ArtifactError) as exc:
        parse_bytes(raw, max_depth=depth - 1)
    assert exc.value.code == "too_deep"
    with pytest.raises(ArtifactError) as exc:
        parse_bytes(raw, max_values=count + empties - 1)
    assert exc.value.code == "too_many_values"
    parse_bytes(raw, max_depth=depth, max_values=count + empties)


@settings(max_examples=300, deadline=None, database=None, derandomize=True)
@given(JSONISH)
def test_scanner_never_raises_anything_else(text):
    try:
        parse_bytes(text.encode())
    except ArtifactError:
        pass
