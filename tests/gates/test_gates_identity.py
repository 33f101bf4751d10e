"""Compiling gate specs (every defect is a TaskLoadError naming file, gate and
field), the restricted identity parser, and hostile artifacts: nothing an
artifact holds is ever evaluated."""
from __future__ import annotations

import builtins
import os
import uuid

import pytest
from tests.helpers.gatekit import Str, data, gate, lab_task, with_gates

from mmverify.gates import compile_gates, evaluate_gates
from mmverify.gates.identity import IdentityError, parse_identity
from mmverify.tasks import TaskLoadError


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    return lab_task(str(tmp_path_factory.mktemp("anchors")), [gate("x.nonneg", "range", path="result.x", min="0")])


def compile_error(task, *specs) -> TaskLoadError:
    with pytest.raises(TaskLoadError) as info:
        compile_gates(with_gates(task, *specs))
    err = info.value
    assert err.file.endswith("task.json")
    return err


# ------------------------------------------------------------ compile errors

@pytest.mark.parametrize("spec,field,words", [
    (gate("g", "range", path="result.x", min="0", min_strcit=True), "min_strcit", "not part of a range gate"),
    (gate("g", "integer", path="result.x", max="3"), "max", "not part of a integer gate"),
    (gate("g", "range", path="result..x", min="0"), "path", "bad path"),
    (gate("g", "range", path="result.nowhere", min="0"), "path", "does not describe"),
    (gate("g", "range", path="result.x", min="2", max="1"), "max", "empty range"),
    (gate("g", "range", path="result.x", min="1", max="1", max_strict=True), "max", "empty range"),
    (gate("g", "range", path="result.x", min="abc"), "min", "not a decimal"),
    (gate("g", "order", path="result.x"), "path", "[*]"),
    (gate("g", "order", paths=["result.items[*].low", "result.nums[*]"]), "paths", "same list"),
    (gate("g", "identity", expr="x <= y", vars={"x": "result.items[*].low", "y": "result.nums[*]"}), "vars",
     "same list"),
    (gate("g", "finite_domain", path="result.label", values=["Plan A", " plan  a"]), "values", "same"),
    (gate("g", "partition_sum", parts="result.x", total="result.y"), "parts", "[*]"),
    (gate("g", "partition_sum", parts=["result.nums[*]"], total="result.items[*].value"), "parts", "same list"),
    (gate("g", "identity", expr="x <= 1", vars={"Rational": "result.x"}), "vars/Rational", "reserved"),
])
def test_defective_gate_specs_are_rejected_naming_the_field(lab, spec, field, words):
    err = compile_error(lab, spec)
    assert err.field == f"gates/0 (g)/{field}", err
    assert words in err.problem, err.problem


def test_duplicate_gate_ids_are_rejected(lab):
    err = compile_error(lab, gate("g", "integer", path="result.x"), gate("g", "integer", path="result.y"))
    assert "duplicate gate id" in err.problem


@pytest.mark.parametrize("expr,words", [
    ("x <= y <= 1", "exactly one relation"),
    ("x + y", "exactly one relation"),
    ("(x <= 1) == (y <= 1)", "relation"),
    ("x != y", "not one of"),
    ("x ^ 2 == y", "use ** for powers"),
    ("x ** y == 1", "integer literal exponent"),
    ("x ** 0.5 == y", "integer literal exponent"),
    ("x ** 100 == y", "beyond"),
    ("x // y == 1", "//"),
    ("x % 2 == y", "%"),
    ("z <= y + x", "unknown name 'z'"),
    ("x <= 1", "do not appear"),
    ("sqrt(x) <= y", "Call is not allowed"),
    ("x.real <= y", "Attribute is not allowed"),
    ("x[0] <= y", "Subscript is not allowed"),
    ("__import__('os').system('true') == x + y", "Call is not allowed"),
    ("x <= 'y'", "not a plain decimal"),
    ("x <= 1j + y", "not a plain decimal"),
    ("x <= 0x10 + y", "not a plain decimal"),
    ("x <= 1_000 + y", "not a plain decimal"),
    ("x <= (lambda: y)", "Lambda"),
    ("x <= (y if x else y)", "IfExp"),
    ("[x] == [y]", "List"),
    ("x <= (y and x)", "BoolOp"),
    ("x <= y and y <= x", "exactly one relation"),
    ("x ≤ y", "not a valid expression"),
])
def test_identity_parser_rejects_anything_but_rational_arithmetic(expr, words):
    with pytest.raises(IdentityError) as info:
        parse_identity(expr, ["x", "y"])
    assert words in str(info.value), str(info.value)


