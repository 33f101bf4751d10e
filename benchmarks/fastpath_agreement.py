"""Differential check of the schema pre-check against jsonschema.

``mmverify.pipeline.validate`` answers "valid" from a compiled pre-check and falls back
to jsonschema whenever the pre-check is unsure. The pre-check must be
one-sided: whenever it says valid, jsonschema must find no error. This script
mutates every oracle artifact many times (type swaps, boundary and
out-of-range numbers, deleted and extra keys, shortened and lengthened lists,
booleans, nulls, strings) and checks, for every mutant:

* pre-check True  =>  jsonschema reports no error (soundness; a failure is a bug);
* and counts pre-check False on a valid artifact (only a cost: jsonschema runs).

Usage: ``python benchmarks/fastpath_agreement.py [--mutants N] [--seed S]``.
Exit code 1 on any soundness failure.
"""
from __future__ import annotations

import argparse
import copy
import random
import sys
from decimal import Decimal
from typing import Any

from bench_common import node_paths


def _get(node: Any, path: tuple) -> Any:
    for seg in path:
        node = node[seg]
    return node


def _set(root: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    parent = _get(root, path[:-1])
    parent[path[-1]] = value
    return root


REPLACEMENTS = [None, True, False, "", "x", "1.5", Decimal("0"), Decimal("-1"), Decimal("1E+6"),
                Decimal("0.5"), Decimal("2"), Decimal("224"), Decimal("224.0"), Decimal("-0.000001"),
                [], {}, [Decimal("1")], {"k": Decimal("1")},
                # the same values as other types (a boolean equals 0 or 1), and infinities
                1, 0, 2.0, 0.5, Decimal("1.0"), Decimal("Infinity"), Decimal("-Infinity")]


def mutate(data: Any, rng: random.Random) -> Any:
    data = copy.deepcopy(data)
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        paths = node_paths(data)
        path = rng.choice(paths)
        node = _get(data, path)
        op = rng.randrange(8)
        if op == 0 and path:                       # replace by another JSON value
            data = _set(data, path, copy.deepcopy(rng.choice(REPLACEMENTS)))
        elif op == 1 and isinstance(node, Decimal):  # nudge a number across bounds
            delta = rng.choice([Decimal("1"), Decimal("-1"), Decimal("0.001"), Decimal("-0.001"), Decimal("1E+9")])
            data = _set(data, path, node + delta if rng.random() < 0.5 else -node)
        elif op == 2 and isinstance(node, dict) and node:   # delete a key
            del node[rng.choice(list(node))]
        elif op == 3 and isinstance(node, dict):     # add an unexpected key
            node["zz_extra_" + str(rng.randrange(3))] = copy.deepcopy(rng.choice(REPLACEMENTS))
        elif op == 4 and isinstance(node, list) and node:   # shorten a list
            del node[rng.randrange(len(node)):]
        elif op == 5 and isinstance(node, list) and node:   # lengthen a list (duplicates)
            node.extend(copy.deepcopy(node[: rng.randrange(1, len(node) + 1)]))
        elif op == 6 and isinstance(node, str) and path:    # change a label
            data = _set(data, path, rng.choice(["", node.upper(), node + " ", "zzz"]))
        elif op == 7 and isinstance(node, list) and node:   # swap two elements / reverse
            node.reverse()
    return data


SCALARS = [None, True, False, 0, 1, Decimal("1"), Decimal("1.0"), Decimal("-2.5"), Decimal("3"), "a", "A", "",
           "ab", Decimal("0"), 2]


def random_schema(rng: random.Random, depth: int = 0) -> Any:
    """A random schema over the keywords the pre-check models."""
    if rng.random() < 0.05:
        return rng.choice([True, False])
    s: dict[str, Any] = {}
    kinds = ["number", "integer", "string", "boolean", "null", "array", "object"]
    if rng.random() < 0.7:
        s["type"] = rng.choice(kinds) if rng.random() < 0.6 else rng.sample(kinds, rng.randrange(1, 4))
    for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        if rng.random() < 0.2:
            s[key] = rng.choice([0, 1, Decimal("1.5"), Decimal("-2.5"), 3])
    for key in ("minLength", "maxLength", "minItems", "maxItems"):
        if rng.random() < 0.15:
            s[key] = rng.randrange(0, 4)
    if rng.random() < 0.15:
        s["enum"] = rng.sample(SCALARS, rng.randrange(1, 5)) + ([[Decimal("1")]] if rng.random() < 0.2 else [])
    if rng.random() < 0.1:
        s["const"] = rng.choice(SCALARS + [[1], {"a": 1}])
    if rng.random() < 0.15:
        s["uniqueItems"] = rng.random() < 0.8
    if rng.random() < 0.1:
        s["x-unit"] = "m"
    if depth < 3:
        if rng.random() < 0.4:
            s["properties"] = {k: random_schema(rng, depth + 1) for k in rng.sample("abc", rng.randrange(0, 3))}
        if rng.random() < 0.2:
            s["required"] = rng.sample("abcd", rng.randrange(0, 3))
        if rng.random() < 0.2:
            s["additionalProperties"] = rng.choice([True, False, random_schema(rng, depth + 1)])
        if rng.random() < 0.2:
            s["prefixItems"] = [random_schema(rng, depth + 1) for _ in range(rng.randrange(1, 3))]
        if rng.random() < 0.3:
            s["items"] = rng.choice([False, True, random_schema(rng, depth + 1)])
    return s


def random_instance(rng: random.Random, depth: int = 0) -> Any:
    r = rng.random()
    if depth >= 3 or r < 0.6:
        return rng.choice(SCALARS)
    if r < 0.8:
        return [random_instance(rng, depth + 1) for _ in range(rng.randrange(0, 4))]
    return {k: random_instance(rng, depth + 1) for k in rng.sample("abcde", rng.randrange(0, 4))}


def synthetic(n: int, rng: random.Random) -> tuple[int, int, int]:
    """Random schemas x random instances: (pairs, unsound, unsure-on-valid)."""
    from mmverify.pipeline.validate import ExactValidator, fast_check_for

    pairs = unsound = unsure = 0
    for _ in range(n):
        schema = random_schema(rng)
        if not isinstance(schema, dict):
            schema = {"items": schema}
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        check = fast_check_for(schema)
        if check is None:
            continue
        validator = ExactValidator(schema)
        for _ in range(10):
            inst = random_instance(rng)
            pairs += 1
            fast = check(inst)
            valid = not any(True for _ in validator.iter_errors(inst))
            if fast and not valid:
                unsound += 1
                print(f"UNSOUND synthetic: schema {schema!r} instance {inst!r}")
            elif not fast and valid:
                unsure += 1
    return pairs, unsound, unsure


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mutants", type=int, default=300, help="mutants per task (default 300)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--schemas", type=int, default=3000, help="random schemas for the synthetic check")
    args = ap.parse_args(argv)

    from mmverify.reading.artifact import parse_file
    from mmverify.tasks import load_all
    from mmverify.pipeline.validate import fast_check_for, validator_for

    rng = random.Random(args.seed)
    total = unsound = slow_valid = invalid = 0
    for task in load_all():
        schema = task.artifact_schema
        check = fast_check_for(schema)
        if check is None:
            print(f"{task.id}: schema outside the pre-check subset (jsonschema only)")
            continue
        oracle = parse_file(task.oracle_path).data
        for _ in range(args.mutants):
            data = mutate(oracle, rng)
            if not isinstance(data, dict):
                continue
            total += 1
            fast = check(data)
            errors = list(validator_for(schema).iter_errors(data))
            if errors:
                invalid += 1
            if fast and errors:
                unsound += 1
                print(f"UNSOUND {task.id}: pre-check says valid, jsonschema: {errors[0].message[:200]}")
            elif not fast and not errors:
                slow_valid += 1
    print(f"{total} mutants: {invalid} invalid per jsonschema; pre-check unsound on {unsound}; "
          f"pre-check unsure on {slow_valid} valid mutant(s) (jsonschema fallback)")
    pairs, s_unsound, s_unsure = synthetic(args.schemas, rng)
    print(f"{pairs} random (schema, instance) pairs: pre-check unsound on {s_unsound}; "
          f"unsure on {s_unsure} valid pair(s)")
    return 1 if unsound or s_unsound else 0


if __name__ == "__main__":
    sys.exit(main())
