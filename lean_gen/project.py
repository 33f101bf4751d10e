"""From tasks and artifacts to Lean files, and the committed ``LeanProofs/`` project.

* :func:`obligations_for_artifact` — one artifact's gate report as an
  :class:`~.ir.ObligationSet` (every instance of the report);
* :func:`anchor_files` — every file of an anchors folder: per task the
  oracle artifact (``Obligations/<Task>.lean``), and per panel paper its
  values (``Obligations/<Task>/Paper<Id>.lean``) and, where an audit record
  keeps the paper's original value, the original
  (``Obligations/<Task>/Paper<Id>Original.lean``). A paper's file holds the
  instances that read a value the paper itself supplies (the rest is the
  oracle's and lives in the oracle's file);
* :func:`write_project` / :func:`drift` — write the files (plus the generated
  ``lakefile.toml``) or compare them with what is on disk.

Every emitted file passes the well-formedness checker before it is returned.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from . import emit
from . import wellformed
from .ir import ObligationSet, camel, obligation_set

OBLIGATIONS_DIR = "Obligations"
TOOLCHAIN = "leanprover/lean4:v4.15.0"
LIB_NAME = "Obligations"


@dataclass(frozen=True)
class LeanFile:
    relpath: str              # relative to LeanProofs/, e.g. Obligations/Cumcm2024ADragonDance.lean
    module: str               # Lean module name, e.g. Obligations.Cumcm2024ADragonDance
    oset: ObligationSet
    text: str

    @property
    def label(self) -> str:
        return f"{self.oset.task_id} / {self.oset.artifact}"


def _filtered(report: Any, keep: Callable[[Any], bool]) -> Any:
    from dataclasses import replace

    return replace(report, instances=tuple(i for i in report.instances if keep(i)))


def obligations_for_artifact(task: Any, data: Any, artifact: str, tag: str, origin: str = "",
                             keep: Callable[[Any], bool] | None = None) -> ObligationSet:
    from mmverify.gates import evaluate_gates

    report = evaluate_gates(task, data)
    if keep is not None:
        report = _filtered(report, keep)
    return obligation_set(task, report, artifact, emit.namespace_for(task.id, tag), origin)


def render(oset: ObligationSet) -> str:
    text = emit.emit(oset)
    wellformed.assert_wellformed(text)
    return text


def lean_file(relparts: list[str], oset: ObligationSet) -> LeanFile:
    relpath = "/".join(relparts) + ".lean"
    module = ".".join(relparts)
    return LeanFile(relpath, module, oset, render(oset))


def task_files(task: Any) -> list[LeanFile]:
    """The oracle file and the panel files of one task."""
    from mmverify.reading.artifact import parse_file
    from mmverify.gates.paper_artifact import paper_artifact

    oracle = parse_file(task.oracle_path).data
    tname = camel(task.id)
    rel_oracle = f"anchors/{task.id}/oracle.json"
    oracle_set = obligations_for_artifact(task, oracle, "oracle artifact", "Oracle", rel_oracle)
    files = [lean_file([OBLIGATIONS_DIR, tname], oracle_set)]
    for paper in task.panel:
        ptag = paper_tag(paper.paper_id)
        data, supplied, _ = paper_artifact(task, oracle, paper)
        origin = f"anchors/{task.id}/task.json, panel paper {paper.paper_id}: values and context"
        oset = obligations_for_artifact(
            task, data, f"panel paper {paper.paper_id}", ptag, origin,
            keep=lambda i, s=supplied: any(p in s for p in i.paths))
        files.append(lean_file([OBLIGATIONS_DIR, tname, ptag], without_repeats(oset, oracle_set)))
        originals = sorted(mid for mid, rec in paper.audit.items() if "original" in rec)
        if originals:
            data_o, _, _ = paper_artifact(task, oracle, paper, originals)
            changed = {task.metric(m).path.text for m in originals}
            origin_o = (f"anchors/{task.id}/task.json, panel paper {paper.paper_id} with the audit "
                        f"record's original value of {', '.join(originals)}")
            oset_o = obligations_for_artifact(
                task, data_o, f"panel paper {paper.paper_id}, original (pre-audit) values", ptag + "Original",
                origin_o, keep=lambda i, c=changed: any(_reads(p, c) for p in i.paths))
            files.append(lean_file([OBLIGATIONS_DIR, tname, ptag + "Original"], without_repeats(oset_o, oracle_set)))
    return files


SAME_AS_ORACLE = "same_as_oracle"


def without_repeats(oset: ObligationSet, oracle_set: ObligationSet) -> ObligationSet:
    """``oset`` without the obligations (and vouched records) whose statement
    the oracle's file already states for the same gate instance (a paper value equal to the
    oracle's gives the same closed proposition: it is proved once, and named
    in the paper's file as an instance without an obligation of its own)."""
    from dataclasses import replace

    from .ir import Unstated

    def split(records, oracle_records, verdict):
        said = {(r.gate_id, r.index, r.statement) for r in oracle_records}
        again = [(r.gate_id, r.index, r.statement) in said for r in records]
        return (tuple(r for r, a in zip(records, again) if not a),
                tuple(Unstated(r.gate_id, r.index, r.form, verdict(r), SAME_AS_ORACLE, r.sources)
                      for r, a in zip(records, again) if a))

    obligations, repeated = split(oset.obligations, oracle_set.obligations, lambda o: o.gate_verdict)
    vouched, repeated_v = split(oset.vouched, oracle_set.vouched, lambda v: v.verdict)
    return replace(oset, obligations=obligations, vouched=vouched, unstated=oset.unstated + repeated + repeated_v)


