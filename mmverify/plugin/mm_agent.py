"""Adapter for MM-Agent runs: build a task artifact from the numbers its scripts saved.

Design notes: docs/architecture.md, `mmverify/plugin/mm_agent.py`.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Mapping

from mmverify.reading import paths
from mmverify.plugin import mm_agent_layout
from mmverify.plugin.mm_agent_render import render_report
from mmverify.plugin.mm_agent_results import (MAX_RESULTS_BYTES, Conflict, fill_holes, hole_paths, read_results,
                                              remove_field, same_value, set_field, show)

# read_results, render_report and MAX_RESULTS_BYTES live in their own modules
# and stay importable from here
__all__ = ["ADAPT_VERSION", "MAX_RESULTS_BYTES", "PROVENANCE_KEY", "AdaptResult", "adapt_run", "fill_containers",
           "missing_required", "read_results", "render_report"]

ADAPT_VERSION = "mmverify.adapt/2"
PROVENANCE_KEY = "_provenance"


@dataclass
class AdaptResult:
    artifact: dict
    report: dict
    complete: bool = field(default=False)


@dataclass
class _Fields:
    """The artifact under construction, where each field came from, and the
    fields two sources disagree on (left out)."""

    artifact: dict[str, Any] = field(default_factory=dict)
    sources: dict[str, dict[str, Any]] = field(default_factory=dict)
    conflicts: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


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
    notes = _run_notes(run)
    fields = _Fields()
    subtasks, files_info, rejected, ignored = _read_results_files(task, run, run_dir, fields)
    text_used, text_skipped = _read_text(labels, run, fields) if from_text else ([], [])
    holes = hole_paths(fields.artifact)
    fields.artifact = fill_holes(fields.artifact)
    _add_task_fields(task, fields, text_used, notes)
    artifact, sources, conflicts = fields.artifact, fields.sources, fields.conflicts

    # what is still missing
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


def _run_notes(run: mm_agent_layout.Run) -> list[str]:
    """What the run folder itself says before anything is read."""
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
    return notes


def _read_results_files(task, run: mm_agent_layout.Run, run_dir: str, fields: _Fields
                        ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, str]],
                                   list[dict[str, str]]]:
    """Step 1: the results files of the entries whose code passed, into
    ``fields``. Returns (subtask rows, results files read, rejected keys,
    ignored files)."""
    artifact, sources, conflicts = fields.artifact, fields.sources, fields.conflicts
    subtasks, files_info, rejected = [], [], []
    named = {os.path.relpath(run.solution_path, run_dir).replace(os.sep, "/")} if run.solution_path else set()
    ignored: list[dict[str, str]] = []
    for e in run.entries:
        row: dict[str, Any] = {"position": e.position, "number": e.number, "status": e.status,
                               "meaning": _STATUS_TEXT[e.status],
                               "description": show(e.description) if e.description else None,
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
                conflicts[key].append({"value": show(value), "file": rel})
                continue
            try:
                set_field(artifact, paths.parse_path(key), value)
            except Conflict as exc:
                first = sources.get(key, {}).get("file")
                conflicts[key] = ([{"value": show(paths.get(artifact, key)), "file": first}] if first else []) + \
                    [{"value": show(value), "file": rel, "problem": str(exc)}]
                continue
            sources.setdefault(key, {"source": "results", "file": rel, "subtask": e.number})
    for key in conflicts:  # never resolved by guessing: the field is left out
        remove_field(artifact, paths.parse_path(key))
        sources.pop(key, None)
    return subtasks, files_info, rejected, ignored + _other_files(run, run_dir, named)


def _other_files(run: mm_agent_layout.Run, run_dir: str, named: set[str]) -> list[dict[str, str]]:
    """The JSON files of the run folder that are not read, each with the reason."""
    ignored = []
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
    return ignored


def _read_text(labels, run: mm_agent_layout.Run, fields: _Fields) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Step 2 (opt-in): labelled numbers in the text (low trust), only for the
    fields no results file gives. Returns (used, skipped)."""
    from mmverify.plugin import mm_agent_text

    artifact, sources, conflicts = fields.artifact, fields.sources, fields.conflicts
    text_used: list[dict[str, Any]] = []
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
            if key in sources and not any(same_value(paths.get(artifact, key), v) for v in distinct):
                text_skipped.append({"path": key, "reason": "a results file gives this field; the text says "
                                     + ", ".join(str(v) for v in distinct)})
            continue
        if len(distinct) > 1:
            text_skipped.append({"path": key, "reason": "ambiguous: " + "; ".join(
                f"{h.text} ({h.entry} {h.field} line {h.line})" for h in hs)})
            continue
        h = hs[0]
        try:
            set_field(artifact, paths.parse_path(key), h.value)
        except Conflict as exc:
            text_skipped.append({"path": key, "reason": str(exc)})
            continue
        where = {"trust": "low", "source": "text", "field": h.field, "subtask": h.entry, "line": h.line,
                 "label": h.label}
        sources[key] = where
        text_used.append({"path": key, "value": h.text, **where})
    return text_used, text_skipped


def _add_task_fields(task, fields: _Fields, text_used: list[dict[str, Any]], notes: list[str]) -> None:
    """Step 3: identity fields from the task (never numbers), the provenance of
    the text numbers, and empty objects for required containers the run left out."""
    artifact, sources = fields.artifact, fields.sources
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


def _missing(task, artifact: dict) -> dict[str, list]:
    from mmverify.gates import compile_gates
    from mmverify.plugin.selfcheck import public_task
    from mmverify.pipeline.validate import validate_artifact

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
