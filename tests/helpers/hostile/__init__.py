"""A hostile-input corpus, generated in code from the 18 oracle artifacts.

Nothing here is a hand-copied file: every document is built from an oracle
(parsed exactly) by a named transformation, so the corpus follows the anchors
as they change. Two kinds of document:

* whole-document defects (:func:`whole_documents`): truncations, byte-order
  marks, invalid UTF-8, other encodings, wrong top-level types, deep nesting,
  huge arrays, duplicate keys, every number replaced by a hostile token, every
  string replaced by code, lists and objects swapped, unknown fields...
* leaf payloads (:func:`leaf_documents`): one hostile JSON fragment
  (:data:`PAYLOADS`) put at one path the task actually reads (a metric path
  or a gate input), so the defect reaches the scorer and the gates rather than
  stopping at the parser.

Each document is ``(name, bytes, expect)`` where ``expect`` is None or the
``error.code`` the report must carry (a tuple: one of these codes).
"""
from __future__ import annotations

import json
import os
from decimal import Decimal
from functools import lru_cache
from typing import Any, Iterator

from mmverify.reading.paths import PathError, WILDCARD, render_segments, parse_path
from mmverify.reading.artifact import parse_file

# a file whose creation would prove that an artifact string was executed
CANARY = os.path.join(os.environ.get("TMPDIR", "/tmp"), "mmverify-hostile-canary")


