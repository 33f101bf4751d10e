"""Adapter for MM-Agent runs: build a task artifact from the numbers its scripts saved.

MM-Agent (usail-hkust/LLM-MM-Agent) keeps, per run, a solution JSON of prose,
code and raw script output, but no structured numeric answer
(:mod:`mmverify.plugin.mm_agent_layout` describes the folder). The adapter
never guesses numbers from prose. The structured path:

1. ``mmverify adapt mm-agent --emit-prompt TASK`` prints a block for MM-Agent's
   code template (:mod:`mmverify.plugin.mm_agent_prompt`): the task's field
   paths with units, and a ``write_results`` function that saves
   ``{field path: value}`` to ``code/main<k>.results.json``.
2. After the run, :func:`adapt_run` matches every ``tasks`` entry to its
   ``code/main<k>.py`` by its ``task_code``, and reads
   ``code/main<k>.results.json`` of the entries whose code passed — and no
   other file. A results file is read only if the code that passed writes one
   (its text names ``results.json``); otherwise it is left from an earlier,
   failed attempt and is ignored.
3. A key the task's artifact schema does not describe is rejected and listed
   (also inside list and object values); every other JSON file in the run
   folder is ignored and listed. Two subtasks giving different values for one
   field is a conflict: the field is left out.
4. Opt-in (``from_text``): labelled numbers in ``execution_result`` and
   ``solution_interpretation``, by the task's label patterns
   (:mod:`mmverify.plugin.mm_agent_text`), only for fields no results file
   gives; each one is marked low-trust in the artifact's ``_provenance`` and
   in the report.

The task fills ``problem_id`` (when the schema has it) and ``task_id`` (when
the schema allows extra top-level keys), so ``mmverify score`` can tell the task,
and an empty object for every required container (``q2``, ...) a partial run
left out, so that the fields it did answer are scored (the missing fields
inside are listed, and score 0).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Mapping

from mmverify import paths
from mmverify.artifact import ArtifactError, json_type, parse_bytes
from mmverify.plugin import mm_agent_layout

ADAPT_VERSION = "mmverify.adapt/2"
MAX_RESULTS_BYTES = 32 * 1024 * 1024
PROVENANCE_KEY = "_provenance"


@dataclass
class AdaptResult:
    artifact: dict
    report: dict
    complete: bool = field(default=False)


# ------------------------------------------------------------------- reading

def _unknown_inside(sub: Any, value: Any, prefix: str) -> list[str]:
    """Paths inside an object or list value that the schema ``sub`` does not describe."""
    out: list[str] = []
    if not isinstance(sub, dict):
        return out
    if isinstance(value, dict) and isinstance(sub.get("properties"), dict):
        props = sub["properties"]
        for k, v in value.items():
            if k not in props:
                out.append(f"{prefix}.{k}")
            else:
                out += _unknown_inside(props[k], v, f"{prefix}.{k}")
    elif isinstance(value, list):
        prefix_items = sub.get("prefixItems") if isinstance(sub.get("prefixItems"), list) else []
        for i, v in enumerate(value):
            s = prefix_items[i] if i < len(prefix_items) else sub.get("items")
            out += _unknown_inside(s, v, f"{prefix}[{i}]")
    return out


def read_results(file: str, schema: Mapping[str, Any]) -> tuple[dict[str, Any], list[dict[str, str]],
                                                                  list[dict[str, str]]]:
    """The accepted ``{path: value}`` pairs of one results file, the problems met
    reading it, and the keys rejected because the task schema does not know them."""
    from mmverify.tasks import schema_at

    problems: list[dict[str, str]] = []
    rejected: list[dict[str, str]] = []
    try:
        with open(file, "rb") as fh:
            raw = fh.read(MAX_RESULTS_BYTES + 1)
        data = parse_bytes(raw, source=file).data
    except ArtifactError as exc:
        return {}, [{"code": exc.code, "message": exc.message}], []
    except OSError as exc:
        return {}, [{"code": "unreadable", "message": f"cannot read: {exc.strerror}"}], []
    if not isinstance(data, dict):
        return {}, [{"code": "not_an_object", "message": "a results file is one JSON object"}], []
    out: dict[str, Any] = {}
    for key, value in data.items():
        try:
            path = paths.parse_path(key)
        except paths.PathError as exc:
            rejected.append({"key": _show(key), "reason": f"not a field path: {exc}"})
            continue
        if path.is_list:
            rejected.append({"key": key, "reason": "[*] is not allowed: write the whole list or one index"})
            continue
        if path.segments[0] == "$replay":
            rejected.append({"key": key, "reason": "$replay values are derived by mmverify, never handed in"})
            continue
        sub = schema_at(schema, path)
        if sub is None:
            rejected.append({"key": key, "reason": "the task's artifact schema does not describe this field"})
            continue
        inner = _unknown_inside(sub, value, path.text)
        if inner:
            rejected.append({"key": key, "reason": "the value holds keys the schema does not describe: "
                             + ", ".join(inner[:10]) + (" ..." if len(inner) > 10 else "")})
            continue
        out[path.text] = value
    return out, problems, rejected


# ----------------------------------------------------------------- building

class _Conflict(Exception):
    pass


def _set(data: dict, path: paths.FieldPath, value: Any) -> None:
    """Set ``value`` at ``path``, creating objects and lists (new list slots are
    holes); raise _Conflict when a different value, or a non-container on the
    way, is already there."""
    here = paths.get(data, path)
    if not isinstance(here, paths.Missing) and here is not _HOLE and not _same(here, value):
        raise _Conflict("already set to a different value")
    if not paths.put(data, path, value, pad=_HOLE, replace=False):
        raise _Conflict("a value that is not an object or list is in the way")


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


def _absent(data: Any, path: paths.FieldPath) -> str | None:
    """Why ``path`` cannot be read from ``data`` (None when it can)."""
    if path.is_list:
        found = paths.items(data, path)
        if isinstance(found, paths.Missing):
            return found.reason
        if not found:
            return "empty list"
        bad = [i for i, v in enumerate(found) if isinstance(v, paths.Missing) or v is None]
        return f"{len(bad)} of {len(found)} item(s) lack it" if bad else None
    v = paths.get(data, path)
    if isinstance(v, paths.Missing):
        return v.reason
    return "null" if v is None else None


# ------------------------------------------------------------------- adapter

_STATUS_TEXT = {
    mm_agent_layout.PASSED: "code passed",
    mm_agent_layout.FAILED: "code never passed (is_pass is not true): its numbers are not read",
    mm_agent_layout.NO_CODE: "no code (MM-Agent writes none for a problem without data)",
    mm_agent_layout.UNMATCHED: "task_code matches no code/main<k>.py: its number is unknown, nothing is read",
    mm_agent_layout.AMBIGUOUS: "task_code matches several scripts, or several entries match one: nothing is read",
}


def adapt_run(run_dir: str, task_id: Any, *, anchors_dir: str | None = None, from_text: bool = False,
              solution_file: str | None = None) -> AdaptResult:
    """Build the artifact of ``task_id`` from an MM-Agent run folder.

    Returns the artifact (exact values, ready for
    :func:`mmverify.plugin.exactjson.dumps_exact`) and a report saying what
    each subtask gave, where every field came from, what was rejected or
    ignored, and what is still missing. Raises
    :class:`~mmverify.tasks.TaskLoadError` for an unknown task or a malformed
    label file, :class:`FileNotFoundError` when ``run_dir`` is not a folder.
    """
    from mmverify.plugin import mm_agent_text
    from mmverify.tasks import TaskSpec, load_task

    task = task_id if isinstance(task_id, TaskSpec) else load_task(task_id, anchors_dir)
    if not os.path.isdir(run_dir):
        raise FileNotFoundError(f"run folder not found: {run_dir}")
    labels, labels_file = mm_agent_text.load_labels(task) if from_text else ((), None)
    run = mm_agent_layout.read_run(run_dir, solution_file)
    notes = list(run.notes)
    if run.solution_error is None and not run.entries:
        notes.append("the solution JSON has no task entries: nothing to read")
    if run.solution_error is None and run.entries and not run.has_code:
        notes.append("this run has no code: MM-Agent writes code/main<k>.py only for problems with a "
                     "dataset, so no results file can exist; numbers could only come from text "
                     "(--from-text, low trust)")
    for k in run.orphan_scripts:
        notes.append(f"{run.script_rel(k)} matches no task entry of the solution JSON (the run may have "
                     "stopped before saving it): not read")

    # 1. results files of the entries whose code passed
    artifact: dict[str, Any] = {}
    sources: dict[str, dict[str, Any]] = {}
    conflicts: dict[str, list[dict[str, Any]]] = {}
    subtasks, files_info, rejected = [], [], []
    named = {os.path.relpath(run.solution_path, run_dir).replace(os.sep, "/")} if run.solution_path else set()
    ignored: list[dict[str, str]] = []
    for e in run.entries:
        row: dict[str, Any] = {"position": e.position, "number": e.number, "status": e.status,
                               "meaning": _STATUS_TEXT[e.status],
                               "description": _show(e.description) if e.description else None,
                               "script": run.script_rel(e.number) if e.number is not None else None,
                               "matches": [run.script_rel(k) for k in e.matches] if e.status == mm_agent_layout.AMBIGUOUS else [],
                               "results_file": None, "results": None, "fields": 0}
        subtasks.append(row)
        if e.number is None:
            continue
        rel = run.results_rel(e.number)
        full = os.path.join(run_dir, *rel.split("/"))
        present = os.path.isfile(full) and not os.path.islink(full)
        if e.status != mm_agent_layout.PASSED:
            row["results"] = "not read (code never passed)" if present else "absent"
            if present:
                named.add(rel)
                ignored.append({"path": rel, "reason": f"belongs to {e.label}, whose code never passed"})
            continue
        if not present:
            row["results"] = "absent: the script does not write it (was the --emit-prompt block in the template?)"
            continue
        named.add(rel)
        if "results.json" not in (e.code or ""):
            row["results"] = "stale: the code that passed does not write it (left from an earlier attempt)"
            ignored.append({"path": rel, "reason": f"stale: the passing code of {e.label} does not write it"})
            continue
        pairs, problems, bad = read_results(full, task.artifact_schema)
        row["results_file"], row["results"], row["fields"] = rel, "read", len(pairs)
        files_info.append({"path": rel, "subtask": e.number, "fields": len(pairs), "problems": problems,
                           "rejected": len(bad)})
        rejected += [{"file": rel, **b} for b in bad]
        for key, value in pairs.items():
            if key in conflicts:
                conflicts[key].append({"value": _show(value), "file": rel})
                continue
            try:
                _set(artifact, paths.parse_path(key), value)
            except _Conflict as exc:
                first = sources.get(key, {}).get("file")
                conflicts[key] = ([{"value": _show(paths.get(artifact, key)), "file": first}] if first else []) + \
                    [{"value": _show(value), "file": rel, "problem": str(exc)}]
                continue
            sources.setdefault(key, {"source": "results", "file": rel, "subtask": e.number})
    for key in conflicts:  # never resolved by guessing: the field is left out
        _remove(artifact, paths.parse_path(key))
        sources.pop(key, None)
    for k in run.orphan_scripts:
        rel = run.results_rel(k)
        if os.path.isfile(os.path.join(run_dir, *rel.split("/"))):
            named.add(rel)
            ignored.append({"path": rel, "reason": f"{run.script_rel(k)} matches no task entry"})
    others, n_others = mm_agent_layout.other_json_files(run_dir, named)
    for rel in others:
        ignored.append({"path": rel, "reason": "usage record of the run" if rel.startswith("usage/")
                        else "no convention names this file"})
    if n_others > len(others):
        ignored.append({"path": "...", "reason": f"and {n_others - len(others)} more JSON file(s) not listed"})

    # 2. opt-in: labelled numbers in the text (low trust)
    text_used: list[dict[str, Any]] = []
    text_skipped: list[dict[str, Any]] = []
    if from_text:
        hits, text_skipped = mm_agent_text.find(labels, run.entries)
        skipped_entries = [e.label for e in run.entries if e.status != mm_agent_layout.PASSED]
        if skipped_entries:
            text_skipped.append({"path": "*", "reason": "text of entries whose code did not pass is not read: "
                                 + ", ".join(skipped_entries)})
        by_path: dict[str, list] = {}
        for h in hits:
            by_path.setdefault(h.path, []).append(h)
        for key in sorted(by_path):
            hs = by_path[key]
            distinct = sorted({h.value for h in hs})
            if key in sources or key in conflicts:
                if key in sources and not any(_same(paths.get(artifact, key), v) for v in distinct):
                    text_skipped.append({"path": key, "reason": "a results file gives this field; the text says "
                                         + ", ".join(str(v) for v in distinct)})
                continue
            if len(distinct) > 1:
                text_skipped.append({"path": key, "reason": "ambiguous: " + "; ".join(
                    f"{h.text} ({h.entry} {h.field} line {h.line})" for h in hs)})
                continue
            h = hs[0]
            try:
                _set(artifact, paths.parse_path(key), h.value)
            except _Conflict as exc:
                text_skipped.append({"path": key, "reason": str(exc)})
                continue
            where = {"trust": "low", "source": "text", "field": h.field, "subtask": h.entry, "line": h.line,
                     "label": h.label}
            sources[key] = where
            text_used.append({"path": key, "value": h.text, **where})

    holes = _holes(artifact)
    artifact = _fill_holes(artifact)

    # 3. identity fields from the task (never numbers)
    props = task.artifact_schema.get("properties", {}) if isinstance(task.artifact_schema, dict) else {}
    extra_ok = task.artifact_schema.get("additionalProperties", True) is not False
    if "problem_id" in props and "problem_id" not in artifact and task.problem_id:
        artifact["problem_id"] = task.problem_id
        sources["problem_id"] = {"source": "task"}
    if "task_id" not in artifact and ("task_id" in props or extra_ok):
        artifact["task_id"] = task.id
        sources["task_id"] = {"source": "task"}
    if text_used:
        if extra_ok or PROVENANCE_KEY in props:
            artifact[PROVENANCE_KEY] = {u["path"]: {k: u[k] for k in ("trust", "source", "field", "subtask",
                                                                     "line", "label")} for u in text_used}
        else:
            notes.append(f"the schema forbids extra top-level keys: {PROVENANCE_KEY} is only in this report")

    # containers (objects) the schema requires but a partial run left out:
    # empty objects, never values, so the fields that are given stay scoreable
    added = fill_containers(task.artifact_schema, artifact)
    if added:
        notes.append("empty object(s) added for required container(s) the run left out: " + ", ".join(added))

    # 4. what is still missing
    report = _missing(task, artifact)
    complete = not (report["missing_required"] or report["missing_metric_fields"] or report["missing_gate_fields"]
                    or report["schema_errors"] or conflicts or holes)
    report = {
        "schema_version": ADAPT_VERSION,
        "task": task.id,
        "run_dir": run_dir,
        "solution": {"path": run.solution_path, "error": run.solution_error, "keys": list(run.solution_keys),
                     "tasks": len(run.entries)},
        "has_code": run.has_code,
        "subtasks": subtasks,
        "results_files": files_info,
        "rejected_keys": rejected,
        "ignored_files": ignored,
        "fields": {k: sources[k] for k in sorted(sources)},
        "conflicts": [{"path": k, "values": v} for k, v in sorted(conflicts.items())],
        "sparse_lists": holes,
        "from_text": {"enabled": from_text, "labels_file": labels_file, "used": text_used,
                      "skipped": text_skipped, "trust": "low" if text_used else None},
        **report,
        "complete": complete,
        "notes": notes,
    }
    return AdaptResult(artifact=artifact, report=report, complete=complete)


def _missing(task, artifact: dict) -> dict[str, list]:
    from mmverify.gates import compile_gates
    from mmverify.plugin.selfcheck import public_task
    from mmverify.validate import validate_artifact

    metric_missing = []
    for m in task.metrics:
        why = _absent(artifact, m.path)
        if why:
            metric_missing.append({"metric": m.id, "path": m.path.text, "unit": m.unit, "why": why})
    gate_missing = []
    for g in compile_gates(public_task(task)):
        for path in g.inputs:
            if path.segments and path.segments[0] == "$replay":
                continue
            why = _absent(artifact, path)
            if why:
                gate_missing.append({"gate": g.id, "path": path.text, "why": why})
    return {"missing_required": missing_required(task.artifact_schema, artifact),
            "missing_metric_fields": metric_missing, "missing_gate_fields": gate_missing,
            "schema_errors": [e.as_dict() for e in validate_artifact(task.artifact_schema, artifact)]}


def _remove(data: Any, path: paths.FieldPath) -> None:
    parent = paths.get(data, paths.FieldPath("", path.segments[:-1])) if len(path.segments) > 1 else data
    last = path.segments[-1]
    if isinstance(parent, dict) and isinstance(last, str):
        parent.pop(last, None)
    elif isinstance(parent, list) and isinstance(last, int) and last < len(parent):
        parent[last] = _HOLE


def _show(value: Any) -> str:
    if isinstance(value, paths.Missing):
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
    lines.append(f"solution  {sol['path'] or '-'} ({sol['tasks']} task entr{'y' if sol['tasks'] == 1 else 'ies'})"
                 + (f"  ERROR {sol['error']['code']}: {sol['error']['message']}" if sol["error"] else ""))
    for s in report["subtasks"]:
        who = f"task {s['number']}" if s["number"] is not None else "task ?"
        line = f"  tasks[{s['position'] - 1}] -> {who}: {s['status']}"
        if s["matches"]:
            line += f" ({', '.join(s['matches'])})"
        if s["results"]:
            line += f"; {s['results_file'] or 'code/main' + str(s['number']) + '.results.json'}: {s['results']}"
            if s["results"] == "read":
                line += f", {s['fields']} field(s)"
        elif s["status"] != "passed":
            line += f" -- {s['meaning']}"
        lines.append(line)
    for f in report["results_files"]:
        for p in f["problems"]:
            lines.append(f"PROBLEM   {f['path']}: {p['code']}: {p['message']}")
    for r in report["rejected_keys"]:
        lines.append(f"REJECTED  {r['file']}: key {r['key']!r}: {r['reason']}")
    for i in report["ignored_files"]:
        lines.append(f"IGNORED   {i['path']}: {i['reason']}")
    n_res = sum(1 for v in report["fields"].values() if v["source"] == "results")
    lines.append(f"fields    {n_res} from results files, {len(report['from_text']['used'])} from text (low trust)")
    for u in report["from_text"]["used"]:
        lines.append(f"  LOW TRUST (text) {u['path']} = {u['value']}  [{u['subtask']} {u['field']} line {u['line']},"
                     f" label {u['label']!r}]")
    for s in report["from_text"]["skipped"]:
        lines.append(f"  text not used: {s['path']}: {s['reason']}")
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
