"""Strict parsing of untrusted artifact JSON.

An artifact is written by an agent that is optimised against the score, so it
is treated as hostile input:

* numbers keep their JSON text as :class:`decimal.Decimal` (never a float);
* ``NaN``, ``Infinity`` and ``-Infinity`` are rejected;
* duplicate object keys are rejected;
* ``true``/``false`` stay booleans and are never read as numbers;
* the file size is capped before reading; the nesting depth and the number
  of JSON values are capped by a linear scan before ``json`` builds anything;
* strings holding a lone UTF-16 surrogate (``"\\ud800"``) are rejected.

Every failure is a :class:`ArtifactError` carrying a machine-readable ``code``
and a human-readable ``message``; nothing here raises anything else for bad
input, and nothing from the artifact is ever executed or opened as a path.
"""
from __future__ import annotations

import decimal
import errno
import json
import os
import re
import stat
from dataclasses import dataclass
from decimal import Decimal
from typing import Any
from mmverify.errors import MmverifyError
from mmverify.reading import digest
from mmverify.reading.jsonstrict import loads_strict
from mmverify.reading.numbers import DECIMAL_TEXT

DEFAULT_MAX_BYTES = 32 * 1024 * 1024
DEFAULT_MAX_DEPTH = 32
# Upper bound on the JSON values one artifact may hold. The largest oracle has
# about 1,300; at 250,000 a gate-heavy task still scores in seconds and a few
# hundred MB, where a 32 MiB file of ``0,`` would otherwise become 16 million
# Decimals (about 2 GB and 40 s of parsing).
DEFAULT_MAX_VALUES = 250_000
# Exponent magnitudes beyond this are rejected: a 10^400 "value" is never a
# modelling answer, and huge exponents make exact arithmetic arbitrarily slow.
MAX_DECIMAL_EXPONENT = 300
# A literal's length bounds its significant digits: with |exponent| <= 300 an
# exact value has at most about 400 digits, and a degree-d identity of an
# anchor about 400*d (3,200 for the degree-8 smoke-screen gates), under the
# 4,300 digits CPython converts to text. The longest oracle literal has 18.
MAX_NUMBER_TEXT = 100

_DECIMAL_CONTEXT = decimal.Context(prec=1000, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)


