"""The fast paths keep every verdict: compiled identity closures agree with
sympy, the integer relation check with the Fraction one, the verdict-only
reward with the full report, and the compiled-task cache is a shortcut only
(ignored when stale, corrupt or off). Scoring loads neither sympy nor
jsonschema once the cache holds the anchors' checks (numpy is a replay
simulation's own business)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.helpers.hostile.strategies import fuzz_settings, mutated_oracle

from mmverify.tasks import cache
from mmverify.reading.artifact import from_python, parse_file
from mmverify.pipeline.evaluate import reward_of, score_artifact
from mmverify.gates import compile_gates
from mmverify.gates.identity import (compile_identity, evaluate_side, pair_holds, parse_identity,
                                     relation_holds, side_texts)
from mmverify.tasks import TaskLoadError, build_task, load_all, read_trusted_json

TASKS = load_all()
IDENTITIES = [(t.id, g.identity) for t in TASKS for g in compile_gates(t) if g.identity is not None]

fractions = st.fractions(max_denominator=10**6).filter(lambda f: abs(f) < 10**9)
small = st.one_of(st.sampled_from([Fraction(0), Fraction(1), Fraction(-1)]), fractions)


# ------------------------------------------------------------- identities

@pytest.mark.parametrize("expr", [
    "x * 0.1 + 1.5e-3 == 3 / 7 * y", "x ** 2 - y ** -1 >= .5", "-(x - y) / (x + y) < 2", "+x * -y ** 3 <= 0",
    "x / y / x == 1", "(x * y) / y == x", "x ** -0 + y ** 0 == 2", "x / (y * y) * y < x / y + 1",
])
@given(x=small, y=small)
@fuzz_settings(60)
def test_compiled_sides_equal_sympy(expr, x, y):
    relation, evaluate = compile_identity(expr, ["x", "y"])
    rel, lhs, rhs = parse_identity(expr, ["x", "y"])
    assert relation == rel
    got = evaluate([x, y])
    for pair, side in zip(got, (lhs, rhs)):
        want = evaluate_side(side, {"x": x, "y": y})
        if pair is None:
            continue  # a division by zero in the written expression: undefined (sympy may have cancelled it)
        assert pair[1] > 0
        assert Fraction(*pair) == want


decimals = st.one_of(
    st.integers(-10**6, 10**6),
    st.decimals(allow_nan=False, allow_infinity=False, min_value=-10**9, max_value=10**9),
    st.builds(lambda m, e: Decimal(f"{m}E{e}"), st.integers(-999, 999), st.integers(-300, 300)))


@pytest.mark.parametrize("expr", [
    "x * 0.1 + 1.5e-3 == 3 * y", "x ** 2 - y ** 3 >= .5", "-(x - y) * (x + y) < 2", "+x * -y ** 3 <= 0",
    "x ** 0 + y ** 0 == 2", "x - y > 0", "x == y", "0.3 * x - 0.1 * y >= x",
    "489/100 * x - 2458/500 * y ** 2 <= 1/8", "(x - 2 ** -3) * (y + 1/(4 * 5)) < 0",
])
@given(x=decimals, y=decimals, tol=st.sampled_from(["0", "0.001", "1e-30", "123456789012345678901234567890.5"]))
@fuzz_settings(80)
def test_decimal_check_equals_the_exact_relation(expr, x, y, tol):
    # the verdict path's Decimal evaluation decides exactly as the Fractions,
    # or leaves the verdict to them (None), never another answer
    from mmverify.gates.identity_decimal import compile_decimal_check
    from mmverify.reading.numbers import exact_decimal, to_fraction

    holds = compile_decimal_check(expr, ["x", "y"])
    relation, evaluate = compile_identity(expr, ["x", "y"])
    tol_f = Fraction(Decimal(tol))
    lhs, rhs = evaluate([to_fraction(x), to_fraction(y)])
    got = holds((x, y), exact_decimal(tol_f))
    if got is None:
        assert "** 0" in expr and 0 in (x, y)      # 0 ** 0: InvalidOperation in Decimal
    else:
        assert got == pair_holds(relation, lhs, rhs, tol_f)
    assert holds((to_fraction(x), y), tol_f) is None   # a Fraction value: left to the pairs


def test_decimal_check_declines_division():
    from mmverify.gates.identity_decimal import compile_decimal_check

    assert compile_decimal_check("x / y == 1", ["x", "y"]) is None
    assert compile_decimal_check("x ** -2 == y", ["x", "y"]) is None
    assert compile_decimal_check("x == 1/3 * y", ["x", "y"]) is None      # a constant that does not terminate
    assert compile_decimal_check("x == y / (2 - 2)", ["x", "y"]) is None   # left to the pairs: undefined
    assert compile_decimal_check("x ** 2 == y", ["x", "y"]) is not None
    assert compile_decimal_check("489/100 * x == y", ["x", "y"]) is not None  # folded: 4.89
    assert compile_decimal_check("1/3 * 3 * x == y", ["x", "y"])((Decimal(2), 2), 0) is True   # folded whole: 1


@given(x=small, y=small)
@fuzz_settings(40)
def test_an_identity_text_is_compiled_once_and_decides_as_a_fresh_compile(x, y):
    # gates that repeat one identity text share its closures; they decide as
    # closures compiled afresh from that text
    from mmverify.gates.identity_decimal import compile_decimal_check

    _compile_identity, _compile_decimal_check = compile_identity.__wrapped__, compile_decimal_check.__wrapped__
    expr = "x * 0.1 + 1.5e-3 == 3 / 7 * y ** 2"
    assert compile_identity(expr, ["x", "y"]) is compile_identity(expr, ("x", "y"))
    assert compile_identity(expr, ("y", "x")) is not compile_identity(expr, ("x", "y"))
    relation, shared = compile_identity(expr, ("x", "y"))
    fresh_relation, fresh = _compile_identity(expr, ("x", "y"))
    assert relation == fresh_relation and shared([x, y]) == fresh([x, y])
    poly = "x ** 2 - 3 * y >= 0.25"
    assert compile_decimal_check(poly, ["x", "y"]) is compile_decimal_check(poly, ("x", "y"))
    values = (Decimal(x.numerator), Decimal(y.numerator))
    assert compile_decimal_check(poly, ("x", "y"))(values, 0) == _compile_decimal_check(poly, ("x", "y"))(values, 0)


def test_repeated_anchor_identities_share_their_closures():
    for task in TASKS:
        by_text = {}
        for gate in compile_gates(task):
            if gate.identity is not None:
                key = (gate.identity.expr, gate.identity.var_names)
                first = by_text.setdefault(key, gate.identity)
                assert gate.identity.evaluate is first.evaluate and gate.identity.holds is first.holds


@given(data=st.binary(max_size=3000), cut=st.integers(0, 3000))
@fuzz_settings(60)
def test_digest_sha256_is_hashlib_sha256(data, cut):
    import hashlib

    from mmverify.reading import digest

    assert digest.sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
    h = digest.sha256()
    h.update(data[:cut])
    h.update(data[cut:])
    assert h.digest() == hashlib.sha256(data).digest()


def test_decimal_check_of_a_long_identity_is_compiled_or_left_to_the_pairs():
    # one function of both sides nests a call per operation: past the
    # compiler's nesting limit there is no Decimal check, and the pair
    # closures decide as for a division
    from mmverify.gates.identity_decimal import compile_decimal_check

    for n in (150, 330):                        # (an identity is at most 2,000 characters)
        names = [f"x{i}" for i in range(n)]
        expr = "+".join(names) + f"=={n}"
        holds = compile_decimal_check(expr, names)
        assert holds is None or holds((Decimal(1),) * n, 0) is True
        relation, evaluate = compile_identity(expr, names)
        lhs, rhs = evaluate([Fraction(1)] * n)
        assert pair_holds(relation, lhs, rhs, Fraction(0))
    assert compile_decimal_check(" + ".join(f"x{i}" for i in range(150)) + " == 1",
                                 [f"x{i}" for i in range(150)]) is not None


def test_a_side_sympy_folds_to_infinity_is_a_task_defect():
    # "1 / (x - x)" is zoo for sympy whatever x is: rejected when the gates
    # are compiled (as before the closures), not left to fail at scoring time
    task = TASKS[0]
    from dataclasses import replace

    spec = {"id": "broken", "form": "identity", "level": "B", "severity": "hard",
            "expr": "1 / (x - x) > y", "vars": {"x": _some_path(task), "y": _some_path(task)}}
    with pytest.raises(TaskLoadError, match="rational"):
        compile_gates(replace(task, gates=task.gates + (spec,)))


def _some_path(task) -> str:
    return next(p.text for g in compile_gates(task) for p in g.inputs if not p.is_list)


@given(x=small, y=small)
@fuzz_settings(100)
def test_sympy_undefined_means_compiled_undefined(x, y):
    # the closure follows the text as written, so it is undefined wherever
    # sympy's canonical form is, and also where sympy cancelled a zero divisor
    expr = "x / y + y / (x - 1) == 1 / (x * y - 2)"
    _, evaluate = compile_identity(expr, ["x", "y"])
    _, lhs, rhs = parse_identity(expr, ["x", "y"])
    for pair, side in zip(evaluate([x, y]), (lhs, rhs)):
        if evaluate_side(side, {"x": x, "y": y}) is None:
            assert pair is None


@given(a=fractions, b=fractions, tol=st.one_of(st.just(Fraction(0)), fractions.map(abs)),
       rel=st.sampled_from(["==", "<=", ">=", "<", ">"]), k=st.integers(1, 50), m=st.integers(-50, -1))
@fuzz_settings(300)
def test_pair_relation_equals_fraction_relation(a, b, tol, rel, k, m):
    # unreduced pairs (scaled by k), positive denominators
    lhs = (a.numerator * k, a.denominator * k)
    rhs = (b.numerator * -m, b.denominator * -m)
    assert pair_holds(rel, lhs, rhs, tol) == relation_holds(rel, a, b, tol)
    assert pair_holds(rel, lhs, lhs, tol) == relation_holds(rel, a, a, tol)


@pytest.mark.parametrize("task_id,ident", IDENTITIES[::3], ids=lambda x: x if isinstance(x, str) else "")
def test_anchor_identities_sympy_sides_and_texts(task_id, ident):
    _, lhs, rhs = parse_identity(ident.expr, ident.var_names)
    assert ident.lhs == lhs and ident.rhs == rhs
    assert side_texts(ident.expr, ident.var_names) == (str(lhs), str(rhs)) == (ident.lhs_text, ident.rhs_text)


# ------------------------------------------------------------- verdict-only reward

# replay tasks cost up to a second per score; the replay stage is the same on
# both paths, so the property is fuzzed on the others (oracles of all below)
FAST_TASKS = [t for t in TASKS if not t.replay]


@given(case=mutated_oracle(FAST_TASKS))
@fuzz_settings(60)
def test_reward_of_equals_the_report(case):
    task, data, _ = case
    try:
        artifact = from_python(data) if isinstance(data, dict) else None
    except Exception:  # noqa: BLE001 - a mutation the converter rejects is not this test's subject
        return
    for ruleset in ("verified", "paper"):
        report = score_artifact(task, artifact, ruleset=ruleset)
        assert reward_of(task, artifact, ruleset) == report.reward


@given(case=mutated_oracle(FAST_TASKS))
@fuzz_settings(60)
def test_verdict_only_stages_equal_the_report_stages(case):
    # exact, stage by stage: the panel's O-EVAL without records is the report's
    # O-EVAL (as a Fraction), and the hard-gate verdicts the reward reads are
    # the report's hard instances, up to and including the first failing gate
    from mmverify.gates import evaluate_gates
    from mmverify.scoring.panel import panel_oeval, score_panel

    task, data, _ = case
    full = evaluate_gates(task, data)
    hard = evaluate_gates(task, data, hard_only=True)
    report_hard = [i for i in full.instances if i.hard]
    assert _verdicts(hard.instances) == _verdicts(report_hard[:len(hard.instances)])
    # every gate, soft ones too, decided on the verdict path's reads as in the report
    assert _verdicts(evaluate_gates(task, data, records=False).instances) == _verdicts(full.instances)
    assert bool(hard.hard_failures) == bool(full.hard_failures)
    if not full.hard_failures:
        assert len(hard.instances) == len(report_hard)
        assert hard.verified() == full.verified()
    for ruleset in ("verified", "paper"):
        # (a failing hard gate zeroes the reward before the panel is scored)
        for gates in (full, None) + (() if full.hard_failures else (hard,)):
            want = score_panel(task, data, gates, ruleset).oeval
            got = panel_oeval(task, data, gates, ruleset)
            assert got == want and type(got) is type(want)
    # the gate report and the panel a score holds, their records made when first read
    from mmverify.gates import score_gates
    from mmverify.scoring.panel import deferred_panel

    deferred = score_gates(task, data)
    assert deferred == full and deferred.verified() == full.verified()
    panel = deferred_panel(task, data, score_gates(task, data))
    assert panel.oeval == score_panel(task, data, full).oeval and "_make" in panel.__dict__
    assert panel == score_panel(task, data, full) and "_make" not in panel.__dict__


def _verdicts(instances) -> list[tuple]:
    """What a verdict carries, comparable between records and verdicts (a
    verdict's values are the numbers as parsed, a record's their text)."""
    return [(i.gate_id, i.index, i.verdict, i.reason, i.paths, tuple(v is None for v in i.values))
            for i in instances]


def test_reward_of_oracles_and_missing():
    for task in TASKS:
        art = parse_file(task.oracle_path)
        assert reward_of(task, art) == score_artifact(task, art).reward > 0
        assert reward_of(task, None) == score_artifact(task, None).reward == 0.0


# ------------------------------------------------------------- the compiled-task cache

def test_cache_round_trip_corrupt_and_off(tmp_path, monkeypatch):
    monkeypatch.setenv("MMVERIFY_CACHE", str(tmp_path))
    key = cache.key_of("unit", b"content")
    assert cache.load(key) is None
    cache.store(key, [1, "two"])
    assert cache.load(key) == [1, "two"]
    assert [p.name for p in tmp_path.iterdir()] == [key + ".json"]   # no temporary file left behind
    assert cache.key_of("unit", b"content!") != key                    # other content, other key
    (tmp_path / (key + ".json")).write_text("{not json")
    assert cache.load(key) is None                                      # corrupt: ignored
    assert cache.cached(key, lambda: "again", lambda v: v == "again") == "again"
    (tmp_path / (key + ".json")).write_text(json.dumps({"key": "another", "value": 1}))
    assert cache.load(key) is None                                      # a record under the wrong name
    monkeypatch.setenv("MMVERIFY_CACHE", "off")
    assert cache.cache_dir() is None
    cache.store(key + "x", 1)
    assert not (tmp_path / (key + "x.json")).exists()


def test_engine_stamp_names_the_gate_modules_in_use():
    # an edit of the identity parser or the gate compiler changes every key
    import mmverify.gates.compile
    import mmverify.gates.identity

    stamp = cache._engine_stamp()
    for module in (mmverify.gates.identity, mmverify.gates.compile):
        path = os.path.abspath(module.__file__)
        st = os.stat(path)
        assert f"{path}:{st.st_size}:{st.st_mtime_ns}" in stamp.splitlines()


def test_side_texts_of_a_task_in_one_record(tmp_path, monkeypatch):
    # one record holds sympy's reading of every identity of a task; read back,
    # it gives the texts sympy gives; a corrupt or misshapen record is ignored
    from mmverify.gates import identity
    from mmverify.gates.identity import _sympy_texts, load_side_texts

    monkeypatch.setenv("MMVERIFY_CACHE", str(tmp_path))
    task = next(t for t in TASKS if t.id == "cumcm-2025-a-smoke-screen")
    pairs = [(s["expr"], tuple(s["vars"])) for s in task.gates if s["form"] == "identity"]
    want = {(" ".join(e.split()), n): _sympy_texts(e, n) for e, n in pairs}
    monkeypatch.setattr(identity, "_TEXTS", {})
    load_side_texts(pairs)
    records = [p for p in tmp_path.iterdir() if p.name.startswith("identity-sides-set-")]
    assert len(records) == 1
    assert identity._TEXTS == want
    for content in (None, b"{not json", json.dumps({"key": records[0].stem, "value": [["x"]]}).encode()):
        monkeypatch.setattr(identity, "_TEXTS", {})
        if content is not None:
            # a record of the wrong shape: the per-identity records are dropped
            # too, so that only sympy can give the texts back
            for p in tmp_path.iterdir():
                if p.name.startswith("identity-sides-"):
                    p.write_bytes(content)
        load_side_texts(pairs)
        assert identity._TEXTS == want
        assert cache.load(records[0].stem) == [list(want[k]) for k in sorted(want)]
    bad = [("x == y +", ("x", "y"))]                     # a defective identity: nothing stored
    monkeypatch.setattr(identity, "_TEXTS", {})
    before = set(tmp_path.iterdir())
    load_side_texts(bad)
    assert set(tmp_path.iterdir()) == before and identity._TEXTS == {}


def test_cache_never_hides_a_broken_task(tmp_path, monkeypatch):
    import shutil

    monkeypatch.setenv("MMVERIFY_CACHE", str(tmp_path / "cache"))
    task = TASKS[0]
    folder = tmp_path / task.id
    shutil.copytree(task.directory, folder)
    file = str(folder / "task.json")
    build_task(read_trusted_json(file), str(folder), file)             # fills the cache
    assert any(p.name.startswith("task-validated-") for p in (tmp_path / "cache").iterdir())
    build_task(read_trusted_json(file), str(folder), file)             # read from the cache
    raw = read_trusted_json(file)
    raw["metrics"][0]["direction"] = "sideways"
    with open(file, "w", encoding="utf-8") as fh:
        json.dump(raw, fh, default=str)
    with pytest.raises(TaskLoadError, match="sideways"):                # new bytes, new key: checked again
        build_task(read_trusted_json(file), str(folder), file)
    shutil.copy(os.path.join(task.directory, "task.json"), file)
    for p in (tmp_path / "cache").iterdir():                            # a corrupt record is recomputed
        p.write_bytes(b"\x00garbage")
    assert build_task(read_trusted_json(file), str(folder), file).id == task.id
    assert all(cache.load(p.stem) is not None for p in (tmp_path / "cache").iterdir())
    build_task(read_trusted_json(file), str(folder), file)             # the oracle check read from the cache
    oracle = folder / "oracle.json"
    data = json.loads(oracle.read_text(encoding="utf-8"))
    first = task.metrics[0].path.segments[0]
    del data[first]
    oracle.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(TaskLoadError, match="oracle artifact lacks"):   # an edited oracle is read again
        build_task(read_trusted_json(file), str(folder), file)


# ------------------------------------------------------------- no heavy import when scoring

_PROBE = r"""
import json, sys
from mmverify.reading.artifact import parse_file
from mmverify.pipeline.evaluate import reward_of, score_artifact
from mmverify.pipeline.report import render
from mmverify.tasks import load_all
for task in load_all():
    art = parse_file(task.oracle_path)
    report = score_artifact(task, art)
    render(report, "table"); render(report, "json")
    reward_of(task, art)
print(json.dumps(sorted(m for m in ("sympy", "jsonschema") if m in sys.modules)))
"""


def test_scoring_imports_no_sympy_or_jsonschema_once_cached(tmp_path):
    env = dict(os.environ, MMVERIFY_CACHE=str(tmp_path / "cache"))
    first = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, env=env, timeout=300)
    assert first.returncode == 0, first.stderr
    assert "jsonschema" in json.loads(first.stdout)       # the first process checks the anchors
    again = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, env=env, timeout=300)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout) == []
