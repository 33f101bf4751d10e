"""Reports before and after a change: a digest of every report mmverify renders
for a fixed corpus, so that a speed-up can be shown to leave every byte alone.

    python benchmarks/report_identity.py --write before.json   # on the old tree
    python benchmarks/report_identity.py --check before.json   # on the new tree

The corpus, for each of the tasks under ``anchors/``:

* the oracle artifact, and the oracle with each gated number scaled by a few
  factors (gate failures, undefined identities, band edges);
* the hostile corpus of ``tests/helpers/hostile`` (every whole-document defect and the
  leaf payloads spread over the paths the task reads, as in the corpus test);
* the batch variants of ``tests/helpers/hostile.perturbed``.

For each document the JSON report, the table, the Markdown, the ``mmverify
gate`` result (JSON and table) and the reward are rendered; the digest of each
is stored under the document's name. The audit of the anchors (JSON) is added
once. ``--check`` lists every document whose rendering differs.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from decimal import Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

FACTORS = ("0", "-1", "2", "1.0000001", "0.5")


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


def documents(task, leaf_budget: int):
    """(name, bytes) of every document of the corpus for ``task``."""
    from tests.helpers.hostile import Raw, dump, leaf_documents, oracle_data, perturbed, set_at, whole_documents

    from mmverify.reading import paths

    base = oracle_data(task.directory)
    yield "oracle", dump(base).encode("utf-8")
    gated = []
    from mmverify.gates import compile_gates

    for gate in compile_gates(task):
        for path in gate.inputs:
            if path.text not in gated:
                gated.append(path.text)
    for text in gated:
        path = paths.parse_path(text)
        segs = tuple(0 if s == paths.WILDCARD else s for s in path.segments)
        raw = paths.get(base, paths.parse_path(paths.render_segments(segs)))
        if not isinstance(raw, Decimal):
            continue
        for f in FACTORS:
            data = oracle_data(task.directory)
            set_at(data, segs, Raw(str(raw * Decimal(f))))
            yield f"scaled_{text}_x{f}", dump(data).encode("utf-8")
    for name, body, _ in whole_documents(task):
        yield "whole_" + name, body
    for name, body, _, _, _ in leaf_documents(task, budget=leaf_budget):
        yield name, body
    for i in range(10):
        yield f"perturbed_{i}", dump(perturbed(oracle_data(task.directory), i)).encode("utf-8")


def _has_replay(task) -> bool:
    try:
        from mmverify.replay import replay_module
    except ImportError:  # an engine without the replay stage
        return False
    return replay_module(task) is not None


def digests(leaf_budget: int = 30, light_replay: bool = False) -> dict[str, str]:
    from mmverify.reading.artifact import ArtifactError, parse_bytes
    from mmverify.commands.gate import render_gate
    from mmverify.pipeline.evaluate import score_artifact
    from mmverify.gates import evaluate_gates
    from mmverify.plugin.reward import reward
    from mmverify.pipeline.report import dumps, render
    from mmverify.tasks import load_all
    from mmverify.pipeline.validate import validate_artifact

    out: dict[str, str] = {}
    for task in load_all():
        docs = documents(task, leaf_budget)
        if light_replay and _has_replay(task):
            # a replay simulation costs a tenth of a second or more per call:
            # its task keeps the oracle and the scaled documents only
            docs = ((n, b) for n, b in docs if n == "oracle" or n.startswith("scaled_"))
        for name, body in docs:
            key = f"{task.id}/{name}"
            try:
                artifact = parse_bytes(body, source=name)
            except ArtifactError as exc:
                artifact = exc
            report = score_artifact(task, artifact)
            parts = [report.to_json(), render(report, "table"), render(report, "md"),
                     repr(reward(task, body))]
            if not isinstance(artifact, ArtifactError):
                gates = evaluate_gates(task, artifact.data)
                errors = validate_artifact(task.artifact_schema, artifact.data)
                result = {"task": task.id, "artifact": {"source": name, "sha256": artifact.sha256},
                          "status": "infeasible" if gates.hard_failures else "invalid" if errors else "feasible",
                          "error": None, "schema_errors": [e.as_dict() for e in errors],
                          "gates": gates.as_dict(), "missing_scored_fields": [], "unwitnessed_claims": []}
                parts += [render_gate(result, "json"), render_gate(result, "table"),
                          "\n".join(i.headline() for i in gates.instances)]
            out[key] = _digest("\x00".join(parts))
    from mmverify.gates import audit_anchors

    from mmverify.gates.audit_render import render_markdown as audit_md
    from mmverify.gates.audit_render import render_table as audit_table

    audit = audit_anchors()
    out["audit"] = _digest("\x00".join([dumps(audit.as_dict()), audit_table(audit), audit_md(audit)]))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--write", metavar="FILE", help="write the digests to FILE")
    g.add_argument("--check", metavar="FILE", help="compare with the digests in FILE")
    ap.add_argument("--leaf-budget", type=int, default=30, help="hostile leaf documents per task")
    ap.add_argument("--light-replay", action="store_true",
                    help="tasks with a replay stage: only the oracle and its scaled variants")
    args = ap.parse_args(argv)
    now = digests(args.leaf_budget, args.light_replay)
    if args.write:
        with open(args.write, "w", encoding="utf-8") as fh:
            json.dump(now, fh, indent=1, sort_keys=True)
        print(f"{len(now)} documents written to {args.write}")
        return 0
    with open(args.check, encoding="utf-8") as fh:
        before = json.load(fh)
    differ = sorted(k for k in before if k in now and before[k] != now[k])
    only = sorted(set(before) ^ set(now))
    for k in differ:
        print("differs:", k)
    for k in only:
        print("in one run only:", k)
    print(f"{len(now)} documents: {len(differ)} differ, {len(only)} in one run only")
    return 1 if differ or only else 0


if __name__ == "__main__":
    sys.exit(main())
