"""End to end through the real CLI: `mmverify score` on a small real task."""
import json
import os
import subprocess
import sys

import pytest

from tests.helpers.taskfactory import speed_task


def run(*args, env=None):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "mmverify", *args], capture_output=True, text=True, env=e,
                          timeout=120)


@pytest.fixture()
def anchors(tmp_path):
    return speed_task(str(tmp_path / "anchors"))


def write(tmp_path, name, text):
    f = tmp_path / name
    f.write_bytes(text if isinstance(text, bytes) else text.encode())
    return str(f)


def test_oracle_scores_one_with_table_json_md(tmp_path, anchors):
    oracle = os.path.join(anchors, "t-speed", "oracle.json")
    for fmt in ("table", "md"):
        r = run("score", oracle, "--anchors", anchors, "--format", fmt)
        assert r.returncode == 0, r.stderr
        assert "1.0000" in r.stdout
    r = run("score", oracle, "--anchors", anchors, "--json")
    rep = json.loads(r.stdout)
    assert rep["oeval"] == 1.0 and rep["oeval_exact"] == "1" and rep["status"] == "scored"
    assert rep["schema_version"] == "mmverify.report/1"


def test_overshoot_within_a_band_never_costs_points(tmp_path, anchors):
    # speed 1.3 > anchor 1.246266 and pitch 0.38 < anchor 0.4, both within one band (12 %)
    art = write(tmp_path, "a.json", json.dumps({"result": {"speed": 1.3, "pitch": 0.38, "handles": 224}}))
    rep = json.loads(run("score", art, "--task", "t-speed", "--anchors", anchors, "--json").stdout)
    assert rep["oeval"] == 1.0 and rep["ruleset"] == "verified"


def test_paper_ruleset_pays_any_overshoot_and_verified_does_not(tmp_path, anchors):
    art = write(tmp_path, "a.json", json.dumps({"result": {"speed": 1.9, "pitch": 0.31, "handles": 224}}))
    paper = json.loads(run("score", art, "--task", "t-speed", "--anchors", anchors, "--json",
                           "--rules", "paper").stdout)
    assert paper["oeval"] == 1.0 and paper["ruleset"] == "paper" and not paper["rules"]
    verified = json.loads(run("score", art, "--task", "t-speed", "--anchors", anchors, "--json").stdout)
    assert verified["oeval"] < 0.5
    assert {r["rule"] for r in verified["rules"]} == {"unverified_improvement"}


def test_fail_under(tmp_path, anchors):
    art = write(tmp_path, "a.json", json.dumps({"result": {"speed": 1.0, "pitch": 0.4, "handles": 224}}))
    r = run("score", art, "--task", "t-speed", "--anchors", anchors, "--fail-under", "0.9")
    assert r.returncode == 1 and "below --fail-under" in r.stderr
    assert run("score", art, "--task", "t-speed", "--anchors", anchors, "--fail-under", "0.1").returncode == 0


