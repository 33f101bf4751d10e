"""The Lean runner without Lean: discovery order, the missing-toolchain message,
and parsing of Lean's output (both the 2021 pre-release format and the current
one) into one result per theorem by exact name."""
from __future__ import annotations

import os
import stat

import pytest

from mmverify.lean_gen import runner

FILE = "/tmp/x/MMVerifyCheck.lean"

TEXT = """/-
  header
-/

namespace Ns

/-- gate a (range, level A, hard): gate verdict pass; the kernel proves the gate's claim
    scale: 10^0; x -/
theorem t_a : 0 ≤ 1 := by decide
#print axioms t_a

/-- gate b (range, level A, hard): gate verdict fail; the kernel proves the NEGATION
    scale: 10^0; x -/
theorem t_b : ¬ (2 ≤ 1) := by decide
#print axioms t_b

/-- gate c -/
theorem t_c : 1 = 2 := by decide
#print axioms t_c

/-- gate d -/
theorem t_d : 1 = 1 := sorry
#print axioms t_d

/-- gate e -/
theorem t_e : 1 = 1 := by decide

end Ns
"""

OLD_OUTPUT = f"""'Ns.t_a' does not depend on any axioms
'Ns.t_b' depends on axioms: [propext]
{FILE}:18:26: error: failed to reduce to 'true'
  false
{FILE}:19:0: error: unknown constant 'Ns.t_c'
{FILE}:22:0: warning: declaration uses 'sorry'
'Ns.t_d' depends on axioms: [sorryAx]
"""

NEW_OUTPUT = f"""{FILE}:10:0: info: 'Ns.t_a' does not depend on any axioms
{FILE}:15:0: info: 'Ns.t_b' depends on axioms: [propext,
 Quot.sound]
{FILE}:18:26: error: tactic 'decide' proved that the proposition
  1 = 2
is false
{FILE}:19:0: info: 'Ns.t_c' depends on axioms: [sorryAx]
{FILE}:22:8: warning: declaration uses 'sorry'
{FILE}:23:0: info: 'Ns.t_d' depends on axioms: [sorryAx]
"""


@pytest.mark.parametrize("output", [OLD_OUTPUT, NEW_OUTPUT], ids=["lean-2021", "lean-current"])
def test_interpret_by_exact_name(output):
    results, stray = runner.interpret(TEXT, output, FILE)
    assert stray == ()
    assert set(results) == {"Ns.t_a", "Ns.t_b", "Ns.t_c", "Ns.t_d", "Ns.t_e"}
    assert results["Ns.t_a"].status == runner.PROVED and results["Ns.t_a"].axioms == ()
    assert results["Ns.t_b"].status == runner.REFUTED and results["Ns.t_b"].negated
    assert results["Ns.t_c"].status == runner.FAILED and not results["Ns.t_c"].parse_error
    assert results["Ns.t_d"].status == runner.AUDIT_FAILED and results["Ns.t_d"].axioms == ("sorryAx",)
    assert results["Ns.t_e"].status == runner.AUDIT_FAILED and results["Ns.t_e"].axioms is None  # no audit line


def test_wrapped_axiom_list_and_guillemets():
    out = "'A.«b»' depends on axioms: [propext,\n  Quot.sound,\n  Lean.ofReduceBool]\n"
    assert runner.parse_axioms(out) == {"A.b": ("propext", "Quot.sound", "Lean.ofReduceBool")}


def test_parse_errors_are_flagged():
    text = "namespace N\ntheorem t : 1 = 1 := by nativeDecide\n#print axioms t\nend N\n"
    out = f"{FILE}:2:24: error: unknown tactic\n{FILE}:3:0: error: unknown constant 'N.t'\n"
    results, _ = runner.interpret(text, out, FILE)
    assert results["N.t"].status == runner.FAILED and results["N.t"].parse_error


def test_errors_outside_theorems_are_stray():
    text = "namespace N\nfoo bar\ntheorem t : 1 = 1 := by decide\n#print axioms t\nend N\n"
    out = f"{FILE}:2:0: error: unexpected identifier; expected command\n'N.t' does not depend on any axioms\n"
    results, stray = runner.interpret(text, out, FILE)
    assert results["N.t"].status == runner.PROVED
    assert stray and "unexpected identifier" in stray[0]


