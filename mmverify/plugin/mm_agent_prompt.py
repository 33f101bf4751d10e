"""The block a user pastes into MM-Agent's code template (``mmverify adapt
mm-agent --emit-prompt TASK``).

It names the task's fields — every scored field (metric paths, from
``task.json``), every gated field (gate inputs) and every required leaf — with
the unit (``x-unit`` of the artifact schema), the type and the schema's own
description, and gives each script a ``write_results`` function that saves
``{field path: value}`` to ``main<k>.results.json`` beside the script.
Everything in it is public: paths, units and the artifact schema's prose, as
the self-check shows them; no panel value.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from mmverify.reading import paths

BEGIN = "# ---- mmverify results file"
END = "# ---- end of the mmverify block ----"

WRITE_RESULTS = '''\
import json as _mmv_json, os as _mmv_os

def write_results(results):
    """Save {field path: value} to <this script's name>.results.json, beside the script."""
    path = _mmv_os.path.splitext(_mmv_os.path.abspath(__file__))[0] + ".results.json"
    with open(path, "w", encoding="utf-8") as fh:
        _mmv_json.dump(results, fh, indent=2, allow_nan=False)
'''


@dataclass(frozen=True)
class Field:
    path: str              # as written in a results file (a list is named by its own path)
    unit: str | None
    kind: str              # "number", "integer", "label", "one of: ...", ...
    description: str
    why: tuple[str, ...]   # "scored", "gated", "required"
    items: tuple["Field", ...] = ()   # for a list of objects: the item keys asked for


def _kind(sub: Mapping[str, Any] | None) -> str:
    if not isinstance(sub, dict):
        return "value"
    if isinstance(sub.get("enum"), list):
        return "one of: " + " | ".join(str(v) for v in sub["enum"])
    t = sub.get("type")
    types = t if isinstance(t, list) else [t]
    names = {"number": "number", "integer": "integer", "string": "text label", "boolean": "true/false",
             "array": "list", "object": "object"}
    return " or ".join(names.get(x, str(x)) for x in types if x) or "value"


def _unit(sub: Mapping[str, Any] | None) -> str | None:
    u = sub.get("x-unit") if isinstance(sub, dict) else None
    return u if isinstance(u, str) else None


def _desc(sub: Mapping[str, Any] | None) -> str:
    d = sub.get("description") if isinstance(sub, dict) else None
    return " ".join(d.split()) if isinstance(d, str) else ""


def _required_leaves(schema: Mapping[str, Any]) -> list[str]:
    from mmverify.plugin.mm_agent import missing_required

    out = []
    for text in missing_required(schema, {}):
        sub = _sub(schema, text)
        if isinstance(sub, dict) and sub.get("type") not in ("object", "array"):
            out.append(text)
    return out


def _sub(schema: Mapping[str, Any], text: str) -> Mapping[str, Any] | None:
    from mmverify.tasks import schema_at

    try:
        return schema_at(schema, paths.parse_path(text))
    except paths.PathError:
        return None


def task_fields(task) -> list[Field]:
    """The fields a run should write for ``task``, in task order (metrics, then gates,
    then required leaves). A path through a list (``a[*].b`` or ``a[0].b``) is asked
    for as the whole list ``a`` with its item keys."""
    from mmverify.gates import compile_gates
    from mmverify.plugin.selfcheck import public_task

    schema = task.artifact_schema
    wanted: list[tuple[paths.FieldPath, str]] = [(m.path, "scored") for m in task.metrics]
    for g in compile_gates(public_task(task)):
        wanted += [(p, "gated") for p in g.inputs]
    wanted += [(paths.parse_path(t), "required") for t in _required_leaves(schema)]
    identity = {"problem_id", "task_id"}

    order: list[str] = []
    why: dict[str, list[str]] = {}
    items: dict[str, dict[str, list[str]]] = {}
    for path, reason in wanted:
        segs = path.segments
        cut = next((i for i, s in enumerate(segs) if isinstance(s, int)), None)
        if cut is None:
            key, sub_key = path.text, None
        else:
            key = paths.render_segments(segs[:cut]) if cut else ""
            rest = [s for s in segs[cut + 1:]]
            sub_key = ".".join(str(s) for s in rest if isinstance(s, str)) or None
        if not key or key in identity or key.startswith("$"):
            continue
        if key not in why:
            order.append(key)
            why[key] = []
        if reason not in why[key]:
            why[key].append(reason)
        if cut is not None and sub_key:
            bucket = items.setdefault(key, {})
            bucket.setdefault(sub_key, [])
            if reason not in bucket[sub_key]:
                bucket[sub_key].append(reason)
    out = []
    for key in order:
        sub = _sub(schema, key)
        its = ()
        if key in items:
            item_schema = sub.get("items") if isinstance(sub, dict) else None
            props = item_schema.get("properties", {}) if isinstance(item_schema, dict) else {}
            keys = sorted(items[key], key=lambda k: (list(props).index(k) if k in props else len(props), k))
            its = tuple(Field(path=k, unit=_unit(_sub(item_schema or {}, k)), kind=_kind(_sub(item_schema or {}, k)),
                              description=_desc(_sub(item_schema or {}, k)), why=tuple(items[key][k]))
                        for k in keys)
        out.append(Field(path=key, unit=_unit(sub), kind=_kind(sub), description=_desc(sub),
                         why=tuple(why[key]), items=its))
    return out


def _line(f: Field, indent: str) -> list[str]:
    unit = f" [{f.unit}]" if f.unit else ""
    head = f"{indent}{f.path}{unit} {f.kind} ({', '.join(f.why)})"
    return [head] + ([f"{indent}    {f.description}"] if f.description else [])


def emit_block(task) -> str:
    """The text to paste into MM-Agent's code template (Python comments plus the
    ``write_results`` function)."""
    fields = task_fields(task)
    scalars = [f for f in fields if not f.items]
    lists = [f for f in fields if f.items]
    out = [f"{BEGIN} (task {task.id}) ----",
           "# Besides printing its results, this script must save the final numbers it computed",
           "# with write_results(...) (defined below) once, at the end. It writes a JSON object to",
           "# main<k>.results.json beside the script (main1.py -> main1.results.json).",
           "# Keys: only the field paths listed here, spelt exactly so; any other key is rejected.",
           "# Values: plain JSON numbers in the unit shown in [brackets] (convert numpy values with",
           "# float() or int()), text labels as strings. Save only the fields this script really",
           "# computed and leave the others out: no placeholder, no guess, no NaN or infinity.",
           "#",
           "# Fields (path [unit] type (why it is asked for)):"]
    for f in scalars:
        out += ["#" + line for line in _line(f, "   ")]
    for f in lists:
        out.append("#")
        out += ["#" + line for line in _line(f, "   ")]
        out.append("#     Save it whole, as a JSON list of objects with these keys, under the path"
                   f" {f.path}:")
        for it in f.items:
            out += ["#" + line for line in _line(it, "       ")]
    example = next((f for f in scalars if f.kind in ("number", "integer")), scalars[0] if scalars else None)
    out += ["#",
            "# Example: write_results({" + (f'"{example.path}": value' if example else '"field.path": value')
            + ", ...})"]
    out += WRITE_RESULTS.rstrip("\n").split("\n")
    out.append(END)
    return "\n".join(out) + "\n"