HOSTILE = {
    "malformed": (b'{"result": {"speed": 1.2', "malformed_json"),
    "nan": (b'{"result": {"speed": NaN}}', "non_finite_number"),
    "dupes": (b'{"result": {"speed": 1.2, "speed": 1.3}}', "duplicate_key"),
    "huge": (b'{"result": {"speed": 1e400}}', "number_out_of_range"),
    "deep": (('{"result": {"x":' + '{"a":' * 50 + "1" + "}" * 51 + "}").encode(), "too_deep"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_artifacts_give_error_reports_not_tracebacks(tmp_path, anchors, name):
    raw, code = HOSTILE[name]
    art = write(tmp_path, f"{name}.json", raw)
    r = run("score", art, "--task", "t-speed", "--anchors", anchors, "--json")
    assert "Traceback" not in r.stderr
    assert r.returncode == 1
    rep = json.loads(r.stdout)
    assert rep["status"] == "error" and rep["oeval"] == 0 and rep["error"]["code"] == code


def test_boolean_where_number_expected_zeroes_that_field_only(tmp_path, anchors):
    art = write(tmp_path, "b.json", json.dumps({"result": {"speed": True, "pitch": 0.4, "handles": 224}}))
    r = run("score", art, "--task", "t-speed", "--anchors", anchors, "--json")
    rep = json.loads(r.stdout)
    assert r.returncode == 0 and rep["status"] == "scored" and 0 < rep["oeval"] < 1
    (err,) = rep["schema_errors"]
    assert err["field"] == "result.speed" and err["problem"] == "true is a boolean; expected a number"
    assert err["effect"]["kind"] == "local" and err["effect"]["scored_fields"] == ["result.speed"]
    speed = next(m for m in rep["metrics"] if m["path"] == "result.speed")
    assert speed["read_status"] == "missing" and all(p["r"] in (0, None) for p in speed["papers"])
    r = run("score", art, "--task", "t-speed", "--anchors", anchors, "--json", "--strict-schema")
    rep = json.loads(r.stdout)
    assert r.returncode == 1 and rep["status"] == "invalid" and rep["oeval"] == 0


def test_missing_file_and_unknown_task(tmp_path, anchors):
    r = run("score", str(tmp_path / "none.json"), "--task", "t-speed", "--anchors", anchors, "--json")
    assert r.returncode == 1 and json.loads(r.stdout)["status"] == "missing"
    r = run("score", str(tmp_path / "none.json"), "--task", "nope", "--anchors", anchors)
    assert r.returncode == 3 and "task error" in r.stderr
    art = write(tmp_path, "anon.json", "{}")
    r = run("score", art, "--anchors", anchors)
    assert r.returncode == 4 and "--task" in r.stderr


def test_many_artifacts_one_row_each(tmp_path, anchors):
    good = os.path.join(anchors, "t-speed", "oracle.json")
    bad = write(tmp_path, "t-speed_bad.json", b"{")
    anon = write(tmp_path, "anon.json", "{}")
    r = run("score", good, bad, anon, "--anchors", anchors, "--json")
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert [row["status"] for row in rows] == ["scored", "error", "error"]
    assert rows[2]["error"]["code"] == "task_not_inferred"
    assert r.returncode == 4


def test_reports_are_byte_identical_across_processes_and_hash_seeds(tmp_path, anchors):
    art = write(tmp_path, "a.json", json.dumps({"result": {"speed": 1.1, "pitch": 0.45, "handles": 223}}))
    outs = {run("score", art, "--task", "t-speed", "--anchors", anchors, "--json",
                env={"PYTHONHASHSEED": seed}).stdout for seed in ("0", "1", "12345")}
    assert len(outs) == 1


def test_a_command_freezes_the_heap_at_exit_once(monkeypatch, tmp_path, anchors):
    # every object is frozen when the process ends (the interpreter's last
    # collection then skips them), registered once however many commands run
    import atexit
    import gc

    from click.testing import CliRunner

    from mmverify import cli, clibase

    registered = []
    monkeypatch.setattr(clibase, "_EXIT_FREEZE", [])
    monkeypatch.setattr(atexit, "register", lambda fn, *a, **k: registered.append(fn))
    runner = CliRunner()
    for _ in range(2):
        assert runner.invoke(cli.main, ["tasks", "--anchors", anchors]).exit_code == 0
    assert registered == [gc.freeze]
    # a process that ends frozen has written and flushed everything
    out = tmp_path / "reward"
    oracle = os.path.join(anchors, "t-speed", "oracle.json")
    r = run("verify", "--task", "t-speed", "--artifact", oracle, "--reward-dir", str(out), "--anchors", anchors)
    assert r.returncode == 0, r.stderr
    assert json.loads((out / "reward.json").read_text()) == {"reward": 1.0}
    assert json.loads((out / "reward-details.json").read_text())["status"] == "scored"
    assert r.stdout.startswith("reward 1.000000 (scored)")