class ArtifactError(MmverifyError):
    """A structured, expected failure to read an artifact."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message

    def as_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


@dataclass(frozen=True)
class Artifact:
    """A parsed artifact: exact data plus where it came from."""

    data: Any
    source: str
    sha256: str


def _non_finite(name: str) -> ArtifactError:
    return ArtifactError("non_finite_number", f"non-finite number {name} is not allowed")


def _parse_decimal(text: str) -> Decimal:
    if len(text) > MAX_NUMBER_TEXT:
        raise ArtifactError("number_too_long", f"number literal of {len(text)} characters is too long")
    value = _DECIMAL_CONTEXT.create_decimal(text)
    if value.is_zero():
        # "-0" and "-0.0" carry a sign bit; a zero is a zero. "0e-999999" is
        # the plain zero too (its exponent would otherwise reach the reports).
        value = abs(value) if abs(value.as_tuple().exponent) <= MAX_DECIMAL_EXPONENT else Decimal(0)
    exp = value.adjusted()
    if not value.is_zero() and abs(exp) > MAX_DECIMAL_EXPONENT:
        raise ArtifactError(
            "number_out_of_range",
            f"number {text[:40]} has decimal exponent {exp}, beyond +/-{MAX_DECIMAL_EXPONENT}",
        )
    return value


def bounded_decimal(text: str) -> Decimal | None:
    """The exact Decimal of an artifact *string* that is plain decimal text
    (``"0.9"``, ``"-1.5e3"``; ASCII digits only, nothing around them) within the
    parser's number caps; None for anything else. Use this, never ``Decimal``
    or ``to_fraction``, wherever an artifact string may be read as a number:
    ``"1e999999999"`` would otherwise become a 10^999999999 integer."""
    if not isinstance(text, str) or len(text) > MAX_NUMBER_TEXT or not DECIMAL_TEXT.fullmatch(text):
        return None
    try:
        return _parse_decimal(text)
    except ArtifactError:
        return None


def _duplicate_key(key: str) -> ArtifactError:
    return ArtifactError("duplicate_key", f"duplicate key {key!r} in one object")


# String literals are blanked in two linear passes: escape pairs first (a
# backslash only occurs inside strings in valid JSON), then quote-to-quote
# runs (a split at the quotes), an unterminated one running to the end of the
# text. No position is scanned twice (a single pattern for escaped strings
# fails and restarts at every escaped quote of an unterminated
# '"\\"\\"\\"...': quadratic).
_ESCAPE = re.compile(r"\\.", re.DOTALL)
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")   # deleted to leave the brackets
# a \uD800-\uDFFF escape: the decoded text may hold a lone surrogate
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _scan(text: str, max_depth: int, max_values: int) -> str:
    """Reject, before ``json`` builds anything, text with more than ``max_values``
    values or nesting deeper than ``max_depth``.

    Work and memory are linear in the text and done in C (a regular expression,
    ``str.split``, ``str.count``, ``bytes.translate``): string literals are blanked out first, so brackets and
    commas inside strings do not count. The value count is an upper bound
    (commas plus opened containers plus one), which is what bounds the memory
    ``json`` would need for millions of tiny values (``[0,0,0,...]``).

    Returns the text outside string literals (what the number check of
    :func:`_number_hook` reads)."""
    # outside the strings: every other piece between quotes (the same text as
    # removing each quote-to-quote run, an unterminated one to the end)
    bare = "".join((_ESCAPE.sub("", text) if "\\" in text else text).split('"')[0::2])
    openers = bare.count("[") + bare.count("{")
    values = bare.count(",") + openers + 1
    if values > max_values:
        raise ArtifactError("too_many_values",
                            f"artifact holds about {values} JSON values, above the cap of {max_values}")
    if openers <= max_depth or bare.count("]") + bare.count("}") > openers:
        return bare  # too few openers to nest too deep, or malformed (and json says where)
    depth = 0
    brackets = bare.encode("utf-8", "surrogatepass").translate(None, _NOT_BRACKET).decode("ascii")
    for ch in brackets:   # at most 2 * max_values brackets
        if ch in "[{":
            depth += 1
            if depth > max_depth:
                raise ArtifactError("too_deep", f"nesting deeper than {max_depth} levels")
        else:
            depth -= 1
    return bare


# every byte of a number literal -> "n", every other byte -> " "
_NUMBER_CHARS = "-+.0123456789eE"
_RUNS = bytes(ord("n") if chr(b) in _NUMBER_CHARS else ord(" ") for b in range(256))


def _number_hook(bare: str):
    """The number parser for a text whose part outside strings is ``bare``.

    ``Decimal`` itself (a call in C, no Python frame per number) when it gives
    every literal of the text the very value :func:`_parse_decimal` gives and
    no literal breaks a cap: no run of number characters over the length cap,
    no negative zero (``-0``, ``-0.00``: the parser makes them zeros) and each
    literal with an exponent a whole number literal that ``_parse_decimal``
    accepts with the same sign, digits and exponent. Otherwise
    :func:`_parse_decimal`, so every value and error stays as it is. Any
    literal json reads lies whole in ``bare``: a literal right after a closing
    quote or right before an opening one is a JSON error at that point."""
    if b"n" * (MAX_NUMBER_TEXT + 1) in bare.encode("utf-8", "surrogatepass").translate(_RUNS):
        return _parse_decimal
    i = bare.find("-0")
    while i >= 0:
        j = i + 2
        if bare[j:j + 1] == ".":
            j += 1
            while bare[j:j + 1] == "0":
                j += 1
        after = bare[j:j + 1]
        if not after or after not in "123456789":
            return _parse_decimal
        i = bare.find("-0", j)
    words = bare.replace("true", " ").replace("false", " ")   # the only letters of JSON besides exponents
    for letter in "eE":
        k = words.find(letter)
        while k >= 0:
            a, b = k, k + 1
            while a > 0 and words[a - 1] in _NUMBER_CHARS:
                a -= 1
            while b < len(words) and words[b] in _NUMBER_CHARS:
                b += 1
            literal = words[a:b]
            if len(literal) > MAX_NUMBER_TEXT or not DECIMAL_TEXT.fullmatch(literal):
                return _parse_decimal
            try:
                if _parse_decimal(literal).as_tuple() != Decimal(literal).as_tuple():
                    return _parse_decimal
            except ArtifactError:
                return _parse_decimal
            k = words.find(letter, b)
    return Decimal


def _check_surrogates(value: Any) -> None:
    """Reject lone UTF-16 surrogates (``"\\ud800"``): JSON escapes allow them, but
    they are not text, cannot be written as UTF-8 and would break every report
    that quotes the value (RFC 7493, I-JSON)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                raise ArtifactError("invalid_unicode",
                                    "artifact holds a lone UTF-16 surrogate escape (not a character)") from None
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)


