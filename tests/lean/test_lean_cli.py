"""``mmverify lean``: emit, the committed-file drift check, exit code 5 and its
message without Lean, and the check/mutate plumbing with a scripted stand-in
for the ``lean`` binary (real kernel runs live in test_lean_kernel.py)."""
from __future__ import annotations

import json
import os
import stat
import sys

import pytest
from tests.helpers.gatekit import run_cli

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ORACLE = os.path.join(ROOT, "anchors", "cumcm-2024-a-dragon-dance", "oracle.json")
TASK = "cumcm-2024-a-dragon-dance"

FAKE_LEAN = """#!{python}
# A stand-in for `lean FILE`: reports every `#print axioms NAME` as axiom-free,
# except theorems whose name contains FAIL_ME, which get a decide error.
import re, sys
if sys.argv[1] == "--version":
    print("Lean (version 4.0.0-fake)")
    sys.exit(0)
path = sys.argv[1]
ns, rc = [], 0
for no, line in enumerate(open(path, encoding="utf-8"), start=1):
    line = line.rstrip("\\n")
    m = re.match(r"namespace (\\S+)", line)
    if m: ns.append(m.group(1)); continue
    if line.startswith("end ") and ns: ns.pop(); continue
    m = re.match(r"theorem (\\S+) ", line)
    if m and "{fail}" in m.group(1):
        print(f"{{path}}:{{no}}:10: error: failed to reduce to 'true'"); rc = 1
    m = re.match(r"#print axioms (\\S+)", line)
    if m: print("'" + ".".join(ns + [m.group(1)]) + "' does not depend on any axioms")
sys.exit(rc)
"""


def fake_lean(folder, fail: str = "") -> str:
    path = os.path.join(folder, "lean")
    with open(path, "w") as fh:
        fh.write(FAKE_LEAN.format(python=sys.executable, fail=fail or "NO_THEOREM_IS_NAMED_THIS"))
    os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)
    return path


@pytest.fixture(scope="module")
def small_anchors(tmp_path_factory):
    """An anchors folder holding only the dragon-dance task (fast to emit)."""
    import shutil

    root = tmp_path_factory.mktemp("anchors")
    shutil.copytree(os.path.join(ROOT, "anchors", TASK), root / TASK)
    with open(os.path.join(ROOT, "anchors", "index.json"), encoding="utf-8") as fh:
        index = json.load(fh)
    index["tasks"] = [t for t in index["tasks"] if t["id"] == TASK]
    (root / "index.json").write_text(json.dumps(index))
    return str(root)


@pytest.fixture
def no_lean(tmp_path):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    return {"PATH": str(empty), "MMVERIFY_LEAN": ""}


@pytest.mark.parametrize("args", [["check", "--anchors"], ["check", ORACLE], ["mutate"]])
def test_without_lean_exit_5_naming_what_is_missing(no_lean, args):
    r = run_cli("lean", *args, env=no_lean)
    assert r.returncode == 5, r.stderr
    assert "no Lean 4 toolchain found" in r.stderr
    assert "missing:" in r.stderr and "MMVERIFY_LEAN" in r.stderr
    assert "elan" in r.stderr and "LeanProofs/lean-toolchain" in r.stderr


def test_mutate_list_needs_no_lean(no_lean):
    r = run_cli("lean", "mutate", "--list", env=no_lean)
    assert r.returncode == 0
    assert "flip_relation" in r.stdout and "proof_native_decide" in r.stdout


def test_emit_artifact_to_stdout_and_file(tmp_path):
    r = run_cli("lean", "emit", ORACLE, "--task", TASK)
    assert r.returncode == 0, r.stderr
    assert "theorem cumcm_2024_a_dragon_dance_q5_handle_speed_limit : " \
           "1246266 * 1604793 ≤ 2 * 1000000 * 1000000 := by decide" in r.stdout
    out = tmp_path / "x.lean"
    r = run_cli("lean", "emit", ORACLE, "-o", str(out))  # task inferred
    assert r.returncode == 0 and out.read_text().startswith("/-")


def test_emit_usage_errors(tmp_path):
    assert run_cli("lean", "emit", ORACLE, "--all").returncode == 2
    assert run_cli("lean", "emit", ORACLE, "--anchors").returncode == 2   # the deprecated bare switch
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    r = run_cli("lean", "emit", str(bad), "--task", TASK)
    assert r.returncode == 1 and "malformed_json" in r.stderr


