"""Board in batch mode: per-row results file, interrupted and resumed runs,
per-artifact time cap."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from mmverify.cli import main
from mmverify.batch.manifest import read_manifest, score_manifest, load_tasks_for
from tests.helpers.board_kit import speed_artifact, synthetic_anchors, write, write_manifest

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs POSIX named pipes")


@pytest.fixture(scope="module")
def anchors(tmp_path_factory):
    return synthetic_anchors(str(tmp_path_factory.mktemp("batch-anchors") / "anchors"))


def make_run(folder, speeds=("1.2", "1.1", "1.0")):
    rows = []
    for e, base_speed in zip(("base", "alpha", "beta"), speeds):
        for t in ("t-a", "t-b", "t-c"):
            for s in range(3):
                p = f"runs/{e}/{s}/{t}_result.json"
                write(os.path.join(folder, p), speed_artifact(f"{base_speed}{s}"))
                rows.append({"entry": e, "task": t, "seed": s, "artifact": p, "cost_usd": 0.5})
    return write_manifest(os.path.join(folder, "m.jsonl"), rows), rows


def out_lines(path):
    with open(path, encoding="utf-8") as fh:
        return [json.loads(x) for x in fh]


def test_interrupted_batch_completes_on_second_run(tmp_path, anchors):
    """Kill a real `python -m mmverify board --output` part way (it blocks on a
    named pipe posing as row 16's artifact), tear its last line, then run again:
    every row present exactly once, and the same board as an uninterrupted run."""
    folder = str(tmp_path)
    manifest, rows = make_run(folder)
    blocked = 15                                    # 0-based: rows 0..14 finish first
    fifo = os.path.join(folder, rows[blocked]["artifact"])
    os.remove(fifo)
    os.mkfifo(fifo)
    out = os.path.join(folder, "results.jsonl")
    args = [sys.executable, "-m", "mmverify", "board", manifest, "--baseline", "base", "--anchors", anchors,
            "--format", "json", "--output", out, "--bootstrap", "300"]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        n = 0
        while time.monotonic() < deadline:
            if os.path.exists(out):
                with open(out, "rb") as fh:
                    n = fh.read().count(b"\n")
                if n >= blocked:
                    break
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.02)
        assert n == blocked
        time.sleep(0.2)
        assert proc.poll() is None                  # still blocked on the pipe
    finally:
        proc.kill()
        proc.communicate()
    assert proc.returncode != 0
    first = out_lines(out)
    assert len(first) == blocked and [r["line"] for r in first] == list(range(1, blocked + 1))
    with open(out, "ab") as fh:                     # a write torn by the kill
        fh.write(b'{"schema_version":"mmverify.board-row/1","key":"[\\"cell\\",')
    os.remove(fifo)
    write(fifo, speed_artifact("1.17"))

    r2 = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert r2.returncode == 0, r2.stderr
    assert f"{len(rows) - blocked} scored now, {blocked} reused, 1 torn/unreadable lines dropped" in r2.stderr
    final = out_lines(out)
    assert [r["line"] for r in final] == list(range(1, len(rows) + 1))
    assert len({r["key"] for r in final}) == len(rows)
    assert [(r["entry"], r["task"], r["seed"]) for r in final] == [(x["entry"], x["task"], x["seed"]) for x in rows]

    # the same board and the same results file as one uninterrupted run
    fresh_out = os.path.join(folder, "fresh.jsonl")
    fresh = subprocess.run(args[:-4] + ["--output", fresh_out, "--bootstrap", "300"], capture_output=True,
                           text=True, timeout=300)
    assert fresh.returncode == 0, fresh.stderr
    assert fresh.stdout == r2.stdout
    with open(out, "rb") as a, open(fresh_out, "rb") as b:
        assert a.read() == b.read()

    # a third run has nothing left to do
    r3 = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert f"0 scored now, {len(rows)} reused" in r3.stderr and r3.stdout == r2.stdout


def test_resume_rescores_changed_artifacts_and_drops_stale_rows(tmp_path, anchors):
    folder = str(tmp_path)
    manifest, rows = make_run(folder)
    out = os.path.join(folder, "results.jsonl")
    man = read_manifest(manifest, ["t-a", "t-b", "t-c"])
    tasks = load_tasks_for(man, anchors)
    res1, st1 = score_manifest(man, tasks, output=out)
    assert (st1.scored, st1.reused) == (len(rows), 0)
    # change one artifact, drop one row from the manifest
    write(os.path.join(folder, rows[4]["artifact"]), speed_artifact("5"))          # now breaks the gate
    manifest = write_manifest(manifest, rows[:-1])
    man = read_manifest(manifest, ["t-a", "t-b", "t-c"])
    res2, st2 = score_manifest(man, tasks, output=out)
    assert (st2.scored, st2.reused) == (1, len(rows) - 2)
    lines = out_lines(out)
    assert len(lines) == len(rows) - 1 and len({r["key"] for r in lines}) == len(rows) - 1
    assert lines[4]["status"] == "infeasible" and lines[4]["sha256"] != res1[4]["sha256"]
    assert lines == res2


def test_time_cap_makes_an_error_row(tmp_path, anchors):
    folder = str(tmp_path)
    manifest, rows = make_run(folder)
    fifo = os.path.join(folder, rows[2]["artifact"])
    os.remove(fifo)
    os.mkfifo(fifo)                                 # opening it blocks: no writer
    out = str(tmp_path / "out.jsonl")
    t0 = time.monotonic()
    r = CliRunner().invoke(main, ["board", manifest, "--baseline", "base", "--anchors", anchors, "--format", "json",
                                  "--timeout-s", "0.3", "--output", out], catch_exceptions=False)
    assert time.monotonic() - t0 < 30
    assert r.exit_code == 1                          # listed as a row problem
    board = json.loads(r.stdout)
    assert [(p["line"], p["code"]) for p in board["row_problems"]] == [(3, "timeout")]
    lines = out_lines(out)
    assert len(lines) == len(rows)
    assert lines[2]["status"] == "error" and lines[2]["error"]["code"] == "timeout"
    base = board["entries"][[e["entry"] for e in board["entries"]].index("base")]
    cell = next(t for t in base["tasks"] if t["task"] == "t-a")["cells"][2]
    assert cell["status"] == "error" and cell["oeval_exact"] == "0"
    # a timed-out row is tried again on resume
    os.remove(fifo)
    write(fifo, speed_artifact("1.2"))
    r = CliRunner().invoke(main, ["board", manifest, "--baseline", "base", "--anchors", anchors, "--format", "json",
                                  "--timeout-s", "5", "--output", out], catch_exceptions=False)
    assert r.exit_code == 0
    assert "1 scored now, 26 reused" in r.stderr
    assert out_lines(out)[2]["status"] == "scored"
