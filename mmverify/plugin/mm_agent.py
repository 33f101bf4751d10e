"""Adapter for MM-Agent-style runs: build a task artifact from named numbers.

MM-Agent (usail-hkust/LLM-MM-Agent) writes, per run, a solution JSON whose
subtasks hold prose, formulas, code and the raw execution output, but no
structured numeric answer. This adapter never reads numbers out of prose.
Instead the agent's scripts write **results files** and the adapter assembles
them into one artifact for the task, validates it, and says exactly which
required, scored and gated fields could not be found.

Run folder model (what is supported; every key is optional)
-----------------------------------------------------------
The solution JSON is ``RUN_DIR/solution.json``, else the JSON file in
``RUN_DIR/json/`` (MM-Agent's own layout: ``json/<name>.json``), or a file
given explicitly. Its shape::

    {"problem": "...",                      # or problem_background / problem_requirement
     "subtasks": [                          # or "tasks" (MM-Agent's key)
       {"id": 1,                            # or "task_id"; default: position + 1
        "description": "...",               # or task_description
        "formulas": "...",                  # or preliminary_formulas / mathematical_formulas
        "code": "...",                      # or task_code
        "execution_output": "...",          # or execution_result (MM-Agent's key)
        "solution": "...",                  # or solution_interpretation / subtask_outcome_analysis / answer / result
        "script_path": "code/main1.py",     # or script; relative to RUN_DIR
        "workdir": "q1/"}]}                 # or work_dir; relative to RUN_DIR

Results files (the convention)
------------------------------
Next to each subtask's script the script writes a flat JSON object mapping
artifact field paths to values::

    {"experiment_result.q5.max_head_speed_mps": 1.246266,
     "experiment_result.q1.handles": 224,
     "experiment_result.q4.plan": "B"}

Accepted file names: ``<script-stem>.results.json`` beside the script (MM-Agent
puts every script in one ``code/`` folder: ``code/main1.py`` ->
``code/main1.results.json``) or ``results.json`` in the subtask's work folder.
Every file named ``results.json`` or ``*.results.json`` under ``RUN_DIR`` is
read (hidden folders and symbolic links are skipped). Keys are field paths
(dots and ``[i]`` indices, no ``[*]``); values are JSON numbers, strings
(labels), booleans, or arrays/objects for list- and object-valued fields.
Keys starting with ``_`` are comments and ignored. Files are parsed with the
same strict parser as artifacts (exact decimals, no NaN, no duplicate keys).

Two files giving different values for one field is a **conflict**: the field
is left out and reported, never resolved by guessing.

``--from-stdout`` (opt-in, low trust)
-------------------------------------
Lines of a subtask's raw execution output of the exact form
``<field path> = <JSON number>`` fill fields that no results file gives, and
only for a path the artifact schema describes as numeric. A path printed with
two different values is ambiguous and not used. Each such value is listed in
the artifact's top-level ``"_provenance": {path: "stdout"}`` and in the report.

Filled from the task, not the agent: ``problem_id`` (when the schema has it)
and ``task_id`` (when the schema allows extra top-level keys), so that
``mmverify score`` can tell the task; and an empty object for every required
container (``q2``, ...) a partial run left out, so that the fields it did
answer are scored (the missing fields inside are listed, and score 0).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Mapping

from mmverify import paths as P
from mmverify.artifact import ArtifactError, json_type, parse_bytes

ADAPT_VERSION = "mmverify.adapt/1"
RESULTS_NAME = "results.json"
RESULTS_SUFFIX = ".results.json"
MAX_RESULTS_FILES = 1000
MAX_WALK_DEPTH = 8
MAX_SOLUTION_BYTES = 64 * 1024 * 1024
PROVENANCE_KEY = "_provenance"

_ALIASES = {
    "id": ("id", "task_id", "subtask_id"),
    "description": ("description", "task_description"),
    "formulas": ("formulas", "preliminary_formulas", "mathematical_formulas"),
    "code": ("code", "task_code"),
    "execution_output": ("execution_output", "execution_result", "stdout"),
    "solution": ("solution", "solution_interpretation", "subtask_outcome_analysis", "answer", "result"),
    "script_path": ("script_path", "script"),
    "workdir": ("workdir", "work_dir"),
}
_STDOUT_LINE = re.compile(
    r"^[ \t]*(?P<name>[A-Za-z_][A-Za-z0-9_\-]*(?:\.[A-Za-z_][A-Za-z0-9_\-]*|\[\d+\])*)"
    r"[ \t]*=[ \t]*(?P<num>-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)[ \t]*$")


@dataclass
class Subtask:
    index: int
    id: str
    description: str | None = None
    formulas: Any = None
    code: str | None = None
    execution_output: str | None = None
    solution: str | None = None
    script_path: str | None = None
    workdir: str | None = None


@dataclass
class AdaptResult:
    artifact: dict
    report: dict
    complete: bool = field(default=False)


# ------------------------------------------------------------------- reading

def _inside(base: str, rel: Any) -> str | None:
    """``rel`` resolved under ``base``; None when it is not a string or leaves ``base``."""
    if not isinstance(rel, str) or not rel or "\x00" in rel:
        return None
    full = os.path.realpath(os.path.join(base, rel))
    root = os.path.realpath(base)
    return full if full == root or full.startswith(root + os.sep) else None


def find_solution(run_dir: str) -> tuple[str | None, list[str]]:
    """The solution JSON of a run folder and any other candidates that were passed over."""
    if os.path.isfile(run_dir):
        return run_dir, []
    direct = os.path.join(run_dir, "solution.json")
    if os.path.isfile(direct):
        return direct, []
    jdir = os.path.join(run_dir, "json")
    cands = sorted(os.path.join(jdir, n) for n in os.listdir(jdir)
                   if n.endswith(".json") and not n.endswith(RESULTS_SUFFIX)) if os.path.isdir(jdir) else []
    if not cands:
        return None, []
    return cands[0], cands[1:]


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n".join(value)
    return None


def parse_subtasks(solution: Any) -> list[Subtask]:
    """Subtasks of a solution JSON, tolerant of missing keys and of MM-Agent's names."""
    if not isinstance(solution, dict):
        return []
    raw = solution.get("subtasks", solution.get("tasks"))
    if not isinstance(raw, list):
        return []
    out = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict):
            continue
        got: dict[str, Any] = {}
        for name, keys in _ALIASES.items():
            for k in keys:
                if k in item and item[k] is not None:
                    got[name] = item[k]
                    break
        sid = got.get("id", i + 1)
        sid = str(sid) if isinstance(sid, (str, int, Decimal)) and not isinstance(sid, bool) else str(i + 1)
        out.append(Subtask(index=i, id=sid, description=_text(got.get("description")),
                           formulas=got.get("formulas"), code=_text(got.get("code")),
                           execution_output=_text(got.get("execution_output")),
                           solution=_text(got.get("solution")),
                           script_path=got.get("script_path") if isinstance(got.get("script_path"), str) else None,
                           workdir=got.get("workdir") if isinstance(got.get("workdir"), str) else None))
    return out