class Raw:
    """A fragment of JSON text put verbatim into a dumped document."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return f"Raw({self.text[:40]!r})"


def dump(value: Any) -> str:
    """JSON text of parsed artifact data: Decimals exactly, Raw fragments verbatim."""
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, dict):
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + dump(v) for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(dump(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


# ---------------------------------------------------------------- payloads

CODE_STRINGS = {
    "python_import": "__import__('os').system('touch " + CANARY + "')",
    "python_eval": "eval(compile('open(\"" + CANARY + "\", \"w\")', 'x', 'exec'))",
    "python_lambda": "(lambda: __import__('subprocess').call(['touch', '" + CANARY + "']))()",
    "sympy_expr": "Symbol('x')**2 + __import__('os').system('touch " + CANARY + "')",
    "sympy_sympify": "sympify(\"__import__('os').system('touch " + CANARY + "')\")",
    "lean_sorry": "theorem t : 1 = 2 := by sorry",
    "lean_axiom": "axiom cheat : False\ntheorem t : 1 = 2 := cheat.elim",
    "lean_native": "theorem t : 2 + 2 = 4 := by native_decide",
    "lean_eval": "#eval IO.Process.run {cmd := \"touch\", args := #[\"" + CANARY + "\"]}",
    "lean_comment_escape": "-/ axiom evil : False -/ /-",
    "lean_import": "import Mathlib\nset_option maxHeartbeats 0",
    "path_traversal": "../../../../etc/passwd",
    "path_traversal_win": "..\\..\\..\\windows\\system32",
    "template": "{{7*7}} ${7*7} %(x)s {0.__class__}",
    "nul_and_controls": "a\u0000b\u0007c\u001bd\u2028e\u2029",
    "rtl_override": "\u202e1.5\u202c",
}

# Look-alike digits: must never parse as numbers.
LOOKALIKE_DIGITS = {
    "arabic_indic": "\u0661\u0662\u0663\u066b\u0664",          # ١٢٣٫٤
    "eastern_arabic": "\u06f1\u06f2\u06f3",                       # ۱۲۳
    "fullwidth": "\uff11\uff12\uff13\uff0e\uff14",                # １２３．４
    "devanagari": "\u0967\u0968\u0969",                            # १२३
    "mathematical_bold": "\U0001d7cf\U0001d7d0\U0001d7d1",         # 𝟏𝟐𝟑
    "superscript": "\u00b9\u00b2\u00b3",
    "fullwidth_minus_exp": "\uff0d\uff11\uff45\uff13",
}

LONG = 200_000

# name -> JSON fragment text, put at a leaf the task reads.
PAYLOADS: dict[str, str] = {
    "true": "true",
    "false": "false",
    "null": "null",
    "number_as_string": '"1.5"',
    "number_as_string_exp": '"1e3"',
    "empty_string": '""',
    "huge_pos": "9." + "9" * 94 + "e299",         # ~10^300 in 100 characters: inside every cap
    "huge_neg": "-1e300",
    "tiny": "1." + "7" * 92 + "e-300",
    "many_digits": "0." + "3" * 98,                # 100 characters: the longest literal accepted
    "too_many_digits": "0." + "3" * 99,            # parser: number_too_long
    "ten_pow_400": "1e400",                        # parser: number_out_of_range
    "ten_pow_minus_400": "1e-400",
    "minus_zero": "-0",
    "minus_zero_float": "-0.0",
    "zero_exp": "0e-999",
    "long_int_text": "9" * 500,                    # parser: number_too_long
    "nan": "NaN",
    "infinity": "Infinity",
    "minus_infinity": "-Infinity",
    "empty_list": "[]",
    "empty_object": "{}",
    "list_of_number": "[1.5]",
    "object_with_value": '{"value": 1.5}',
    "nested_list": "[" * 20 + "1" + "]" * 20,
    "too_deep": "[" * 40 + "1" + "]" * 40,
    "huge_array": "[" + ",".join(["0"] * 100_000) + "]",
    "huge_string_array": "[" + ",".join(['"x"'] * 50_000) + "]",
    "long_string": json.dumps("9" * LONG),
    "long_unicode_string": json.dumps("\u9f99" * (LONG // 4), ensure_ascii=False),
    "escaped_surrogate": '"\\ud800"',
    "duplicate_keys": '{"a": 1, "a": 2}',
    "unknown_fields": '{"__proto__": {"polluted": true}, "constructor": 1, "$ref": "#/x"}',
}
for _name, _text in CODE_STRINGS.items():
    PAYLOADS["code_" + _name] = json.dumps(_text)
for _name, _text in LOOKALIKE_DIGITS.items():
    PAYLOADS["digits_" + _name] = json.dumps(_text, ensure_ascii=False)

# payloads that the parser must reject, with the code
PARSER_CODES = {
    "ten_pow_400": "number_out_of_range",
    "ten_pow_minus_400": "number_out_of_range",
    "long_int_text": "number_too_long",
    "too_many_digits": "number_too_long",
    "nan": "non_finite_number",
    "infinity": "non_finite_number",
    "minus_infinity": "non_finite_number",
    "too_deep": "too_deep",
    "escaped_surrogate": "invalid_unicode",
    "duplicate_keys": "duplicate_key",
}
# payloads that are never numbers: a metric reading one must not score it as a number
NEVER_NUMBERS = (
    {"true", "false", "null", "number_as_string", "number_as_string_exp", "empty_string", "empty_list",
     "empty_object", "list_of_number", "object_with_value", "nested_list", "long_string",
     "long_unicode_string", "huge_array", "huge_string_array", "unknown_fields"}
    | {"code_" + n for n in CODE_STRINGS} | {"digits_" + n for n in LOOKALIKE_DIGITS}
)
# the expensive ones go to one target per task only
HEAVY = {"huge_array", "huge_string_array", "long_string", "long_unicode_string"}


# ---------------------------------------------------------------- oracles

@lru_cache(maxsize=None)
def oracle_bytes(task_dir: str) -> bytes:
    with open(os.path.join(task_dir, "oracle.json"), "rb") as fh:
        return fh.read()


def oracle_data(task_dir: str) -> Any:
    """A fresh copy of the oracle's parsed data (Decimals)."""
    return parse_file(os.path.join(task_dir, "oracle.json")).data


