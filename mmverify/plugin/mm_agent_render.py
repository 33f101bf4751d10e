"""The plain-text summary of an MM-Agent adapt report
(``mmverify adapt mm-agent``); the report itself is built by
:func:`mmverify.plugin.mm_agent.adapt_run`.
"""
from __future__ import annotations


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