def _subtask_files(run_dir: str, st: Subtask) -> list[str]:
    """Results files a subtask points at (only inside the run folder)."""
    out = []
    script = _inside(run_dir, st.script_path) if st.script_path else None
    if script is None and not st.script_path and not st.workdir and st.id.isdigit():
        script = _inside(run_dir, os.path.join("code", f"main{st.id}.py"))  # MM-Agent's layout
    if script is not None:
        stem = os.path.splitext(os.path.basename(script))[0]
        out.append(os.path.join(os.path.dirname(script), stem + RESULTS_SUFFIX))
    wd = _inside(run_dir, st.workdir) if st.workdir else None
    if wd is not None:
        out.append(os.path.join(wd, RESULTS_NAME))
    return [f for f in out if os.path.isfile(f)]


def discover_results(run_dir: str) -> list[str]:
    """Every ``results.json`` / ``*.results.json`` under ``run_dir`` (no symlinks, no hidden folders)."""
    found: list[str] = []
    root_depth = os.path.realpath(run_dir).count(os.sep)
    for cur, dirs, files in os.walk(run_dir, followlinks=False):
        depth = os.path.realpath(cur).count(os.sep) - root_depth
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and depth < MAX_WALK_DEPTH
                         and not os.path.islink(os.path.join(cur, d)))
        for n in sorted(files):
            full = os.path.join(cur, n)
            if (n == RESULTS_NAME or n.endswith(RESULTS_SUFFIX)) and not os.path.islink(full):
                found.append(full)
                if len(found) >= MAX_RESULTS_FILES:
                    return found
    return found