def paper_tag(paper_id: str) -> str:
    """``Paper<Id>``: the paper id's letters and digits (other runs become ``_``)."""
    import re

    return "Paper" + (re.sub(r"[^A-Za-z0-9]+", "_", paper_id).strip("_") or "X")


def _reads(concrete: str, metric_paths: set[str]) -> bool:
    """A concrete path reads a metric path (``a[3].b`` reads ``a[*].b``)."""
    import re

    generic = re.sub(r"\[\d+\]", "[*]", concrete)
    return concrete in metric_paths or generic in metric_paths


_CACHE: dict[tuple, list[LeanFile]] = {}


def _signature(anchors_dir: str, ids: list[str]) -> tuple:
    """What the generated files depend on, by file stat (size, mtime)."""
    out = []
    for rel in ["index.json"] + [f"{t}/{n}" for t in ids for n in ("task.json", "oracle.json",
                                                                    "artifact.schema.json")]:
        try:
            st = os.stat(os.path.join(anchors_dir, rel))
            out.append((rel, st.st_size, st.st_mtime_ns))
        except OSError:
            out.append((rel, None, None))
    return tuple(out)


def anchor_files(anchors_dir: str | None = None, task_ids: Iterable[str] | None = None) -> list[LeanFile]:
    """Every Lean file of an anchors folder, in index order (memoised on the
    anchor files' size and mtime: the result is immutable)."""
    from mmverify.tasks import default_anchors_dir, task_ids as all_ids

    anchors_dir = os.path.abspath(anchors_dir or default_anchors_dir())
    ids = list(task_ids) if task_ids is not None else all_ids(anchors_dir)
    key = (anchors_dir, tuple(ids), _signature(anchors_dir, ids))
    if key not in _CACHE:
        _CACHE.clear()
        _CACHE[key] = _anchor_files(anchors_dir, ids)
    return list(_CACHE[key])


def _anchor_files(anchors_dir: str, ids: list[str]) -> list[LeanFile]:
    from mmverify.tasks import load_task

    files: list[LeanFile] = []
    for tid in ids:
        files.extend(task_files(load_task(tid, anchors_dir)))
    namespaces = [f.oset.module for f in files]
    if len(set(namespaces)) != len(namespaces):
        raise ValueError("two files share a namespace")
    return files


def lakefile(files: Iterable[LeanFile]) -> str:
    roots = sorted(f.module for f in files)
    lines = [
        "# Generated by `mmverify lean emit`; do not edit by hand.",
        "# Every module is one obligation file (prelude only, no dependencies).",
        'name = "LeanProofs"',
        f'defaultTargets = ["{LIB_NAME}"]',
        "",
        "[[lean_lib]]",
        f'name = "{LIB_NAME}"',
        "roots = [",
    ]
    lines += [f'  "{r}",' for r in roots]
    lines += ["]", ""]
    return "\n".join(lines)


def project_texts(files: list[LeanFile]) -> dict[str, str]:
    """relpath -> text of every generated file of ``LeanProofs/``."""
    out = {f.relpath: f.text for f in files}
    out["lakefile.toml"] = lakefile(files)
    out["lean-toolchain"] = TOOLCHAIN + "\n"
    return out


def _existing_generated(root: Path) -> set[str]:
    out = set()
    base = root / OBLIGATIONS_DIR
    if base.is_dir():
        for p in base.rglob("*.lean"):
            out.add(p.relative_to(root).as_posix())
    return out


def drift(files: list[LeanFile], root: str | os.PathLike) -> dict[str, list[str]]:
    """Differences between the generated texts and ``root``: changed, missing, stale."""
    root = Path(root)
    want = project_texts(files)
    changed, missing = [], []
    for rel, text in sorted(want.items()):
        p = root / rel
        if not p.exists():
            missing.append(rel)
        elif p.read_text(encoding="utf-8") != text:
            changed.append(rel)
    stale = sorted(_existing_generated(root) - set(want))
    return {"changed": changed, "missing": missing, "stale": stale}


def write_project(files: list[LeanFile], root: str | os.PathLike) -> dict[str, list[str]]:
    """Write every generated file under ``root`` and remove stale obligation files."""
    root = Path(root)
    before = drift(files, root)
    for rel, text in project_texts(files).items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if not p.exists() or p.read_text(encoding="utf-8") != text:
            p.write_text(text, encoding="utf-8")
    for rel in before["stale"]:
        (root / rel).unlink()
    # remove emptied folders
    base = root / OBLIGATIONS_DIR
    if base.is_dir():
        for d in sorted((p for p in base.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
            if not any(d.iterdir()):
                d.rmdir()
    return before
