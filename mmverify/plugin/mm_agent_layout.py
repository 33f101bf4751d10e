"""Reading an MM-Agent run folder as MM-Agent writes it.

Design notes: docs/architecture.md, `mmverify/plugin/mm_agent_layout.py`.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from mmverify.reading.artifact import ArtifactError, parse_bytes

MAX_SOLUTION_BYTES = 64 * 1024 * 1024
MAX_SCRIPT_BYTES = 4 * 1024 * 1024
MAX_SCRIPTS = 200
MAX_LISTED = 50
MAX_WALK_FILES = 20000
RESULTS_SUFFIX = ".results.json"
TIMESTAMP = re.compile(r"_\d{8}-\d{6}$")
SCRIPT = re.compile(r"^main([1-9][0-9]{0,3})\.py$")

# statuses of a task entry
EntryStatus = Literal["passed", "failed", "no_code", "unmatched", "ambiguous"]
PASSED: EntryStatus = "passed"        # task_code matches code/main<k>.py and is_pass is true
FAILED: EntryStatus = "failed"        # matched, but the code never passed (is_pass false, execution_result None)
NO_CODE: EntryStatus = "no_code"      # the entry has no task_code (MM-Agent writes none without a dataset)
UNMATCHED: EntryStatus = "unmatched"  # task_code matches no code/main<k>.py
AMBIGUOUS: EntryStatus = "ambiguous"  # task_code matches several scripts, or several entries match one script


@dataclass
class Entry:
    """One element of the solution's ``tasks`` list."""
    position: int                     # 1-based place in ``tasks`` (the order the run solved them)
    status: EntryStatus
    number: int | None = None         # k of code/main<k>.py
    description: str | None = None
    code: str | None = None
    is_pass: Any = None
    execution_result: str | None = None
    solution_interpretation: str | None = None
    matches: tuple[int, ...] = ()     # every k whose script matches (for ambiguous entries)

    @property
    def label(self) -> str:
        return f"task {self.number}" if self.number is not None else f"tasks[{self.position - 1}]"


@dataclass
class Run:
    root: str
    solution_path: str | None = None
    solution_error: dict | None = None
    solution_keys: tuple[str, ...] = ()
    entries: list[Entry] = field(default_factory=list)
    scripts: dict[int, str] = field(default_factory=dict)     # k -> script text
    orphan_scripts: tuple[int, ...] = ()                      # scripts no entry matches
    notes: list[str] = field(default_factory=list)

    @property
    def has_code(self) -> bool:
        return bool(self.scripts) or any(e.code is not None for e in self.entries)

    def script_rel(self, k: int) -> str:
        return f"code/main{k}.py"

    def results_rel(self, k: int) -> str:
        return f"code/main{k}{RESULTS_SUFFIX}"


def _regular_file(path: str) -> bool:
    return os.path.isfile(path) and not os.path.islink(path)


def find_solution(root: str) -> tuple[str | None, str | None]:
    """``json/<task>.json`` of a run folder: the file named after the folder
    (``<task>_<timestamp>`` -> ``<task>.json``), else the only JSON file there.
    Returns (path, None) or (None, why not)."""
    jdir = os.path.join(root, "json")
    if not os.path.isdir(jdir) or os.path.islink(jdir):
        return None, "no json/ folder: not an MM-Agent run folder (MMAgent/output/<method>/<task>_<timestamp>/)"
    names = sorted(n for n in os.listdir(jdir) if n.endswith(".json") and _regular_file(os.path.join(jdir, n)))
    task_name = TIMESTAMP.sub("", os.path.basename(os.path.normpath(os.path.abspath(root))))
    if task_name + ".json" in names:
        return os.path.join(jdir, task_name + ".json"), None
    if len(names) == 1:
        return os.path.join(jdir, names[0]), None
    if not names:
        return None, "json/ holds no solution file (MM-Agent writes json/<task>.json after its first subtask)"
    return None, f"json/ holds {len(names)} JSON files and none is named after the run folder: pass --solution FILE"


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _normal(code: str) -> str:
    return "\n".join(line.rstrip() for line in code.replace("\r\n", "\n").strip().split("\n"))


def read_scripts(root: str) -> tuple[dict[int, str], list[str]]:
    """``code/main<k>.py`` texts by k, and notes on scripts that could not be read."""
    cdir = os.path.join(root, "code")
    out: dict[int, str] = {}
    notes: list[str] = []
    if not os.path.isdir(cdir) or os.path.islink(cdir):
        return out, notes
    for name in sorted(os.listdir(cdir)):
        m = SCRIPT.match(name)
        full = os.path.join(cdir, name)
        if not m or not _regular_file(full):
            continue
        if len(out) >= MAX_SCRIPTS:
            notes.append(f"more than {MAX_SCRIPTS} scripts in code/: the rest were not read")
            break
        try:
            with open(full, "rb") as fh:
                raw = fh.read(MAX_SCRIPT_BYTES + 1)
        except OSError as exc:
            notes.append(f"code/{name}: cannot read: {exc.strerror}")
            continue
        if len(raw) > MAX_SCRIPT_BYTES:
            notes.append(f"code/{name}: larger than {MAX_SCRIPT_BYTES} bytes, not read")
            continue
        out[int(m.group(1))] = raw.decode("utf-8", errors="replace")
    return out, notes


