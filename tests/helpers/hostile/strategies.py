"""Hypothesis strategies: arbitrary JSON values, hostile tokens, and arbitrary
mutations of the 18 oracle artifacts.

A mutation works on the parsed oracle (exact Decimals) and the result is dumped
back to JSON text, so that a raw token (``NaN``, ``1e400``, a duplicate key)
can be planted anywhere and the real parser sees it.
"""
from __future__ import annotations

import copy
import os
from decimal import Decimal
from functools import lru_cache
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st

from . import CODE_STRINGS, LOOKALIKE_DIGITS, PAYLOADS, Raw, dump, oracle_data

# ------------------------------------------------------------------ settings

LONG = "MMVERIFY_FUZZ_EXAMPLES" in os.environ


def examples(default: int) -> int:
    """Examples per fuzz test: ``default`` in CI, ``$MMVERIFY_FUZZ_EXAMPLES`` in a long run."""
    value = os.environ.get("MMVERIFY_FUZZ_EXAMPLES")
    return int(value) if value else default


def fuzz_settings(default: int, **kw):
    """CI: derandomised (the same examples every run, so CI is stable). Long
    runs (``MMVERIFY_FUZZ_EXAMPLES=N``): random, unless ``MMVERIFY_FUZZ_SEED``
    is set too (then ``pytest -p hypothesis --hypothesis-seed`` style replay is
    by that seed). No example database is written into the work tree."""
    from hypothesis import HealthCheck

    return settings(max_examples=examples(default), deadline=None, database=None, derandomize=not LONG,
                    suppress_health_check=list(HealthCheck), print_blob=True, **kw)


# ------------------------------------------------------------------ values

HOSTILE_STRINGS = (
    list(CODE_STRINGS.values()) + list(LOOKALIKE_DIGITS.values())
    + ["", " ", "1.5", "-0", "1e400", "NaN", "Infinity", "true", "null", "0x10", "1_000", " 42 ", "42\n",
       "\u00a0", "\ufeff1", "\u0000", "A016", "yes", "reject_high", "M1", "FY1"]
)

text_values = st.one_of(
    st.sampled_from(HOSTILE_STRINGS),
    st.text(max_size=30),
    st.text(alphabet=st.sampled_from("0123456789.-+eE \u0661\u0662\uff11\uff12"), max_size=12),
)

finite_decimals = st.one_of(
    st.decimals(allow_nan=False, allow_infinity=False),
    st.decimals(allow_nan=False, allow_infinity=False, places=6, min_value=-1000, max_value=1000),
    st.integers(min_value=-(10**120), max_value=10**120).map(Decimal),
    st.builds(lambda m, e: Decimal(m).scaleb(e), st.integers(-999, 999), st.integers(-320, 320)),
    st.sampled_from([Decimal(0), Decimal("-0"), Decimal("0.000"), Decimal(1), Decimal("-1"),
                     Decimal("1e-300"), Decimal("9.99e299")]),
)

scalars = st.one_of(st.none(), st.booleans(), finite_decimals, text_values)

json_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=6),
        st.dictionaries(text_values, children, max_size=6),
    ),
    max_leaves=25,
)

raw_tokens = st.sampled_from(sorted(PAYLOADS)).map(lambda name: Raw(PAYLOADS[name]))

# what a mutation may put in place of a node
replacements = st.one_of(json_values, raw_tokens)


# ------------------------------------------------------------------ mutations

def node_paths(data: Any) -> list[tuple]:
    """Every node below the top, as a tuple of keys/indices (containers included)."""
    out: list[tuple] = []
    stack = [((), data)]
    while stack:
        prefix, v = stack.pop()
        if isinstance(v, dict):
            for k, x in v.items():
                out.append(prefix + (k,))
                stack.append((prefix + (k,), x))
        elif isinstance(v, list):
            for i, x in enumerate(v):
                out.append(prefix + (i,))
                stack.append((prefix + (i,), x))
    out.sort(key=lambda p: tuple((isinstance(s, int), str(s)) for s in p))
    return out


def _parent(data: Any, path: tuple) -> tuple[Any, Any]:
    cur = data
    for seg in path[:-1]:
        cur = cur[seg]
    return cur, path[-1]


SCALE_FACTORS = ["0", "-1", "2", "10", "0.5", "1e-6", "1e6", "1.0000001", "0.9999999", "1e100", "1e-100",
                 "1e300", "3"]

OPS = ("replace", "delete", "duplicate", "scale", "nudge", "wrap_list", "wrap_object", "stringify", "boolify",
       "nullify", "swap", "rename", "empty", "truncate", "reverse", "raw")