def leaves(data: Any, prefix: tuple = ()) -> Iterator[tuple[tuple, Any]]:
    if isinstance(data, dict):
        for k, v in data.items():
            yield from leaves(v, prefix + (k,))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            yield from leaves(v, prefix + (i,))
    else:
        yield prefix, data


def map_leaves(data: Any, fn) -> Any:
    if isinstance(data, dict):
        return {k: map_leaves(v, fn) for k, v in data.items()}
    if isinstance(data, list):
        return [map_leaves(v, fn) for v in data]
    return fn(data)


def map_containers(data: Any, fn) -> Any:
    """Bottom-up: ``fn`` applied to every list and object below the top level."""
    def walk(v, top):
        if isinstance(v, dict):
            v = {k: walk(x, False) for k, x in v.items()}
        elif isinstance(v, list):
            v = [walk(x, False) for x in v]
        else:
            return v
        return v if top else fn(v)
    return walk(data, True)


def set_at(data: Any, segments: tuple, value: Any) -> bool:
    """Set ``value`` at a concrete path, creating missing objects; False when blocked."""
    cur = data
    for i, seg in enumerate(segments):
        last = i == len(segments) - 1
        if isinstance(seg, str):
            if not isinstance(cur, dict):
                return False
            if last:
                cur[seg] = value
                return True
            if seg not in cur or not isinstance(cur[seg], (dict, list)):
                cur[seg] = {} if isinstance(segments[i + 1], str) else [{}]
            cur = cur[seg]
        else:
            if not isinstance(cur, list):
                return False
            while len(cur) <= seg:
                cur.append({} if not last else None)
            if last:
                cur[seg] = value
                return True
            if not isinstance(cur[seg], (dict, list)):
                cur[seg] = {}
            cur = cur[seg]
    return False


def target_paths(task) -> list[tuple]:
    """Concrete segment tuples of every path the task reads (metrics, gate
    inputs), ``[*]`` taken as element 0, in a stable order without repeats."""
    texts: list[str] = [m.path.text for m in task.metrics]
    for g in task.gates:
        for key in ("path", "total"):
            if isinstance(g.get(key), str):
                texts.append(g[key])
        for key in ("chain", "parts"):
            texts.extend(x for x in g.get(key) or () if isinstance(x, str))
        texts.extend(x for x in (g.get("vars") or {}).values() if isinstance(x, str))
    out, seen = [], set()
    for t in texts:
        try:
            path = parse_path(t)
        except PathError:
            continue
        segs = tuple(0 if s == WILDCARD else s for s in path.segments)
        if segs not in seen:
            seen.add(segs)
            out.append(segs)
    return out


# ---------------------------------------------------------------- documents

def _number_leaf(fn):
    def inner(v):
        return fn(v) if isinstance(v, Decimal) else v
    return inner


def _string_leaf(fn):
    def inner(v):
        return fn(v) if isinstance(v, str) else v
    return inner