def parse_entries(solution: Any) -> tuple[list[Entry], list[str]]:
    """The ``tasks`` entries of a solution (status still to be decided) and notes."""
    if not isinstance(solution, dict):
        return [], ["the solution JSON is not an object"]
    tasks = solution.get("tasks")
    if not isinstance(tasks, list):
        return [], ["the solution JSON has no 'tasks' list"]
    out, notes = [], []
    for i, item in enumerate(tasks, 1):
        if not isinstance(item, dict):
            notes.append(f"tasks[{i - 1}] is not an object: skipped")
            continue
        code = item.get("task_code")
        out.append(Entry(position=i, status=NO_CODE if "task_code" not in item else UNMATCHED,
                         description=_text(item.get("task_description")),
                         code=code if isinstance(code, str) else None,
                         is_pass=item.get("is_pass"),
                         execution_result=_text(item.get("execution_result")),
                         solution_interpretation=_text(item.get("solution_interpretation"))))
    return out, notes


def match_entries(entries: list[Entry], scripts: dict[int, str]) -> tuple[int, ...]:
    """Give every entry with code its number k (``task_code`` equal to
    ``code/main<k>.py``, exactly or up to line-end whitespace) and its status.
    Returns the numbers of scripts no entry matches."""
    exact = {k: text for k, text in scripts.items()}
    loose = {k: _normal(text) for k, text in scripts.items()}
    claimed: dict[int, list[Entry]] = {}
    for e in entries:
        if e.status == NO_CODE:
            continue
        if e.code is None:
            e.status = UNMATCHED
            continue
        ks = tuple(k for k, t in sorted(exact.items()) if t == e.code)
        if not ks:
            n = _normal(e.code)
            ks = tuple(k for k, t in sorted(loose.items()) if t == n)
        e.matches = ks
        if len(ks) == 1:
            claimed.setdefault(ks[0], []).append(e)
            e.number = ks[0]
        e.status = UNMATCHED if not ks else AMBIGUOUS if len(ks) > 1 else FAILED
    for k, es in claimed.items():
        if len(es) > 1:
            for e in es:
                e.status, e.number, e.matches = AMBIGUOUS, None, (k,)
    for e in entries:
        if e.number is not None:
            e.status = PASSED if e.is_pass is True else FAILED
    used = {e.number for e in entries if e.number is not None} | {k for e in entries for k in e.matches}
    return tuple(k for k in sorted(scripts) if k not in used)


def read_run(root: str, solution_file: str | None = None) -> Run:
    """Everything the adapter needs from a run folder, without reading any results file."""
    run = Run(root=root)
    path, why = (solution_file, None) if solution_file else find_solution(root)
    run.solution_path = path
    if path is None:
        run.solution_error = {"code": "no_solution", "message": why}
    else:
        try:
            with open(path, "rb") as fh:
                raw = fh.read(MAX_SOLUTION_BYTES + 1)
            solution = parse_bytes(raw, source=path, max_bytes=MAX_SOLUTION_BYTES, max_depth=64).data
            run.entries, notes = parse_entries(solution)
            run.notes += notes
            if isinstance(solution, dict):
                run.solution_keys = tuple(k for k in ("problem_background", "problem_requirement",
                                                      "problem_analysis", "tasks") if k in solution)
        except ArtifactError as exc:
            run.solution_error = exc.as_dict()
        except OSError as exc:
            run.solution_error = {"code": "unreadable", "message": f"cannot read: {exc.strerror}"}
    run.scripts, notes = read_scripts(root)
    run.notes += notes
    run.orphan_scripts = match_entries(run.entries, run.scripts)
    return run


def other_json_files(root: str, named: set[str]) -> tuple[list[str], int]:
    """JSON files under the run folder (relative paths) other than ``named``:
    the files no convention names. At most MAX_LISTED are returned, with the total."""
    found: list[str] = []
    total = 0
    seen = 0
    for cur, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not os.path.islink(os.path.join(cur, d)))
        for n in sorted(files):
            seen += 1
            if seen > MAX_WALK_FILES:
                return found, total
            if not n.lower().endswith(".json"):
                continue
            rel = os.path.relpath(os.path.join(cur, n), root).replace(os.sep, "/")
            if rel in named:
                continue
            total += 1
            if len(found) < MAX_LISTED:
                found.append(rel)
    return found, total
