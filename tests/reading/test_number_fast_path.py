"""The parser's number fast path: when ``_number_hook`` hands numbers to
``Decimal`` itself, every document parses to exactly what the per-number
``_parse_decimal`` gives (same sign, digits and exponent of every number), and
every document it rejects is rejected with the same code and message."""
import json
from decimal import Decimal
from unittest import mock

import pytest
from hypothesis import given, settings, strategies as st

from mmverify.reading import artifact
from mmverify.reading.artifact import ArtifactError, parse_bytes


def _exact(value):
    """``value`` with every Decimal as (sign, digits, exponent), so -0 != 0 and 1.0 != 1."""
    if isinstance(value, Decimal):
        return ("D", value.as_tuple())
    if isinstance(value, dict):
        return {k: _exact(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_exact(v) for v in value]
    return value


def _outcome(raw: bytes):
    try:
        return ("ok", _exact(parse_bytes(raw).data))
    except ArtifactError as exc:
        return ("error", exc.code, exc.message)


def _slow_outcome(raw: bytes):
    """The outcome with the per-number ``_parse_decimal`` for every document."""
    with mock.patch.object(artifact, "_number_hook", lambda bare: artifact._parse_decimal):
        return _outcome(raw)


NUMBERS = ["0", "-0", "0.0", "-0.00", "0.000", "1", "-1", "10", "1.5", "-2.25", "0.05", "-0.05", "123456789",
           "1e5", "1E5", "1e+5", "1.5e-3", "-2E-07", "0e5", "-0e5", "0e-999", "1e300", "1e301", "1e-300",
           "1e-301", "9.99e300", "1" * 100, "1" * 101, "0." + "0" * 98 + "1", "-" + "9" * 100,
           "8.1067954e+18", "1263e5", "1e999999999", "-0.0e-5"]
JUNK = ["", " ", ",", "]", "}", '"', '"x"', "e", "-", ".", "+", "true", "null", "\\", "[", "{"]


@pytest.mark.parametrize("number", NUMBERS)
def test_every_literal_alone_and_beside_plain_ones(number):
    for text in (f'{{"x": {number}}}', f'{{"a": [1, 2.5, {number}, 3]}}', f'{{"s": "{number}", "n": 4.5}}',
                 f'{{"a": {number}, "b": -0}}', f'{{"a": 1e5, "b": {number}}}'):
        raw = text.encode()
        assert _outcome(raw) == _slow_outcome(raw), text


@settings(max_examples=400, deadline=None, database=None, derandomize=True)
@given(st.lists(st.one_of(st.sampled_from(NUMBERS), st.sampled_from(JUNK)), max_size=8))
def test_malformed_and_mixed_texts_agree(parts):
    """Numbers, strings and junk run together (literals joined across strings,
    numbers cut by junk): the fast path never changes a value or an error."""
    for text in ('{"x": [' + ", ".join(parts) + "]}", '{"x": [' + "".join(parts) + "]}", "".join(parts)):
        raw = text.encode()
        assert _outcome(raw) == _slow_outcome(raw), text


def _write(value) -> str:
    """JSON text with each Decimal written as ``str`` gives it (exponents, negative zeros)."""
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_write(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(json.dumps(k) + ": " + _write(v) for k, v in value.items()) + "}"
    return json.dumps(value)


@settings(max_examples=300, deadline=None, database=None, derandomize=True)
@given(st.recursive(st.one_of(st.integers(-10**30, 10**30),
                              st.decimals(allow_nan=False, allow_infinity=False, places=None),
                              st.text(alphabet='0123456789.-eE"\\ ', max_size=6), st.booleans(), st.none()),
                    lambda c: st.one_of(st.lists(c, max_size=4), st.dictionaries(st.text(max_size=3), c, max_size=4)),
                    max_leaves=20))
def test_valid_documents_agree(doc):
    raw = _write({"d": doc}).encode()
    assert _outcome(raw) == _slow_outcome(raw)


def test_the_oracles_take_the_fast_path():
    """The bundled oracles (the 156 KB crop-planting one among them) take the
    fast path, except those that write a negative zero (``-0.0``), which the
    parser turns into a zero one literal at a time. This is what makes parsing
    them cheap, not what makes it correct."""
    import glob
    import os
    import re

    from mmverify.tasks import default_anchors_dir

    files = sorted(glob.glob(os.path.join(default_anchors_dir(), "*", "oracle.json")))
    assert len(files) >= 18
    fast = 0
    for f in files:
        with open(f, encoding="utf-8") as fh:
            text = fh.read()
        hook = artifact._number_hook(artifact._scan(text, artifact.DEFAULT_MAX_DEPTH, artifact.DEFAULT_MAX_VALUES))
        if hook is Decimal:
            fast += 1
        else:
            assert re.search(r"[:,\[]\s*-0\.0+\s*[,\]}]", text), f
    assert fast >= len(files) - 1
    crop = next(f for f in files if "crop-planting" in f)
    with open(crop, encoding="utf-8") as fh:
        assert artifact._number_hook(artifact._scan(fh.read(), 32, 250_000)) is Decimal
