"""Batch scoring (`mmverify score ... --output FILE.jsonl`, mmverify.batch.score_files):
one line per input, fsynced per line, resumable after a crash (a torn last
line is redone), never dropping an input, and a per-artifact time cap."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.helpers.hostile import oracle_bytes, write_batch_inputs
from mmverify.batch import score_files as batch
from mmverify.tasks import load_all, load_task

TASKS = load_all()
DRAGON = "cumcm-2024-a-dragon-dance"


def cli(*args, timeout=300, **kw):
    return subprocess.run([sys.executable, "-m", "mmverify", *args], capture_output=True, text=True,
                          timeout=timeout, **kw)


def rows(path):
    with open(path, "rb") as fh:
        raw = fh.read()
    assert raw.endswith(b"\n") or raw == b""
    return [json.loads(line) for line in raw.decode("utf-8").splitlines()]


def inputs_of(path):
    return [r["batch"]["input"] for r in rows(path)]


@pytest.fixture()
def small(tmp_path):
    """A dozen inputs: oracles, perturbed oracles, a broken file, an anonymous
    file, a missing file."""
    paths = write_batch_inputs(str(tmp_path / "in"), 8, TASKS[:4])
    broken = tmp_path / "in" / f"{DRAGON}_broken.json"
    broken.write_bytes(b'{"experiment_result": ')
    anon = tmp_path / "in" / "nobody.json"
    anon.write_bytes(b"{}")
    return paths + [str(broken), str(anon), str(tmp_path / "in" / f"{DRAGON}_missing.json")]


def test_one_row_per_input_in_order(tmp_path, small):
    out = str(tmp_path / "out.jsonl")
    outcomes, stats = batch.run_batch(small, out)
    assert stats.scored == len(small) and stats.reused == 0
    got = rows(out)
    assert [r["batch"]["input"] for r in got] == small
    assert len({r["batch"]["key"] for r in got}) == len(small)
    by = {r["batch"]["input"]: r for r in got}
    assert by[small[-3]]["error"]["code"] == "malformed_json"
    assert by[small[-2]]["error"]["code"] == "task_not_inferred" and by[small[-2]]["status"] == "error"
    assert by[small[-1]]["status"] == "missing"
    for r in got:
        assert r["schema_version"] == "mmverify.report/1"
        assert r["oeval"] is None or 0 <= r["oeval"] <= 1
        assert r["batch"]["schema"] == batch.ROW_SCHEMA


def test_second_run_reuses_everything_and_changes_nothing(tmp_path, small):
    out = str(tmp_path / "out.jsonl")
    batch.run_batch(small, out)
    first = open(out, "rb").read()
    _, stats = batch.run_batch(small, out)
    assert stats.reused == len(small) and stats.scored == 0
    assert open(out, "rb").read() == first


def test_resume_after_partial_run_is_byte_identical(tmp_path, small):
    full = str(tmp_path / "full.jsonl")
    batch.run_batch(small, full)
    out = str(tmp_path / "out.jsonl")
    batch.run_batch(small[:5], out)
    _, stats = batch.run_batch(small, out)
    assert stats.reused == 5 and stats.scored == len(small) - 5
    assert open(out, "rb").read() == open(full, "rb").read()


@pytest.mark.parametrize("damage", ["torn", "garbage", "foreign", "binary", "empty_line"])
def test_damaged_output_lines_are_dropped_and_redone(tmp_path, small, damage):
    full = str(tmp_path / "full.jsonl")
    batch.run_batch(small, full)
    good = open(full, "rb").read()
    lines = good.split(b"\n")[:-1]
    out = tmp_path / "out.jsonl"
    if damage == "torn":
        body = b"\n".join(lines[:4]) + b"\n" + lines[4][: len(lines[4]) // 2]     # killed mid-write
    elif damage == "garbage":
        body = b"\n".join(lines[:4]) + b"\nnot json at all\n" + lines[5] + b"\n"
    elif damage == "foreign":
        body = b"\n".join(lines[:4]) + b'\n{"status": "scored", "oeval": 1.0}\n'
    elif damage == "binary":
        body = b"\n".join(lines[:4]) + b"\n\xff\xfe\x00\n"
    else:
        body = b"\n".join(lines[:4]) + b"\n\n"
    out.write_bytes(body)
    _, stats = batch.run_batch(small, str(out))
    assert stats.dropped_lines >= 1
    assert out.read_bytes() == good
    assert inputs_of(str(out)) == small


def test_changed_input_is_scored_again(tmp_path, small):
    out = str(tmp_path / "out.jsonl")
    batch.run_batch(small, out)
    with open(small[0], "wb") as fh:
        fh.write(b"{")
    _, stats = batch.run_batch(small, out)
    assert stats.scored == 1 and stats.reused == len(small) - 1
    got = rows(out)
    assert [r["batch"]["input"] for r in got] == small
    assert got[0]["error"]["code"] == "malformed_json"


def test_duplicate_inputs_are_one_input(tmp_path, small):
    out = str(tmp_path / "out.jsonl")
    twice = [small[0], small[1], small[0], os.path.join(os.path.dirname(small[1]), ".", os.path.basename(small[1]))]
    outcomes, stats = batch.run_batch(twice, out)
    assert inputs_of(out) == small[:2]
    assert len(stats.duplicates) == 2


def test_anchor_change_invalidates_reuse(tmp_path):
    from tests.helpers.taskfactory import speed_task

    anchors = speed_task(str(tmp_path / "anchors"))
    art = tmp_path / "t-speed_a.json"
    art.write_text(json.dumps({"result": {"speed": 1.1, "pitch": 0.45, "handles": 224}}))
    out = str(tmp_path / "out.jsonl")
    batch.run_batch([str(art)], out, anchors_dir=anchors)
    _, stats = batch.run_batch([str(art)], out, anchors_dir=anchors)
    assert stats.reused == 1
    speed_task(anchors, band={"rel": "0.5"})          # the anchors change
    from mmverify.tasks.load import _load_task_cached

    _load_task_cached.cache_clear()
    _, stats = batch.run_batch([str(art)], out, anchors_dir=anchors)
    assert stats.scored == 1 and stats.reused == 0


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # an alarm may land in a gc callback
def test_time_cap_gives_a_timeout_row_and_is_retried(tmp_path, monkeypatch, small):
    from mmverify.pipeline import evaluate

    real = evaluate.score_artifact

    def slow(*a, **k):
        t0 = time.monotonic()
        while time.monotonic() - t0 < 5:
            pass
        return real(*a, **k)

    out = str(tmp_path / "out.jsonl")
    monkeypatch.setattr(evaluate, "score_artifact", slow)
    t0 = time.monotonic()
    outcomes, _ = batch.run_batch(small[:2], out, timeout_s=0.2)
    assert time.monotonic() - t0 < 9          # two 5 s sleeps cut at 0.2 s each
    assert [r["error"]["code"] for r in rows(out)] == ["timeout", "timeout"]
    assert rows(out)[0]["task"]["id"] == small[0].rsplit("/", 1)[1].split("_run")[0]
    monkeypatch.setattr(evaluate, "score_artifact", real)
    _, stats = batch.run_batch(small[:2], out)
    assert stats.scored == 2
    assert all(r["status"] != "error" or r["error"]["code"] != "timeout" for r in rows(out))


def test_engine_error_is_an_error_row_and_the_batch_goes_on(tmp_path, monkeypatch, small):
    from mmverify.pipeline import evaluate

    real = evaluate.score_artifact
    calls = []

    def flaky(task, artifact, **k):
        calls.append(1)
        if len(calls) == 2:
            raise ZeroDivisionError("simulated engine bug")
        return real(task, artifact, **k)

    monkeypatch.setattr(evaluate, "score_artifact", flaky)
    out = str(tmp_path / "out.jsonl")
    batch.run_batch(small[:4], out)
    got = rows(out)
    assert len(got) == 4 and got[1]["error"]["code"] == "internal_error"
    assert "ZeroDivisionError" in got[1]["error"]["message"]
    monkeypatch.setattr(evaluate, "score_artifact", real)
    _, stats = batch.run_batch(small[:4], out)
    assert stats.scored == 1 and stats.reused == 3


def test_real_slow_artifact_hits_the_cli_time_cap(tmp_path):
    """A genuinely slow artifact (thousands of gated list items) through the
    CLI: an error row with code timeout, the next input still scored."""
    task = load_task("cumcm-2024-b-production-decision")
    data = json.loads(oracle_bytes(task.directory))
    item = data["experiment_result"]["q1_sampling"][0]
    data["experiment_result"]["q1_sampling"] = [item] * 20_000
    slow = tmp_path / f"{task.id}_slow.json"
    slow.write_text(json.dumps(data))
    quick = "mcm-2024-a-lamprey"   # an oracle without replay: tens of milliseconds
    fast = tmp_path / f"{quick}_ok.json"
    fast.write_bytes(oracle_bytes(load_task(quick).directory))
    out = tmp_path / "out.jsonl"
    t0 = time.monotonic()
    # the cap leaves the ordinary oracle ample room even on a loaded machine;
    # the slow artifact needs a few seconds of CPU
    r = cli("score", str(slow), str(fast), "--output", str(out), "--timeout-s", "1")
    assert "Traceback" not in r.stderr, r.stderr
    assert time.monotonic() - t0 < 60
    got = rows(str(out))
    assert [g["status"] for g in got] == ["error", "scored"]
    assert got[0]["error"]["code"] == "timeout" and got[0]["oeval"] == 0
    assert r.returncode == 1
    r = cli("score", str(slow), "--json", "--timeout-s", "0.5")
    assert r.returncode == 1 and json.loads(r.stdout)["error"]["code"] == "timeout"


def test_cli_summary_and_exit_codes(tmp_path, small):
    out = tmp_path / "out.jsonl"
    r = cli("score", *small, "--output", str(out))
    assert "Traceback" not in r.stderr
    assert r.returncode == 4                       # one input's task cannot be told
    assert f"{len(small)} row(s) in {out}" in r.stderr and "scored now" in r.stderr
    assert r.stdout == ""
    assert inputs_of(str(out)) == small
    r = cli("score", *small[:2], "--output", str(out))
    assert "2 reused" in r.stderr and "not kept" in r.stderr
    assert inputs_of(str(out)) == small[:2]


def test_interrupted_batch_completes_on_second_run(tmp_path, monkeypatch):
    """~200 artifacts through `python -m mmverify score --output`; SIGKILL once
    the first rows are on disk; a second run completes with every input present
    exactly once, and the file equals an uninterrupted run's byte for byte."""
    paths = write_batch_inputs(str(tmp_path / "in"), 200, TASKS)
    out = tmp_path / "out.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "mmverify", "score", *paths, "--output", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    seen = 0
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if out.exists():
                seen = out.read_bytes().count(b"\n")
                if seen >= 5:
                    break
            time.sleep(0.005)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    partial = out.read_bytes().count(b"\n")
    assert 5 <= partial < 200, partial

    r = cli("score", *paths, "--output", str(out))
    assert "Traceback" not in r.stderr, r.stderr
    assert "reused" in r.stderr
    got = rows(str(out))
    assert len(got) == 200
    assert [g["batch"]["input"] for g in got] == paths           # each input exactly once, in order
    assert len({g["batch"]["key"] for g in got}) == 200

    fresh = tmp_path / "fresh.jsonl"
    monkeypatch.setattr(os, "fsync", lambda fd: None)     # the content is compared here, not durability
    batch.run_batch(paths, str(fresh))
    assert out.read_bytes() == fresh.read_bytes()


