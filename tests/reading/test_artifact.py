"""Strict artifact parsing: exact decimals and hostile input as structured errors."""
import json
import os
from decimal import Decimal

import pytest

from mmverify.reading.artifact import ArtifactError, from_python, parse_bytes, parse_file


def err(raw: bytes) -> str:
    with pytest.raises(ArtifactError) as exc:
        parse_bytes(raw)
    assert exc.value.message
    return exc.value.code


def test_numbers_keep_their_decimal_text():
    a = parse_bytes(b'{"x": 0.1, "y": 1.246266, "z": 224, "w": 1e-3}')
    assert a.data == {"x": Decimal("0.1"), "y": Decimal("1.246266"), "z": Decimal(224), "w": Decimal("0.001")}
    assert str(a.data["y"]) == "1.246266"


@pytest.mark.parametrize("raw,code", [
    (b'{"x": 1', "malformed_json"),
    (b'{"x": NaN}', "non_finite_number"),
    (b'{"x": Infinity}', "non_finite_number"),
    (b'{"x": -Infinity}', "non_finite_number"),
    (b'{"x": 1, "x": 2}', "duplicate_key"),
    (b'{"x": 1e400}', "number_out_of_range"),
    (b'{"x": 1e-400}', "number_out_of_range"),
    (b'[1, 2]', "not_an_object"),
    (b'\xef\xbb\xbf{"x": 1}', "byte_order_mark"),
    (b'{"x": "\xff"}', "invalid_utf8"),
    (b'', "malformed_json"),
])
def test_hostile_bytes_give_specific_errors(raw, code):
    assert err(raw) == code


def test_deep_nesting_is_rejected_before_parsing():
    raw = ('{"a":' * 50 + "1" + "}" * 50).encode()
    assert err(raw) == "too_deep"
    ok = ('{"a":' * 10 + "1" + "}" * 10).encode()
    parse_bytes(ok)


def test_brackets_inside_strings_do_not_count_as_nesting():
    parse_bytes(json.dumps({"s": "[" * 500}).encode())


def test_booleans_stay_booleans():
    assert parse_bytes(b'{"x": true}').data["x"] is True


def test_negative_zero_is_zero():
    assert parse_bytes(b'{"x": -0}').data["x"] == 0
    assert not parse_bytes(b'{"x": -0.0}').data["x"].is_signed()


def test_size_cap(tmp_path):
    f = tmp_path / "big.json"
    f.write_bytes(b'{"x": "' + b"a" * 2000 + b'"}')
    with pytest.raises(ArtifactError) as exc:
        parse_file(f, max_bytes=1000)
    assert exc.value.code == "too_large"


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(ArtifactError) as exc:
        parse_file(tmp_path / "nope.json")
    assert exc.value.code == "missing_artifact"
    with pytest.raises(ArtifactError) as exc:
        parse_file(tmp_path)
    assert exc.value.code == "unreadable"


def test_from_python_is_exact_and_strict():
    a = from_python({"x": 0.1, "n": 3, "b": False, "l": [1.5]})
    assert a.data == {"x": Decimal("0.1"), "n": Decimal(3), "b": False, "l": [Decimal("1.5")]}
    for bad in ({"x": float("nan")}, {"x": float("inf")}, {1: 2}, {"x": object()}, [1]):
        with pytest.raises(ArtifactError):
            from_python(bad)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs POSIX named pipes")
def test_a_named_pipe_is_refused_without_waiting_for_a_writer(tmp_path):
    # no writer ever opens it: a blocking open would wait for ever
    fifo = tmp_path / "a.json"
    os.mkfifo(fifo)
    with pytest.raises(ArtifactError) as err:
        parse_file(str(fifo))
    assert err.value.code == "unreadable" and "not a regular file" in str(err.value)


def test_a_device_is_refused(tmp_path):
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    with pytest.raises(ArtifactError) as err:
        parse_file("/dev/zero")
    assert err.value.code == "unreadable"


def test_a_symbolic_link_is_followed_unless_asked_not_to(tmp_path):
    target = tmp_path / "real.json"
    target.write_text('{"x": 1}', encoding="utf-8")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    assert parse_file(str(link)).data == {"x": Decimal("1")}
    with pytest.raises(ArtifactError) as err:
        parse_file(str(link), follow_symlinks=False)
    assert err.value.code == "unreadable" and "symbolic link" in str(err.value)
    assert parse_file(str(target), follow_symlinks=False).data == {"x": Decimal("1")}


def test_from_python_reads_a_float_subclass_as_the_float_it_is():
    import numpy as np

    art = from_python({"x": np.float64(0.1), "y": [np.float64(0.5)]})
    assert art.data == {"x": Decimal("0.1"), "y": [Decimal("0.5")]}
    with pytest.raises(ArtifactError) as err:       # not a float: a specific error, not a crash
        from_python({"x": np.float32(0.5)})
    assert err.value.code == "not_json" and "float32" in str(err.value)
    with pytest.raises(ArtifactError) as err:
        from_python({"x": np.float64("nan")})
    assert err.value.code == "non_finite_number"


def test_from_python_keeps_the_parsers_caps():
    with pytest.raises(ArtifactError) as err:
        from_python({"x": 10 ** 5000})       # past the interpreter's own limit on int-to-text
    assert err.value.code == "number_too_long"
    with pytest.raises(ArtifactError) as err:
        from_python({"x": 10 ** 150})
    assert err.value.code == "number_too_long"
    assert from_python({"x": list(range(99))}, max_values=101).data["x"][-1] == Decimal(98)
    with pytest.raises(ArtifactError) as err:
        from_python({"x": list(range(100))}, max_values=101)
    assert err.value.code == "too_many_values"
    with pytest.raises(ArtifactError) as err:
        from_python({"x": [0] * 300_000})    # the default cap, as parse_bytes has it
    assert err.value.code == "too_many_values"


@pytest.mark.parametrize("raw", [b'{"a": "x', b'{"a": "x\x01"}', b'{"a": }'])
def test_malformed_json_says_where_once(raw):
    with pytest.raises(ArtifactError) as err:
        parse_bytes(raw)
    message = str(err.value)
    assert err.value.code == "malformed_json" and " at line 1 column " in message and "at at" not in message


def test_parse_bytes_takes_any_bytes_and_names_a_wrong_argument():
    assert parse_bytes(memoryview(b'{"a": 1}')).data == parse_bytes(bytearray(b'{"a": 1}')).data == {"a": Decimal(1)}
    for wrong, hint in (('{"a": 1}', "text.encode()"), (None, "NoneType")):
        with pytest.raises(TypeError, match=hint.replace("(", r"\(").replace(")", r"\)")):
            parse_bytes(wrong)