def apply(data: Any, path: tuple, op: str, draw) -> str:
    """Apply one mutation in place; returns a short description."""
    parent, key = _parent(data, path)
    node = parent[key]
    where = "/".join(map(str, path))
    if op == "replace":
        parent[key] = draw(json_values)
    elif op == "raw":
        parent[key] = draw(raw_tokens)
    elif op == "delete":
        del parent[key]
    elif op == "duplicate":
        if isinstance(parent, list):
            parent.insert(key, copy.deepcopy(node))
        else:
            parent[key] = [node, copy.deepcopy(node)]
    elif op in ("scale", "nudge"):
        if isinstance(node, Decimal):
            if op == "scale":
                f = Decimal(draw(st.sampled_from(SCALE_FACTORS)))
                parent[key] = Raw(str(node * f))
            else:
                parent[key] = Raw(str(node + Decimal(draw(st.sampled_from(["1e-12", "-1e-12", "1", "-1"])))))
        else:
            parent[key] = draw(finite_decimals)
    elif op == "wrap_list":
        parent[key] = [node]
    elif op == "wrap_object":
        parent[key] = {draw(st.sampled_from(["value", "x", str(key)])): node}
    elif op == "stringify":
        parent[key] = dump(node) if not isinstance(node, str) else node + "x"
    elif op == "boolify":
        parent[key] = bool(node) if not isinstance(node, Raw) else True
    elif op == "nullify":
        parent[key] = None
    elif op == "swap":
        keys = list(parent.keys()) if isinstance(parent, dict) else list(range(len(parent)))
        other = draw(st.sampled_from(keys))
        parent[key], parent[other] = parent[other], parent[key]
    elif op == "rename":
        if isinstance(parent, dict):
            new = draw(st.sampled_from([str(key).upper(), str(key) + "_", " " + str(key), str(key) + "\u200b"]))
            if new not in parent:
                parent[new] = parent.pop(key)
    elif op == "empty":
        parent[key] = [] if isinstance(node, list) else {} if isinstance(node, dict) else ""
    elif op == "truncate":
        if isinstance(node, list) and node:
            del node[draw(st.integers(0, len(node) - 1)):]
    elif op == "reverse":
        if isinstance(node, list):
            node.reverse()
    return f"{op} {where}"


@lru_cache(maxsize=None)
def _oracle_cached(directory: str) -> Any:
    return oracle_data(directory)


@st.composite
def mutated_oracle(draw, tasks, max_mutations: int = 4):
    """(task, data, [descriptions]) — an oracle with 1..max_mutations mutations."""
    task = draw(st.sampled_from(tasks))
    data = copy.deepcopy(_oracle_cached(task.directory))
    done = []
    for _ in range(draw(st.integers(1, max_mutations))):
        paths = node_paths(data)
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        op = draw(st.sampled_from(OPS))
        done.append(apply(data, path, op, draw))
    if draw(st.integers(0, 9)) == 0:
        data = draw(st.sampled_from([[data], {"result": data}, {**data, "task_id": task.id}]))
    return task, data, done


@st.composite
def planted(draw, tasks):
    """(task, data) — the oracle with arbitrary JSON at some of the paths the task reads."""
    from . import set_at, target_paths

    task = draw(st.sampled_from(tasks))
    data = copy.deepcopy(_oracle_cached(task.directory))
    targets = target_paths(task)
    for segs in draw(st.lists(st.sampled_from(targets), min_size=1, max_size=4, unique=True)):
        set_at(data, segs, draw(replacements))
    return task, data


@st.composite
def byte_mutations(draw, tasks):
    """Raw bytes: an oracle file truncated, with bytes flipped, inserted or deleted."""
    from . import oracle_bytes

    task = draw(st.sampled_from(tasks))
    raw = bytearray(oracle_bytes(task.directory))
    for _ in range(draw(st.integers(1, 4))):
        if not raw:
            break
        pos = draw(st.integers(0, len(raw) - 1))
        kind = draw(st.sampled_from(["flip", "insert", "delete", "truncate", "splice"]))
        if kind == "flip":
            raw[pos] = draw(st.integers(0, 255))
        elif kind == "insert":
            raw[pos:pos] = draw(st.one_of(st.binary(min_size=1, max_size=8),
                                          st.sampled_from([b"NaN", b"1e400", b"-0", b'"', b"[", b"{", b",",
                                                           b"\xef\xbb\xbf", b"\\ud800", b"true"])))
        elif kind == "delete":
            del raw[pos:pos + draw(st.integers(1, 16))]
        elif kind == "truncate":
            del raw[pos:]
        else:
            other = draw(st.integers(0, len(raw) - 1))
            raw[pos:pos] = raw[other:other + draw(st.integers(1, 64))]
    return task, bytes(raw)