def test_hundred_megabyte_input_is_rejected_without_reading(tmp_path):
    """A 100 MB file: rejected by size before any byte is read; peak traced
    memory stays far below the file size."""
    import tracemalloc

    big = tmp_path / f"{DRAGON}_big.json"
    with open(big, "wb") as fh:
        fh.write(b'{"x": "')
        fh.seek(100 * 1024 * 1024 - 2)
        fh.write(b'"}')
    out = str(tmp_path / "out.jsonl")
    tracemalloc.start()
    try:
        batch.run_batch([str(big)], out)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 5 * 1024 * 1024, peak
    assert rows(out)[0]["error"]["code"] == "too_large"


def test_unbounded_stream_is_read_only_up_to_the_cap(tmp_path):
    """A device with no size (reads forever): read stops at the cap."""
    import tracemalloc

    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    tracemalloc.start()
    try:
        o = batch.score_one("/dev/zero", task_id=DRAGON, max_bytes=1024 * 1024, fingerprint="")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert o.row["error"]["code"] == "too_large"
    assert peak < 4 * 1024 * 1024, peak


def test_cli_memory_on_a_hundred_megabyte_file(tmp_path):
    """The same through the CLI in a fresh process: its peak RSS with a 100 MB
    input is within a few MB of its peak RSS with a tiny input."""
    script = ("import resource, sys, subprocess\n"
              "r = subprocess.run([sys.executable, '-m', 'mmverify', 'score', sys.argv[1], '--task', sys.argv[2],"
              " '--json'], capture_output=True)\n"
              "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    big = tmp_path / "big.json"
    with open(big, "wb") as fh:
        fh.write(os.urandom(1024) * (100 * 1024))      # real bytes on disk, 100 MB
    small = tmp_path / "small.json"
    small.write_bytes(b"{}")
    rss = {}
    for name, f in (("big", big), ("small", small)):
        r = subprocess.run([sys.executable, "-c", script, str(f), DRAGON], capture_output=True, text=True,
                           timeout=300)
        rss[name] = int(r.stdout.strip())                 # KiB on Linux
    assert rss["big"] - rss["small"] < 20 * 1024, rss


def test_unwritable_output_is_a_usage_error(tmp_path, small):
    r = cli("score", small[0], "--output", str(tmp_path / "no" / "such" / "dir" / "out.jsonl"))
    assert r.returncode == 2 and "cannot write the output file" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # an alarm may land in a gc callback
def test_time_cap_survives_a_swallowed_alarm():
    """An alarm can be lost: raised inside a garbage-collector callback or a
    ``__del__``, Python prints the exception and drops it (seen under
    hypothesis, which times the collector). Simulated here by code that
    swallows the first ScoreTimeout: the cap repeats, so the block still ends."""
    swallowed = []
    t0 = time.monotonic()
    with pytest.raises(batch.ScoreTimeout):
        with batch.time_cap(0.2):
            while time.monotonic() - t0 < 10:
                try:
                    while time.monotonic() - t0 < 10:
                        pass
                except batch.ScoreTimeout:
                    if swallowed:
                        raise
                    swallowed.append(time.monotonic() - t0)
    assert swallowed and time.monotonic() - t0 < 5
