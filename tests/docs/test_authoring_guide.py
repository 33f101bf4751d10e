"""docs/authoring.md, followed step by step in an empty folder.

Fenced blocks of the guide are its steps, in order:

* ```` ```sh ````: each line is a command run from the folder (``mmverify`` and
  ``pytest`` through this interpreter); ``# exit N`` at the end of a line is
  the exit code it must give (0 otherwise);
* ```` ```<lang> file=PATH ````: the file written at PATH, in full; the artifact
  schema must differ from the draft ``schema-from`` wrote only where the guide
  says an author edits it (units, ranges, titles);
* ```` ```python source=PATH ````: a file of the project, shown verbatim;
* ```` ```text ````: lines that the preceding commands printed.

The walk ends with the task's contracts passing, so the guide stays true.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
GUIDE = REPO / "docs" / "authoring.md"
FENCE = re.compile(r"^```([A-Za-z]*)([^\n]*)\n(.*?)^```[ \t]*$", re.S | re.M)
EDITABLE = {"x-unit", "x-range", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "title", "description"}


def steps() -> list[tuple[str, dict[str, str], str]]:
    out = []
    for lang, info, body in FENCE.findall(GUIDE.read_text(encoding="utf-8")):
        attrs = dict(kv.split("=", 1) for kv in info.split() if "=" in kv)
        out.append((lang, attrs, body))
    return out


def _argv(line: str) -> tuple[list[str], int]:
    command, _, comment = line.partition("#")
    m = re.fullmatch(r"\s*exit (\d+)\s*", comment) if comment else None
    argv = shlex.split(command)
    if argv[0] == "mmverify":
        argv = [sys.executable, "-m", "mmverify", *argv[1:]]
    elif argv[0] == "pytest":
        argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *argv[1:]]
    else:
        raise AssertionError(f"the guide runs only mmverify and pytest, not {argv[0]!r}")
    return argv, int(m.group(1)) if m else 0


def _shape(node):
    if isinstance(node, dict):
        return {k: _shape(v) for k, v in node.items() if k not in EDITABLE}
    if isinstance(node, list):
        return [_shape(v) for v in node]
    return node


def test_guide_has_every_step():
    kinds = [(lang, tuple(sorted(attrs))) for lang, attrs, _ in steps()]
    assert ("sh", ()) in kinds and ("python", ("source",)) in kinds and ("text", ()) in kinds
    commands = " ".join(body for lang, _, body in steps() if lang == "sh")
    for needed in ("mmverify new-task", "mmverify schema-from", "mmverify audit --anchors", "mmverify attack",
                   "pytest --mmverify-anchors"):
        assert needed in commands


def test_follow_the_guide(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "MMVERIFY_ANCHORS"}
    printed = ""
    ran_contracts = False
    for lang, attrs, body in steps():
        if lang == "sh":
            printed = ""
            for line in filter(str.strip, body.splitlines()):
                argv, want = _argv(line)
                done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
                assert done.returncode == want, (
                    f"{line!r} exited {done.returncode}, the guide says {want}\n{done.stdout}\n{done.stderr}")
                printed += done.stdout
                ran_contracts |= "--mmverify-anchors" in line and argv[2] == "pytest"
        elif lang == "text":
            lines = [ln.strip() for ln in printed.splitlines()]
            for want in filter(str.strip, body.splitlines()):
                assert want.strip() in lines, f"the guide shows {want.strip()!r}; the command printed:\n{printed}"
        elif "file" in attrs:
            target = tmp_path / attrs["file"]
            if target.name == "artifact.schema.json":
                draft = json.loads(target.read_text(encoding="utf-8"))
                assert "TODO(author)" in json.dumps(draft), "the schema step follows schema-from's draft"
                assert _shape(json.loads(body)) == _shape(draft), "the guide's schema edits more than units/ranges"
            assert target.parent.is_dir(), f"{attrs['file']}: the guide writes into a folder it did not create"
            target.write_text(body, encoding="utf-8")
        elif "source" in attrs:
            assert (REPO / attrs["source"]).read_text(encoding="utf-8") == body, \
                f"{attrs['source']} differs from the guide's copy"
    assert ran_contracts, "the guide must end by running the task's contracts"
    final = (tmp_path / "mytasks").iterdir()
    assert [p.name for p in final] == ["example-river-pen"]


def test_guide_replay_is_the_tasks():
    from mmverify.replay import load_module

    task = json.loads(next(body for lang, attrs, body in steps() if attrs.get("file", "").endswith("task.json")))
    assert load_module(task["replay"]).TASK_ID == task["id"] == "example-river-pen"