def read_results(file: str) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """The ``{path: value}`` pairs of one results file and the problems met reading it."""
    problems: list[dict[str, str]] = []
    try:
        with open(file, "rb") as fh:
            raw = fh.read(32 * 1024 * 1024 + 1)
        data = parse_bytes(raw, source=file).data
    except ArtifactError as exc:
        return {}, [{"code": exc.code, "message": exc.message}]
    except OSError as exc:
        return {}, [{"code": "unreadable", "message": f"cannot read: {exc.strerror}"}]
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key.startswith("_"):
            continue
        try:
            path = P.parse_path(key)
        except P.PathError as exc:
            problems.append({"code": "bad_path", "message": f"{key!r}: {exc}"})
            continue
        if path.is_list:
            problems.append({"code": "bad_path", "message": f"{key!r}: [*] is not allowed in a results file; "
                                                            "write one key per index or the whole list"})
            continue
        out[path.text] = value
    return out, problems


# ----------------------------------------------------------------- building

class _Conflict(Exception):
    pass


def _set(data: dict, path: P.Path, value: Any) -> None:
    """Set ``value`` at ``path``, creating objects and lists; raise _Conflict when a
    different value (or a non-container) is already there."""
    cur: Any = data
    segs = path.segments
    for k, seg in enumerate(segs):
        last = k == len(segs) - 1
        nxt_is_index = not last and isinstance(segs[k + 1], int)
        if isinstance(seg, str):
            if not isinstance(cur, dict):
                raise _Conflict(f"{P._render(segs[:k])} is not an object")
            if last:
                if seg in cur and not _same(cur[seg], value):
                    raise _Conflict("already set to a different value")
                cur[seg] = value
                return
            if seg not in cur or cur[seg] is _HOLE:
                cur[seg] = [] if nxt_is_index else {}
            cur = cur[seg]
        else:
            if not isinstance(cur, list):
                raise _Conflict(f"{P._render(segs[:k])} is not a list")
            while len(cur) <= seg:
                cur.append(_HOLE)
            if last:
                if cur[seg] is not _HOLE and not _same(cur[seg], value):
                    raise _Conflict("already set to a different value")
                cur[seg] = value
                return
            if cur[seg] is _HOLE:
                cur[seg] = [] if nxt_is_index else {}
            cur = cur[seg]


class _Hole:
    def __repr__(self) -> str:
        return "<hole>"


_HOLE = _Hole()


