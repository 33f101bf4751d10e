"""The shared batch engine (mmverify.batch.engine): the time cap on any thread,
chunk planning, and the lock that keeps two runs off one output file."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import pytest
from hypothesis import given, strategies as st

from tests.helpers.hostile import oracle_bytes
from mmverify.batch import engine
from mmverify.tasks import load_all

TASKS = load_all()


def _in_thread(fn):
    box = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            box["error"] = exc

    t = threading.Thread(target=run)
    t.start()
    t.join(30)
    assert not t.is_alive()
    return box


def test_time_cap_off_the_main_thread_interrupts_and_repeats():
    """A worker thread (a Dask worker runs chunks on one): the cap still ends
    a busy block, even when the first timeout is swallowed."""
    def busy():
        swallowed = []
        t0 = time.monotonic()
        try:
            with engine.time_cap(0.2):
                while time.monotonic() - t0 < 10:
                    try:
                        while time.monotonic() - t0 < 10:
                            pass
                    except engine.ScoreTimeout:
                        if swallowed:
                            raise
                        swallowed.append(1)
        except engine.ScoreTimeout:
            return time.monotonic() - t0, swallowed
        return None

    box = _in_thread(busy)
    assert "error" not in box and box["value"] is not None
    elapsed, swallowed = box["value"]
    assert swallowed and elapsed < 5


def test_time_cap_off_the_main_thread_leaves_nothing_behind():
    """A block that ends in time: no timeout arrives after it."""
    def quick():
        with engine.time_cap(0.05):
            pass
        t0 = time.monotonic()
        while time.monotonic() - t0 < 0.4:
            pass
        return "done"

    assert _in_thread(quick) == {"value": "done"}


@given(st.lists(st.sampled_from("abcd"), max_size=60), st.integers(1, 9), st.one_of(st.none(), st.integers(1, 7)))
def test_chunks_hold_every_item_once_and_one_group_each(groups, pieces, max_chunk):
    chunks = engine.chunks_by_group(groups, lambda g: g, pieces, max_chunk)
    flat = sorted(i for c in chunks for i, _ in c)
    assert flat == list(range(len(groups)))
    assert all(c and len({g for _, g in c}) == 1 for c in chunks)
    assert all(len(c) <= max_chunk for c in chunks) if max_chunk else True
    for g in set(groups):
        n = groups.count(g)
        bound = max(pieces, -(-n // max_chunk)) if max_chunk else pieces
        assert sum(1 for c in chunks if c[0][1] == g) <= bound


@given(st.lists(st.sampled_from("abc"), max_size=40), st.integers(1, 8))
def test_planned_chunks_cover_every_item_once(groups, workers):
    chunks = engine.plan_chunks(groups, lambda g: g, workers)
    assert sorted(i for c in chunks for i, _ in c) == list(range(len(groups)))
    if workers == 1:   # one by one, in input order
        assert [c[0][0] for c in chunks] == list(range(len(groups))) and all(len(c) == 1 for c in chunks)


# ---------------------------------------------------------------- the lock

def _start_blocked_run(tmp_path, out):
    """A real `mmverify score --output` that holds the lock: its second input
    is a named pipe nobody writes yet, so it blocks reading it."""
    tasks = TASKS[:3]
    paths = []
    for t in tasks:
        p = tmp_path / f"{t.id}_a.json"
        p.write_bytes(oracle_bytes(t.directory))
        paths.append(str(p))
    fifo = str(tmp_path / f"{tasks[0].id}_pipe.json")
    os.mkfifo(fifo)
    paths.insert(1, fifo)
    args = [sys.executable, "-m", "mmverify", "score", *paths, "--output", str(out)]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:       # the first row is written: the lock is held
        if out.exists() and out.read_bytes().count(b"\n") >= 1:
            break
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.02)
    return proc, args, fifo, tasks[0]


def _feed(fifo, data):
    with open(fifo, "wb") as fh:   # blocks until the reader opens it
        fh.write(data)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs POSIX named pipes")
def test_second_run_on_one_output_refuses_then_waits(tmp_path):
    out = tmp_path / "out.jsonl"
    first, args, fifo, task = _start_blocked_run(tmp_path, out)
    try:
        second = subprocess.run(args, capture_output=True, text=True, timeout=120)
        assert second.returncode == 2 and "Traceback" not in second.stderr
        assert "another run is writing to" in second.stderr and "--wait" in second.stderr
        assert str(first.pid) in second.stderr
        waiting = subprocess.Popen(args + ["--wait"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1.0)
        assert waiting.poll() is None                       # queued behind the first run
        _feed(fifo, oracle_bytes(task.directory))
        assert first.wait(120) == 0, first.communicate()
        # the waiting run now holds the lock; its pipe read needs a writer again
        _feed(fifo, oracle_bytes(task.directory))
        w_out, w_err = waiting.communicate(timeout=120)
    finally:
        for p in (first,):
            if p.poll() is None:
                p.kill()
    assert waiting.returncode == 0, w_err
    # the second run rescored only the pipe (its bytes cannot be known without reading)
    assert "reused" in w_err
    rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [r["batch"]["input"] for r in rows] == args[4:-2]
    assert len({r["batch"]["key"] for r in rows}) == len(rows) == 4