def test_is_negated():
    assert runner.is_negated("¬ (1 ≤ 2)")
    assert not runner.is_negated("¬ (1 ≤ 2) ∨ ¬ (3 ≤ 4)")
    assert not runner.is_negated("1 ≤ 2")


def test_scan_namespaces_and_spans():
    decls, owner = runner.scan(TEXT)
    names = [d.name for d in decls]
    assert names == ["Ns.t_a", "Ns.t_b", "Ns.t_c", "Ns.t_d", "Ns.t_e"]
    a = decls[0]
    assert owner[a.first] == "Ns.t_a" and owner[a.line] == "Ns.t_a" and a.print_line == a.line + 1
    assert decls[2].statement == "1 = 2"


def test_combine_rejects_repeated_names(monkeypatch):
    t = "namespace N\ntheorem t : 1 = 1 := by decide\n#print axioms t\nend N\n"
    monkeypatch.setattr(runner, "check_text", lambda *a, **k: None)
    with pytest.raises(ValueError):
        runner.check_files([t, t], toolchain=runner.Toolchain(("true",), None, "test"))


# ------------------------------------------------------------------ discovery

def _exe(folder, name, body="#!/bin/sh\necho 'Lean (version 4.0.0-test)'\n"):
    path = os.path.join(folder, name)
    with open(path, "w") as fh:
        fh.write(body)
    os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)
    return path


def test_not_found_names_what_is_missing_and_how_to_install(tmp_path):
    with pytest.raises(runner.LeanNotFound) as info:
        runner.find_lean({"PATH": str(tmp_path)})
    msg = str(info.value)
    assert "MMVERIFY_LEAN" in msg and "lake" in msg and "lean" in msg
    assert "elan" in msg and "LeanProofs/lean-toolchain" in msg


def test_explicit_binary_wins_and_must_be_executable(tmp_path):
    lean = _exe(str(tmp_path), "lean")
    tc = runner.find_lean({"MMVERIFY_LEAN": lean, "PATH": ""})
    assert tc.argv == (lean,) and tc.how == "MMVERIFY_LEAN"
    assert tc.version() == "Lean (version 4.0.0-test)"
    with pytest.raises(runner.LeanNotFound) as info:
        runner.find_lean({"MMVERIFY_LEAN": str(tmp_path / "nope"), "PATH": ""})
    assert "not an executable" in str(info.value)


def test_lake_then_lean_on_path(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    proj = tmp_path / "LeanProofs"
    proj.mkdir()
    (proj / "lean-toolchain").write_text("leanprover/lean4:v4.15.0\n")
    monkeypatch.setenv("MMVERIFY_LEANPROOFS", str(proj))
    lean = _exe(str(bin_dir), "lean")
    assert runner.find_lean({"PATH": str(bin_dir)}).argv == (lean,)
    lake = _exe(str(bin_dir), "lake")
    tc = runner.find_lean({"PATH": str(bin_dir)})
    assert tc.argv == (lake, "env", "lean") and tc.cwd == str(proj)


def test_broken_binary_is_reported_as_missing(tmp_path):
    lean = _exe(str(tmp_path), "lean", "#!/bin/sh\necho boom >&2\nexit 3\n")
    tc = runner.find_lean({"MMVERIFY_LEAN": lean})
    with pytest.raises(runner.LeanNotFound) as info:
        tc.version()
    assert "boom" in str(info.value)


def test_check_text_with_a_scripted_lean(tmp_path):
    """The plumbing end to end, with a stand-in binary that prints canned output."""
    script = "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'Lean (version 4.0.0-test)'; exit 0; fi\n" \
             "echo \"'N.t' depends on axioms: [propext]\"\n"
    lean = _exe(str(tmp_path), "lean", script)
    tc = runner.find_lean({"MMVERIFY_LEAN": lean})
    res = runner.check_text("namespace N\ntheorem t : 1 = 1 := by decide\n#print axioms t\nend N\n", tc)
    assert res.results["N.t"].status == runner.PROVED and res.version == "Lean (version 4.0.0-test)"
    assert res.counts()[runner.PROVED] == 1
