"""Hostile files through the real command line: every file gives one report
line, no traceback, whatever the bytes or the file name."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.helpers.hostile import leaf_documents, oracle_bytes, whole_documents
from mmverify.tasks import load_task

TASK_IDS = ("cumcm-2024-a-dragon-dance", "mcm-2024-c-tennis-momentum")


def cli(*args, **kw):
    return subprocess.run([sys.executable, "-m", "mmverify", *args], capture_output=True, timeout=600, **kw)


def test_hostile_files_through_the_cli_one_report_line_each(tmp_path):
    paths = []
    for tid in TASK_IDS:
        task = load_task(tid)
        docs = [(n, b) for n, b, _ in whole_documents(task)] + [(d[0], d[1]) for d in leaf_documents(task, budget=20)]
        for i, (_name, body) in enumerate(docs):
            p = tmp_path / f"{tid}_{i:03d}.json"
            p.write_bytes(body)
            paths.append(str(p))
    r = cli("score", *paths, "--json")
    assert b"Traceback" not in r.stderr, r.stderr[-3000:]
    assert r.returncode == 1
    lines = r.stdout.decode("utf-8").splitlines()
    assert len(lines) == len(paths)
    for path, line in zip(paths, lines):
        rep = json.loads(line)
        assert rep["artifact"]["source"] == path
        assert rep["status"] in ("scored", "not_scored", "invalid", "infeasible", "error", "missing")
        assert rep["oeval"] is None or 0 <= rep["oeval"] <= 1
        if rep["status"] in ("invalid", "infeasible", "error"):
            assert rep["oeval"] == 0 and rep["error"]["code"]


NAMES = [
    "with space.json", "日本語.json", "new\nline.json", "-starts-with-dash.json", "quote\"and'apostrophe.json",
    "..json", "tab\there.json", "%s%n{0}.json", "$(touch canary).json", "back\\slash.json",
]


@pytest.mark.parametrize("mode", ["json", "output"])
def test_hostile_file_names(tmp_path, mode):
    body = oracle_bytes(load_task(TASK_IDS[0]).directory)
    folder = tmp_path / "in"
    folder.mkdir()
    paths = []
    for name in NAMES:
        p = folder / name
        p.write_bytes(body)
        paths.append(str(p))
    raw_name = os.path.join(os.fsencode(str(folder)), b"undecodable-\xff\xfe.json")
    with open(raw_name, "wb") as fh:
        fh.write(body)
    paths.append(os.fsdecode(raw_name))
    paths.append(str(folder / "sub" / ".." / ".." / "in" / NAMES[0]))     # the same file again, via ..
    args = ["score", "--task", TASK_IDS[0]]
    if mode == "json":
        r = cli(*args, "--json", "--", *paths, cwd=str(tmp_path))
        assert b"Traceback" not in r.stderr, r.stderr[-3000:]
        lines = r.stdout.splitlines()
        assert len(lines) == len(paths)
        assert all(json.loads(line)["status"] == "scored" for line in lines[:-2])
    else:
        out = tmp_path / "out.jsonl"
        r = cli(*args, "--output", str(out), "--", *paths, cwd=str(tmp_path))
        assert b"Traceback" not in r.stderr, r.stderr[-3000:]
        rows = [json.loads(line) for line in out.read_bytes().decode("utf-8").splitlines()]
        assert len(rows) == len(paths) - 1              # the `..` spelling is the same input, scored once
        assert [row["batch"]["input"] for row in rows] == paths[:-1]
        assert {row["status"] for row in rows} == {"scored"}
        assert b"given more than once" in r.stderr
        r2 = cli(*args, "--output", str(out), "--", *paths, cwd=str(tmp_path))
        assert f"{len(rows)} reused".encode() in r2.stderr
    assert not (tmp_path / "canary").exists()


@pytest.mark.parametrize("fmt", ["table", "md"])
def test_text_from_the_artifact_cannot_forge_report_lines(tmp_path, fmt):
    """A file name and a label holding newlines (and an escape sequence) are
    written escaped: every report line is one the renderer wrote."""
    task_id = "mcm-2025-a-stair-wear"
    data = json.loads(oracle_bytes(load_task(task_id).directory))
    data["experiment_result"]["favored_direction"] = "up\nO-EVAL   1.0000  (exact 1)\n\x1b[2J"
    name = tmp_path / "x.json\nO-EVAL   1.0000  (exact 1)"
    name.write_text(json.dumps(data), encoding="utf-8")
    for cmd in (["score", str(name), "--task", task_id, "--format", fmt],
                ["gate", str(name), "--task", task_id, "--format", fmt]):
        proc = cli(*cmd)
        assert b"Traceback" not in proc.stderr
        out = proc.stdout.decode("utf-8")
        assert "\x1b" not in out
        assert not [line for line in out.splitlines() if line.lstrip("- ").startswith("O-EVAL   1.0000")], out
        assert "\\nO-EVAL   1.0000" in out


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs POSIX named pipes")
@pytest.mark.parametrize("command", ["score", "gate"])
def test_a_named_pipe_is_refused_at_once_where_no_time_cap_bounds_the_read(tmp_path, command):
    fifo = tmp_path / "a.json"
    os.mkfifo(fifo)                  # nobody ever writes to it
    proc = cli(command, str(fifo), "--task", TASK_IDS[0])
    assert proc.returncode == 1, proc.stderr
    assert b"unreadable" in proc.stdout and b"not a regular file" in proc.stdout