def whole_documents(task) -> list[tuple[str, bytes, str | None]]:
    raw = oracle_bytes(task.directory)
    data = oracle_data(task.directory)
    text = dump(data)
    docs: list[tuple[str, bytes, str | None]] = []

    def add(name, body, expect=None):
        docs.append((name, body if isinstance(body, bytes) else body.encode("utf-8"), expect))

    # truncations of the real file at 12 points
    for k in range(1, 13):
        cut = len(raw) * k // 13
        add(f"truncated_{k}of13", raw[:cut], ("malformed_json", "invalid_utf8"))  # a cut may split a character
    add("empty", b"", "malformed_json")
    add("whitespace", b" \n\t ", "malformed_json")
    add("bom", b"\xef\xbb\xbf" + raw, "byte_order_mark")
    add("utf16", raw.decode("utf-8").encode("utf-16"), "invalid_utf8")
    add("utf32_le", raw.decode("utf-8").encode("utf-32-le"), None)   # NUL bytes: not JSON
    add("latin1_byte", raw.replace(b'"', b'"\xe9', 1), "invalid_utf8")
    add("invalid_utf8_tail", raw + b"\xff\xfe", "invalid_utf8")
    add("overlong_utf8", b'{"x": "\xc0\xaf"}', "invalid_utf8")
    add("trailing_garbage", raw + b"garbage", "malformed_json")
    add("two_documents", raw + b"\n" + raw, "malformed_json")
    add("single_quotes", text.replace('"', "'"), "malformed_json")
    add("trailing_comma", text[:-1] + ",}", "malformed_json")
    add("comment", "// a comment\n" + text, "malformed_json")
    for name, body in (("null", "null"), ("number", "1.5"), ("string", '"oracle"'), ("true", "true"),
                       ("list", "[" + text + "]"), ("empty_list", "[]")):
        add(f"top_{name}", body, "not_an_object")
    add("empty_object", "{}", None)
    add("deep_40", '{"x":' + "[" * 40 + "]" * 40 + "}", "too_deep")
    add("deep_100k", '{"x":' + "[" * 100_000 + "]" * 100_000 + "}", "too_deep")
    add("deep_objects", '{"a":' * 5_000 + "1" + "}" * 5_000, "too_deep")
    add("huge_array_top", _huge_array(), "too_many_values")
    add("many_keys", _many_keys(), "too_many_values")
    add("duplicate_top_key", text[:-1] + "," + text[1:], "duplicate_key")
    add("nan_top", text[:-1] + ',"x_nan": NaN}', "non_finite_number")
    add("extra_unknown_fields", text[:-1] + ',"__proto__":{"a":1},"x-evil":"' + "z" * 10_000 + '"}', None)
    add("long_key", text[:-1] + ',"' + "k" * 100_000 + '":1}', None)
    add("task_id_lie", text[:-1] + ',"task_id":"../../../etc/passwd"}', None)

    for name, token, expect in (
        ("nan", "NaN", "non_finite_number"), ("inf", "Infinity", "non_finite_number"),
        ("ten_pow_400", "1e400", "number_out_of_range"), ("tiny_400", "1e-400", "number_out_of_range"),
        ("minus_zero", "-0", None), ("true", "true", None), ("false", "false", None), ("null", "null", None),
        ("string", None, None), ("arabic_indic", None, None), ("fullwidth", None, None),
        ("object", '{"value": 1}', None), ("list", "[1]", None), ("scaled_1e6", None, None),
        ("negated", None, None),
    ):
        if name == "string":
            fn = lambda v: str(v)
        elif name == "arabic_indic":
            fn = lambda v: _lookalike(str(v), 0x0660)
        elif name == "fullwidth":
            fn = lambda v: _lookalike(str(v), 0xFF10)
        elif name == "scaled_1e6":
            fn = lambda v: Raw(str(v * Decimal("1e6")))
        elif name == "negated":
            fn = lambda v: Raw(str(-v))
        else:
            fn = (lambda t: lambda v: Raw(t))(token)
        add(f"all_numbers_{name}", dump(map_leaves(data, _number_leaf(fn))), expect)
    for cname, code in list(CODE_STRINGS.items())[:8]:
        add(f"all_strings_{cname}", dump(map_leaves(data, _string_leaf(lambda v, c=code: c))), None)
    add("all_strings_digits", dump(map_leaves(data, _string_leaf(lambda v: LOOKALIKE_DIGITS["fullwidth"]))), None)
    add("lists_to_objects", dump(map_containers(
        data, lambda c: {str(i): x for i, x in enumerate(c)} if isinstance(c, list) else c)), None)
    add("objects_to_lists", dump(map_containers(
        data, lambda c: list(c.values()) if isinstance(c, dict) else c)), None)
    add("objects_to_key_lists", dump(map_containers(
        data, lambda c: [[k, v] for k, v in c.items()] if isinstance(c, dict) else c)), None)
    add("lists_wrapped", dump(map_containers(data, lambda c: [c] if isinstance(c, list) else c)), None)
    add("leaves_wrapped", dump(map_leaves(data, lambda v: [v])), None)
    add("lists_doubled", dump(map_containers(data, lambda c: c + c if isinstance(c, list) else c)), None)
    add("lists_emptied", dump(map_containers(data, lambda c: [] if isinstance(c, list) else c)), None)
    add("pretty_crlf", json.dumps(json.loads(text), indent=4, ensure_ascii=False).replace("\n", "\r\n"), None)
    return docs