def test_emit_anchors_then_check_for_drift(tmp_path, small_anchors):
    out = tmp_path / "LeanProofs"
    env = {"MMVERIFY_ANCHORS": small_anchors}
    r = run_cli("lean", "emit", "--anchors", "--out-dir", str(out), env=env)
    assert r.returncode == 0, r.stderr
    assert (out / "lean-toolchain").read_text().startswith("leanprover/lean4:v4.")
    assert "roots" in (out / "lakefile.toml").read_text()
    r = run_cli("lean", "emit", "--anchors", "--check", "--out-dir", str(out), env=env)
    assert r.returncode == 0 and "no drift" in r.stdout
    target = out / "Obligations" / "Cumcm2024ADragonDance.lean"
    target.write_text(target.read_text().replace("1604793", "1604794"))
    (out / "Obligations" / "Stale.lean").write_text("-- old\n")
    r = run_cli("lean", "emit", "--anchors", "--check", "--out-dir", str(out), env=env)
    assert r.returncode == 1
    assert "changed: Obligations/Cumcm2024ADragonDance.lean" in r.stdout
    assert "stale: Obligations/Stale.lean" in r.stdout
    r = run_cli("lean", "emit", "--anchors", "--out-dir", str(out), env=env)
    assert r.returncode == 0 and not (out / "Obligations" / "Stale.lean").exists()


def test_check_with_a_scripted_lean_agrees(tmp_path):
    lean = fake_lean(str(tmp_path))
    r = run_cli("lean", "check", ORACLE, "--task", TASK, "--json", env={"MMVERIFY_LEAN": lean})
    assert r.returncode == 0, r.stdout + r.stderr
    rep = json.loads(r.stdout)
    assert rep["agree"] is True and rep["lean_version"] == "Lean (version 4.0.0-fake)"
    # the oracle's failing instances that are obligations (the claims the replay
    # refutes), each confirmed by the kernel as a violation
    from mmverify.reading.artifact import parse_file
    from mmverify.lean_gen import project
    from mmverify.tasks import load_task

    task = load_task(TASK)
    f = project.obligations_for_artifact(task, parse_file(ORACLE).data, "a", "A")
    assert rep["counts"]["refuted"] == f.refuted_expected and rep["counts"]["proved"] == f.proved_expected
    assert rep["obligations"] == len(f.obligations)
    # what the kernel is credited with, and what it is not
    assert rep["kernel_decided"] == rep["obligations"]
    assert rep["tautologies"] == rep["tautologies_between_fields"] + rep["tautologies_against_a_constant"]
    assert 0 <= rep["tautology_share"] <= 1
    assert {"replay_vouched", "label_vouched", "unstated", "ms_per_obligation"} <= set(rep)
    assert rep["replay_vouched"] == sum(1 for v in f.vouched if v.kind == "replay")
    assert rep["tautologies"] == f.tautologies


def test_check_in_parallel_batches_merges_by_name(tmp_path, small_anchors):
    env = {"MMVERIFY_LEAN": fake_lean(str(tmp_path)), "MMVERIFY_ANCHORS": small_anchors}
    one = run_cli("lean", "check", "--anchors", "--json", env=env)
    two = run_cli("lean", "check", "--anchors", "--json", "-j", "3", env=env)
    assert one.returncode == 0 and two.returncode == 0, two.stderr
    a, b = json.loads(one.stdout), json.loads(two.stdout)
    assert a["lean_processes"] == 1 and b["lean_processes"] == 3
    assert a["counts"] == b["counts"] and a["obligations"] == b["obligations"] > 0
    assert sorted(r["theorem"] for r in a["rows"]) == sorted(r["theorem"] for r in b["rows"])


def test_check_reports_a_disagreement(tmp_path):
    lean = fake_lean(str(tmp_path), fail="handle_speed_limit")
    r = run_cli("lean", "check", ORACLE, "--task", TASK, env={"MMVERIFY_LEAN": lean})
    assert r.returncode == 1
    assert "DISAGREEMENTS (1)" in r.stdout and "q5.handle_speed_limit" in r.stdout
    assert "kernel-decided" in r.stdout and "vouched outside the kernel" in r.stdout