def test_identity_literals_are_exact_rationals():
    import sympy

    rel, lhs, rhs = parse_identity("x * 0.1 + 1.5e-3 == 3 / 7 * y", ["x", "y"])
    assert rel == "=="
    x, y = sympy.symbols("x y")
    assert sympy.simplify(lhs - (x * sympy.Rational(1, 10) + sympy.Rational(3, 2000))) == 0
    assert sympy.simplify(rhs - sympy.Rational(3, 7) * y) == 0
    assert not lhs.atoms(sympy.Float) and not rhs.atoms(sympy.Float)


def test_identity_names_that_shadow_sympy_or_builtins_are_just_symbols():
    # declared names bind to Symbols, never to what sympy or Python calls them
    rel, lhs, rhs = parse_identity("E + I + S + N + pi <= exec", ["E", "I", "S", "N", "pi", "exec"])
    assert {str(s) for s in lhs.free_symbols | rhs.free_symbols} == {"E", "I", "S", "N", "pi", "exec"}


def test_identity_anchor_text_with_code_is_never_run(lab, tmp_path):
    marker = tmp_path / f"pwned-{uuid.uuid4().hex}"
    spec = gate("g", "identity", expr=f"__import__('os').system('touch {marker}') == x", vars={"x": "result.x"})
    err = compile_error(lab, spec)
    assert err.field == "gates/0 (g)/expr"
    assert not marker.exists()


# ------------------------------------------------------------ hostile artifacts

HOSTILE = [
    "__import__('os').system('touch {marker}')",
    "exec(\"open('{marker}', 'w').write('x')\")",
    "eval('__import__(\"os\").system(\"touch {marker}\")')",
    "Symbol('x')",
    "sympify('x')",
    "1/0",
    "x * 0 + 2",
    "2",
    "lambda: 0",
]


def _all_forms():
    return (gate("r", "range", path="result.x", min="0", max="10"),
            gate("i", "integer", path="result.y"),
            gate("o", "order", paths=["result.x", "result.z"]),
            gate("e", "identity", expr="x * z <= 2", vars={"x": "result.x", "z": "result.z"}),
            gate("d", "finite_domain", path="result.label", values=["a", "b"]),
            gate("p", "partition_sum", parts="result.nums[*]", total="result.total"),
            gate("l", "range", path="result.items[*].value", min="0"))


@pytest.mark.parametrize("payload", HOSTILE)
def test_artifact_strings_holding_code_are_never_evaluated(lab, tmp_path, monkeypatch, payload):
    marker = tmp_path / f"pwned-{uuid.uuid4().hex}"
    text = payload.format(marker=marker)
    task = with_gates(lab, *_all_forms())
    compile_gates(task)  # anchors are compiled (trusted) before any artifact is looked at

    def forbidden(*a, **k):
        raise AssertionError("eval/exec/compile called while evaluating an artifact")

    monkeypatch.setattr(builtins, "eval", forbidden)
    monkeypatch.setattr(builtins, "exec", forbidden)
    monkeypatch.setattr(builtins, "compile", forbidden)
    hostile = data(x=Str(text), y=Str(text), z=Str(text), label=Str(text), nums=[Str(text), 1], total=Str(text),
                   items=[{"value": Str(text)}])
    report = evaluate_gates(task, hostile)
    monkeypatch.undo()
    assert not marker.exists()
    assert not os.path.exists("/tmp/pwned")
    for inst in report.instances:
        assert inst.verdict in ("fail", "gap"), inst
        if inst.form == "finite_domain":
            assert inst.reason == "violated" and inst.member is None
        else:
            assert inst.reason == "not_a_number"
        assert inst.operands == () and inst.bindings == ()
    # the payload is shown only as an escaped, bounded label, never interpreted
    d = next(i for i in report.instances if i.form == "finite_domain")
    assert len(d.values[0]) <= 70


def test_hostile_keys_and_deep_values_do_not_matter(lab):
    task = with_gates(lab, gate("r", "range", path="result.x", min="0"))
    inst = evaluate_gates(task, {"result": {"x": {"__class__": "os", "x": [1]}}}).instances[0]
    assert inst.verdict == "fail" and inst.reason == "not_a_number"