@lru_cache(maxsize=None)
def _huge_array() -> bytes:
    return b'{"x":[' + b"0," * 299_999 + b"0]}"


@lru_cache(maxsize=None)
def _many_keys() -> bytes:
    return ("{" + ",".join(f'"k{i}":{i}' for i in range(300_000)) + "}").encode()


def _lookalike(text: str, zero: int) -> str:
    return "".join(chr(zero + int(c)) if c.isdigit() else c for c in text)


_HOLE = "@@HOSTILE_PAYLOAD@@"


def leaf_documents(task, full: bool = False, budget: int = 120
                   ) -> list[tuple[str, bytes, str | None, tuple, str]]:
    """Hostile payloads at the paths the task reads: (name, bytes, expect, path, payload).

    ``full``: every payload at every path. Otherwise every payload at the first
    path, and the other paths share the payloads in rotation (about ``budget``
    documents per task), each path getting some and each payload reaching
    several paths; the heavy payloads go to the first path only."""
    targets = target_paths(task)
    names = list(PAYLOADS)
    stride = 1 if full else max(1, -(-len(targets) * len(names) // budget))
    docs = []
    for t, segs in enumerate(targets):
        data = oracle_data(task.directory)
        if not set_at(data, segs, Raw(_HOLE)):
            continue
        template = dump(data)
        for k, pname in enumerate(names):
            if pname in HEAVY and t > 0 and not full:
                continue
            if t > 0 and k % stride != t % stride:
                continue
            name = "leaf_" + render_segments(segs) + "__" + pname
            body = template.replace(_HOLE, PAYLOADS[pname]).encode("utf-8")
            docs.append((name, body, PARSER_CODES.get(pname), segs, pname))
    return docs


# ---------------------------------------------------------------- batch inputs

def perturbed(data: Any, i: int) -> Any:
    """A deterministic variant ``i`` of parsed data: numbers scaled, or one
    leaf made hostile, or left as it is."""
    kind = i % 5
    if kind == 0:
        return data
    if kind in (1, 2):
        factor = Decimal(1) + Decimal((i % 11) - 5) / Decimal(20)
        return map_leaves(data, _number_leaf(lambda v: Raw(str(v * factor))))
    if kind == 3:
        spots = [p for p, v in leaves(data) if isinstance(v, Decimal)]
        if spots:
            set_at(data, spots[i % len(spots)], Raw(list(PAYLOADS.values())[i % len(PAYLOADS)]))
        return data
    return map_containers(data, lambda c: c[:1] if isinstance(c, list) else c)


def write_batch_inputs(folder: str, n: int, tasks) -> list[str]:
    """``n`` artifact files named ``<task-id>_run<i>.json`` (the task is
    inferred from the name), cycling through ``tasks``, each a perturbed oracle;
    every 23rd is a file whose task cannot be told, every 29th is not JSON."""
    os.makedirs(folder, exist_ok=True)
    paths = []
    for i in range(n):
        task = tasks[i % len(tasks)]
        if i % 23 == 22:
            name, body = f"anonymous_{i}.json", b"{}"
        elif i % 29 == 28:
            name, body = f"{task.id}_run{i}.json", oracle_bytes(task.directory)[: 50 + i]
        else:
            name, body = f"{task.id}_run{i}.json", dump(perturbed(oracle_data(task.directory), i)).encode("utf-8")
        path = os.path.join(folder, name)
        with open(path, "wb") as fh:
            fh.write(body)
        paths.append(path)
    return paths