def _same(a: Any, b: Any) -> bool:
    """Equal values of the same JSON type (``1.0`` and ``1`` are equal numbers)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return type(a) is type(b) and a == b


def _holes(node: Any, where: str = "") -> list[str]:
    out = []
    if isinstance(node, dict):
        for k, v in node.items():
            out += _holes(v, f"{where}.{k}" if where else k)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            if v is _HOLE:
                out.append(f"{where}[{i}]")
            else:
                out += _holes(v, f"{where}[{i}]")
    return out


def _fill_holes(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _fill_holes(v) for k, v in node.items()}
    if isinstance(node, list):
        return [None if v is _HOLE else _fill_holes(v) for v in node]
    return node


# ------------------------------------------------------------------ checking

def missing_required(schema: Mapping[str, Any], data: Any) -> list[str]:
    """Every required field path the artifact lacks, including the required fields
    nested under a missing required object (the full list of what is needed)."""
    out: list[str] = []

    def join(prefix: str, key: str) -> str:
        return f"{prefix}.{key}" if prefix else key

    def walk(sub: Any, node: Any, prefix: str, present: bool) -> None:
        if not isinstance(sub, dict):
            return
        props = sub.get("properties", {}) if isinstance(sub.get("properties"), dict) else {}
        if not present:
            for k in sub.get("required", []) or []:
                out.append(join(prefix, k))
                walk(props.get(k), None, join(prefix, k), False)
            return
        if isinstance(node, dict):
            for k in sub.get("required", []) or []:
                if k not in node:
                    out.append(join(prefix, k))
                    walk(props.get(k), None, join(prefix, k), False)
            for k, s in props.items():
                if k in node:
                    walk(s, node[k], join(prefix, k), True)
        elif isinstance(node, list):
            prefix_items = sub.get("prefixItems") if isinstance(sub.get("prefixItems"), list) else None
            for i, v in enumerate(node):
                s = prefix_items[i] if prefix_items and i < len(prefix_items) else sub.get("items")
                walk(s, v, f"{prefix}[{i}]", True)

    walk(schema, data, "", True)
    return out


def fill_containers(schema: Mapping[str, Any], data: Any, prefix: str = "") -> list[str]:
    """Add an empty object for every required property whose schema is an
    object and which ``data`` lacks (recursively, so nested required objects
    appear too). Only containers are added, never a value. Returns their paths."""
    added: list[str] = []
    if not isinstance(schema, dict) or not isinstance(data, dict):
        return added
    props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    for key in schema.get("required", []) or []:
        sub = props.get(key)
        if key not in data and isinstance(sub, dict) and sub.get("type") == "object":
            data[key] = {}
            added.append(f"{prefix}.{key}" if prefix else key)
    for key, sub in props.items():
        if isinstance(data.get(key), dict):
            added += fill_containers(sub, data[key], f"{prefix}.{key}" if prefix else key)
    return added


def _absent(data: Any, path: P.Path) -> str | None:
    """Why ``path`` cannot be read from ``data`` (None when it can)."""
    if path.is_list:
        found = P.items(data, path)
        if isinstance(found, P.Missing):
            return found.reason
        if not found:
            return "empty list"
        bad = [i for i, v in enumerate(found) if isinstance(v, P.Missing) or v is None]
        return f"{len(bad)} of {len(found)} item(s) lack it" if bad else None
    v = P.get(data, path)
    if isinstance(v, P.Missing):
        return v.reason
    return "null" if v is None else None


def _numeric_schema(sub: Mapping[str, Any] | None) -> bool:
    if not isinstance(sub, dict):
        return False
    t = sub.get("type")
    types = t if isinstance(t, list) else [t]
    return "number" in types or "integer" in types


# ------------------------------------------------------------------- adapter

def adapt_run(run_dir: str, task_id: Any, *, anchors_dir: str | None = None, from_stdout: bool = False,
              solution_file: str | None = None) -> AdaptResult:
    """Build the artifact of ``task_id`` from an MM-Agent run folder.

    Returns the artifact (a dict of exact values, ready for
    :func:`mmverify.plugin.exactjson.dumps_exact`) and a report saying where
    every field came from and what could not be found. Raises
    :class:`~mmverify.tasks.TaskLoadError` for an unknown task and
    :class:`FileNotFoundError` when ``run_dir`` does not exist.
    """
    from mmverify.plugin.selfcheck import public_task
    from mmverify.tasks import TaskSpec, load_task, schema_at
    from mmverify.validate import validate_artifact

    task = task_id if isinstance(task_id, TaskSpec) else load_task(task_id, anchors_dir)
    if not os.path.exists(run_dir):
        raise FileNotFoundError(f"run folder not found: {run_dir}")
    base = run_dir if os.path.isdir(run_dir) else os.path.dirname(os.path.abspath(run_dir))
    notes: list[str] = []

    # 1. the solution JSON (optional: results files alone are enough)
    sol_path, passed_over = (solution_file, []) if solution_file else find_solution(run_dir)
    solution_info: dict[str, Any] = {"path": sol_path, "subtasks": 0, "error": None}
    subtasks: list[Subtask] = []
    if passed_over:
        notes.append(f"several solution files in json/: used {os.path.basename(sol_path)}, "
                     f"not {', '.join(os.path.basename(p) for p in passed_over)} (pass --solution FILE)")
    if sol_path is None:
        notes.append("no solution JSON found (solution.json or json/*.json): results files only")
    else:
        try:
            with open(sol_path, "rb") as fh:
                raw = fh.read(MAX_SOLUTION_BYTES + 1)
            solution = parse_bytes(raw, source=sol_path, max_bytes=MAX_SOLUTION_BYTES, max_depth=64).data
            subtasks = parse_subtasks(solution)
            solution_info["subtasks"] = len(subtasks)
            if not subtasks:
                notes.append("the solution JSON has no subtasks ('subtasks' or 'tasks' list)")
        except ArtifactError as exc:
            solution_info["error"] = exc.as_dict()
        except OSError as exc:
            solution_info["error"] = {"code": "unreadable", "message": f"cannot read: {exc.strerror}"}

    # 2. results files: the ones subtasks point at, then every other one in the folder
    owner: dict[str, str] = {}
    ordered: list[str] = []
    for st in subtasks:
        for f in _subtask_files(base, st):
            real = os.path.realpath(f)
            if real not in owner:
                owner[real] = st.id
                ordered.append(f)
    for f in discover_results(base):
        real = os.path.realpath(f)
        if real not in owner:
            owner[real] = ""
            ordered.append(f)

    artifact: dict[str, Any] = {}
    sources: dict[str, dict[str, Any]] = {}
    conflicts: dict[str, list[dict[str, Any]]] = {}
    files_info = []
    for f in ordered:
        pairs, problems = read_results(f)
        rel = os.path.relpath(f, base)
        files_info.append({"path": rel, "subtask": owner.get(os.path.realpath(f)) or None,
                           "fields": len(pairs), "problems": problems})
        for key, value in pairs.items():
            if key in conflicts:
                conflicts[key].append({"value": _show(value), "file": rel})
                continue
            try:
                _set(artifact, P.parse_path(key), value)
            except _Conflict as exc:
                first = sources.get(key, {}).get("file")
                conflicts[key] = ([{"value": _show(P.get(artifact, key)), "file": first}] if first else []) + \
                    [{"value": _show(value), "file": rel, "problem": str(exc)}]
                continue
            sources.setdefault(key, {"source": "results", "file": rel})
    for key in conflicts:  # never resolved by guessing: the field is left out
        _remove(artifact, P.parse_path(key))
        sources.pop(key, None)

    # 3. opt-in: `path = number` lines of the raw execution output (low trust)
    stdout_used: list[dict[str, Any]] = []
    stdout_skipped: list[dict[str, Any]] = []
    if from_stdout:
        seen: dict[str, list[tuple[Decimal, str, str]]] = {}
        for st in subtasks:
            for lineno, line in enumerate((st.execution_output or "").splitlines(), 1):
                m = _STDOUT_LINE.match(line)
                if not m:
                    continue
                try:
                    path = P.parse_path(m.group("name"))
                except P.PathError:
                    continue
                if not _numeric_schema(schema_at(task.artifact_schema, path)):
                    continue
                try:
                    value = parse_bytes(b'{"v": ' + m.group("num").encode() + b"}", source="stdout").data["v"]
                except ArtifactError as exc:
                    stdout_skipped.append({"path": path.text, "subtask": st.id, "line": lineno,
                                           "reason": exc.message})
                    continue
                seen.setdefault(path.text, []).append((value, st.id, lineno))
        for key in sorted(seen):
            vals = seen[key]
            distinct = {v for v, _, _ in vals}
            if key in sources or key in conflicts:
                if key in sources and not any(_same(P.get(artifact, key), v) for v in distinct):
                    stdout_skipped.append({"path": key, "reason": "a results file gives this field; "
                                           f"stdout says {', '.join(sorted(_show(v) for v in distinct))}"})
                continue
            if len(distinct) > 1:
                stdout_skipped.append({"path": key, "reason": "ambiguous: printed with different values "
                                       + ", ".join(f"{_show(v)} (subtask {sid}, line {ln})" for v, sid, ln in vals)})
                continue
            value, sid, where = vals[0]
            try:
                _set(artifact, P.parse_path(key), value)
            except _Conflict as exc:
                stdout_skipped.append({"path": key, "reason": str(exc)})
                continue
            sources[key] = {"source": "stdout", "subtask": sid, "line": where}
            stdout_used.append({"path": key, "value": _show(value), "subtask": sid, "line": where})

    holes = _holes(artifact)
    artifact = _fill_holes(artifact)

    # 4. identity fields from the task (never numbers)
    props = task.artifact_schema.get("properties", {}) if isinstance(task.artifact_schema, dict) else {}
    extra_ok = task.artifact_schema.get("additionalProperties", True) is not False
    if "problem_id" in props and "problem_id" not in artifact and task.problem_id:
        artifact["problem_id"] = task.problem_id
        sources["problem_id"] = {"source": "task"}
    if "task_id" not in artifact and ("task_id" in props or extra_ok):
        artifact["task_id"] = task.id
        sources["task_id"] = {"source": "task"}
    if stdout_used:
        if extra_ok or PROVENANCE_KEY in props:
            artifact[PROVENANCE_KEY] = {u["path"]: "stdout" for u in stdout_used}
        else:
            notes.append(f"the schema forbids extra top-level keys: {PROVENANCE_KEY} is only in this report")

    # containers (objects) the schema requires but a partial run left out:
    # empty objects, never values, so the fields that are given stay scoreable
    added = fill_containers(task.artifact_schema, artifact)
    if added:
        notes.append("empty object(s) added for required container(s) the run left out: " + ", ".join(added))

    # 5. what is still missing
    req = missing_required(task.artifact_schema, artifact)
    metric_missing = []
    for m in task.metrics:
        why = _absent(artifact, m.path)
        if why:
            metric_missing.append({"metric": m.id, "path": m.path.text, "unit": m.unit, "why": why})
    gate_missing = []
    try:
        from mmverify.gates import compile_gates

        gates = compile_gates(public_task(task))
    except ImportError:  # pragma: no cover - the gate engine ships with the package
        gates = ()
    for g in gates:
        for path in g.inputs:
            why = _absent(artifact, path)
            if why:
                gate_missing.append({"gate": g.id, "path": path.text, "why": why})
    schema_errors = [e.as_dict() for e in validate_artifact(task.artifact_schema, artifact)]
    complete = not (req or metric_missing or gate_missing or schema_errors or conflicts or holes)

    report = {
        "schema_version": ADAPT_VERSION,
        "task": task.id,
        "run_dir": run_dir,
        "solution": solution_info,
        "results_files": files_info,
        "fields": {k: sources[k] for k in sorted(sources)},
        "conflicts": [{"path": k, "values": v} for k, v in sorted(conflicts.items())],
        "sparse_lists": holes,
        "from_stdout": {"enabled": from_stdout, "used": stdout_used, "skipped": stdout_skipped,
                        "trust": "low" if stdout_used else None},
        "missing_required": req,
        "missing_metric_fields": metric_missing,
        "missing_gate_fields": gate_missing,
        "schema_errors": schema_errors,
        "complete": complete,
        "notes": notes,
    }
    return AdaptResult(artifact=artifact, report=report, complete=complete)


def _remove(data: Any, path: P.Path) -> None:
    parent = P.get(data, P.Path("", path.segments[:-1])) if len(path.segments) > 1 else data
    last = path.segments[-1]
    if isinstance(parent, dict) and isinstance(last, str):
        parent.pop(last, None)
    elif isinstance(parent, list) and isinstance(last, int) and last < len(parent):
        parent[last] = _HOLE


def _show(value: Any) -> str:
    if isinstance(value, P.Missing):
        return "<absent>"
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, str):
        return value if len(value) <= 60 else value[:57] + "..."
    if isinstance(value, bool) or value is None:
        return {True: "true", False: "false", None: "null"}[value]
    return f"<{json_type(value)}>"


def render_report(report: dict) -> str:
    """Plain-text summary of an adapt report."""
    lines = [f"task      {report['task']}", f"run       {report['run_dir']}"]
    sol = report["solution"]
    lines.append(f"solution  {sol['path'] or '-'} ({sol['subtasks']} subtask(s))"
                 + (f"  ERROR {sol['error']['code']}: {sol['error']['message']}" if sol["error"] else ""))
    lines.append(f"results   {len(report['results_files'])} file(s)")
    for f in report["results_files"]:
        who = f" [subtask {f['subtask']}]" if f["subtask"] else ""
        lines.append(f"  {f['path']}{who}: {f['fields']} field(s)")
        for p in f["problems"]:
            lines.append(f"    problem {p['code']}: {p['message']}")
    n_res = sum(1 for v in report["fields"].values() if v["source"] == "results")
    lines.append(f"fields    {n_res} from results files, {len(report['from_stdout']['used'])} from stdout")
    for u in report["from_stdout"]["used"]:
        lines.append(f"  LOW TRUST (stdout) {u['path']} = {u['value']}  [subtask {u['subtask']}, line {u['line']}]")
    for s in report["from_stdout"]["skipped"]:
        lines.append(f"  stdout not used: {s['path']}: {s['reason']}")
    for c in report["conflicts"]:
        vals = ", ".join(f"{v['value']} ({v['file']})" for v in c["values"])
        lines.append(f"CONFLICT  {c['path']}: {vals} -- left out")
    for h in report["sparse_lists"]:
        lines.append(f"SPARSE    {h}: no value (written as null)")
    for p in report["missing_required"]:
        lines.append(f"MISSING   required field {p}")
    for m in report["missing_metric_fields"]:
        lines.append(f"MISSING   scored field {m['path']} [{m['unit']}] (metric {m['metric']}): {m['why']}")
    for g in report["missing_gate_fields"]:
        lines.append(f"MISSING   gated field {g['path']} (gate {g['gate']}): {g['why']}")
    for e in report["schema_errors"]:
        lines.append(f"SCHEMA    {e['field']}: {e['problem']}")
    for n in report["notes"]:
        lines.append(f"note      {n}")
    lines.append("complete  " + ("yes: every required, scored and gated field is present and the artifact "
                                  "validates" if report["complete"] else "NO: see the lines above"))
    return "\n".join(lines) + "\n"