def parse_bytes(raw: bytes, source: str = "<bytes>", *, max_bytes: int = DEFAULT_MAX_BYTES,
                max_depth: int = DEFAULT_MAX_DEPTH, max_values: int = DEFAULT_MAX_VALUES) -> Artifact:
    """Parse artifact bytes (or a ``bytearray`` or ``memoryview`` of them)
    strictly; raise :class:`ArtifactError` on any defect, and ``TypeError``
    for an argument that holds no bytes (a ``str`` is text, not bytes: pass
    ``text.encode()``)."""
    if type(raw) is not bytes:
        if not isinstance(raw, (bytes, bytearray, memoryview)):
            raise TypeError(f"parse_bytes takes bytes, not {type(raw).__name__}"
                            + (" (pass text.encode())" if isinstance(raw, str) else ""))
        raw = bytes(raw)
    if len(raw) > max_bytes:
        raise ArtifactError("too_large", f"artifact is {len(raw)} bytes, above the cap of {max_bytes}")
    if raw.startswith(b"\xef\xbb\xbf"):
        raise ArtifactError("byte_order_mark", "artifact starts with a UTF-8 byte-order mark")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ArtifactError("invalid_utf8", f"artifact is not valid UTF-8 (byte {exc.start})") from None
    number = _number_hook(_scan(text, max_depth, max_values))
    try:
        data = loads_strict(text, duplicate_key=_duplicate_key, non_finite=_non_finite,
                            parse_float=number, parse_int=number)
    except ArtifactError:
        raise
    except json.JSONDecodeError as exc:
        # (some of json's messages end in "at": "Unterminated string starting at")
        where = "line" if exc.msg.endswith(" at") else "at line"
        raise ArtifactError("malformed_json", f"malformed JSON: {exc.msg} {where} {exc.lineno} column {exc.colno}") \
            from None
    except RecursionError:
        raise ArtifactError("too_deep", "nesting too deep to parse") from None
    except (ValueError, decimal.InvalidOperation) as exc:
        raise ArtifactError("malformed_json", f"malformed JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ArtifactError("not_an_object", f"artifact must be a JSON object, got {json_type(data)}")
    if _SURROGATE_ESCAPE.search(text):
        _check_surrogates(data)
    return Artifact(data=data, source=source, sha256=digest.sha256(raw).hexdigest())


def parse_file(path: str | os.PathLike[str], *, max_bytes: int = DEFAULT_MAX_BYTES,
               max_depth: int = DEFAULT_MAX_DEPTH, max_values: int = DEFAULT_MAX_VALUES,
               follow_symlinks: bool = True) -> Artifact:
    """Read and parse one artifact file (:func:`read_bounded`): only a regular
    file, since nothing caps the time a read may wait here."""
    name = os.fspath(path)
    raw = read_bounded(name, max_bytes, follow_symlinks=follow_symlinks, regular_only=True)
    return parse_bytes(raw, source=name, max_bytes=max_bytes, max_depth=max_depth, max_values=max_values)


def read_bounded(path: str, max_bytes: int = DEFAULT_MAX_BYTES, *, follow_symlinks: bool = True,
                 regular_only: bool = False) -> bytes:
    """An artifact's bytes, never more than ``max_bytes + 1`` read.

    ``regular_only`` refuses a FIFO, a device or a socket without waiting for a
    writer (opened non-blocking, then checked on the open file, so nothing can
    be swapped in between). Without it (the batch engine, whose reads its
    per-artifact time cap bounds) such a file is read up to the cap.
    ``follow_symlinks=False`` refuses a path whose last part is a symbolic
    link (a harness verifier: the agent wrote the path, and a link could point
    at reference files that appear after the agent has finished)."""
    flags = os.O_RDONLY | getattr(os, "O_BINARY", 0)
    if regular_only:
        flags |= getattr(os, "O_NONBLOCK", 0)
    def linked() -> ArtifactError:
        return ArtifactError("unreadable", f"artifact path is a symbolic link, which is not followed: {path}")

    if not follow_symlinks:
        nofollow = getattr(os, "O_NOFOLLOW", 0)
        if nofollow:
            flags |= nofollow          # the open itself refuses a link (ELOOP), with nothing to swap in between
        elif os.path.islink(path):
            raise linked()
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise ArtifactError("missing_artifact", f"artifact file not found: {path}") from None
    except IsADirectoryError:
        raise ArtifactError("unreadable", f"artifact path is a directory: {path}") from None
    except OSError as exc:
        if not follow_symlinks and exc.errno == errno.ELOOP:
            raise linked() from None
        raise ArtifactError("unreadable", f"cannot read artifact {path}: {exc.strerror}") from None
    except ValueError as exc:           # a NUL in the path
        raise ArtifactError("unreadable", f"cannot read artifact {path!r}: {exc}") from None
    try:
        st = os.fstat(fd)
    except OSError:
        os.close(fd)
        raise
    problem = None
    if stat.S_ISDIR(st.st_mode):
        problem = ArtifactError("unreadable", f"artifact path is a directory: {path}")
    elif regular_only and not stat.S_ISREG(st.st_mode):
        problem = ArtifactError("unreadable", f"artifact path is not a regular file (a FIFO, device or socket): {path}")
    elif st.st_size > max_bytes:
        problem = ArtifactError("too_large", f"artifact is {st.st_size} bytes, above the cap of {max_bytes}")
    if problem is not None:
        os.close(fd)
        raise problem
    with os.fdopen(fd, "rb") as fh:
        try:
            if stat.S_ISREG(st.st_mode):
                # a buffer of the file's size, not of the cap (a buffer of the
                # cap costs more than the read of a small file); a file grown
                # since its size was taken is read on, up to the cap
                raw = fh.read(st.st_size + 1)
                if len(raw) > st.st_size:
                    raw += fh.read(max_bytes + 1 - len(raw))
            else:
                raw = fh.read(max_bytes + 1)   # a device or a FIFO: still bounded
        except OSError as exc:
            raise ArtifactError("unreadable", f"cannot read artifact {path}: {exc.strerror}") from None
    if len(raw) > max_bytes:
        raise ArtifactError("too_large", f"artifact is more than {max_bytes} bytes, above the cap")
    return raw


def from_python(data: Any, source: str = "<object>", *, max_depth: int = DEFAULT_MAX_DEPTH,
                max_values: int = DEFAULT_MAX_VALUES) -> Artifact:
    """Build an artifact from an in-memory object with the same strictness and
    the same caps as the parser.

    A float becomes the decimal of its shortest round-trip text (``0.1`` ->
    ``Decimal('0.1')``; a float subclass, such as numpy's ``float64``, as the
    float it is), an int its exact decimal; non-finite numbers, non-string
    keys and non-JSON types are rejected; booleans stay booleans. Every
    problem is an :class:`ArtifactError`.
    """
    budget = [max_values]
    converted = _convert(data, 0, max_depth, budget)
    if not isinstance(converted, dict):
        raise ArtifactError("not_an_object", f"artifact must be a JSON object, got {json_type(converted)}")
    try:
        text = json.dumps(data, default=str, sort_keys=True, ensure_ascii=True)
    except (TypeError, ValueError, RecursionError) as exc:     # (a subclass that writes itself otherwise)
        raise ArtifactError("not_json", f"the object cannot be written as JSON: {exc}") from None
    return Artifact(data=converted, source=source, sha256=digest.sha256(text.encode()).hexdigest())


def _convert(value: Any, depth: int, max_depth: int, budget: list[int]) -> Any:
    if depth > max_depth:
        raise ArtifactError("too_deep", f"nesting deeper than {max_depth} levels")
    budget[0] -= 1
    if budget[0] < 0:
        raise ArtifactError("too_many_values", "artifact holds more JSON values than the cap")
    if isinstance(value, str):
        _check_surrogates(value)
        return value
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ArtifactError("non_finite_number", f"non-finite number {float.__repr__(value)} is not allowed")
        return _parse_decimal(float.__repr__(value))
    if isinstance(value, int):
        if value.bit_length() > 4 * MAX_NUMBER_TEXT:    # more digits than any literal may have
            raise ArtifactError("number_too_long", f"an integer of {value.bit_length()} bits is too long")
        return _parse_decimal(int.__repr__(value))
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise ArtifactError("non_finite_number", f"non-finite number {Decimal.__str__(value)} is not allowed")
        return _parse_decimal(Decimal.__str__(value))
    if isinstance(value, (list, tuple)):
        return [_convert(v, depth + 1, max_depth, budget) for v in value]
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise ArtifactError("bad_key", f"object key {k!r} is not a string")
            _check_surrogates(k)
            out[str.__str__(k)] = _convert(v, depth + 1, max_depth, budget)
        return out
    raise ArtifactError("not_json", f"{type(value).__name__} is not a JSON value")


def json_type(value: Any) -> str:
    """The JSON type name of a parsed value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, Decimal):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__
