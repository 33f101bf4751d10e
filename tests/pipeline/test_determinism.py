"""Determinism: the same inputs give byte-identical reports across runs,
processes and PYTHONHASHSEED values (which change str hashing, hence set and
dict-of-set iteration orders), and the library agrees with the CLI."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace

import pytest

from tests.helpers.hostile import dump, oracle_bytes, oracle_data, perturbed
from mmverify.reading.artifact import ArtifactError, parse_bytes
from mmverify.pipeline.evaluate import score_artifact
from mmverify.pipeline.report import dumps_line
from mmverify.tasks import load_all

TASKS = load_all()
SEEDS = ("0", "1", "4242")


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """All 18 oracles and two perturbed variants of each (scaled numbers; a
    hostile leaf), named so that the task is inferred from the file name."""
    folder = tmp_path_factory.mktemp("det")
    paths = []
    for task in TASKS:
        p = folder / f"{task.id}_oracle.json"
        p.write_bytes(oracle_bytes(task.directory))
        paths.append(str(p))
        for i in (1, 3):
            p = folder / f"{task.id}_v{i}.json"
            p.write_bytes(dump(perturbed(oracle_data(task.directory), i + 5 * TASKS.index(task))).encode())
            paths.append(str(p))
    return paths


def run(args, seed):
    env = dict(os.environ, PYTHONHASHSEED=seed)
    return subprocess.run([sys.executable, "-m", "mmverify", *args], capture_output=True, env=env, timeout=600)


@pytest.fixture(scope="module")
def outputs(inputs):
    return {seed: run(["score", *inputs, "--json"], seed) for seed in SEEDS}


def test_reports_are_byte_identical_across_hash_seeds(inputs, outputs):
    first = outputs[SEEDS[0]]
    assert b"Traceback" not in first.stderr, first.stderr[-2000:]
    lines = first.stdout.splitlines()
    assert len(lines) == len(inputs)
    statuses = {json.loads(line)["status"] for line in lines}
    assert "scored" in statuses and len(statuses) > 1        # the perturbations reach other verdicts
    for seed in SEEDS[1:]:
        assert outputs[seed].stdout == first.stdout, f"PYTHONHASHSEED={seed} changed a report"


def test_library_agrees_with_the_cli(inputs, outputs):
    lines = outputs[SEEDS[0]].stdout.decode("utf-8").splitlines()
    for path, line in zip(inputs, lines):
        task = next(t for t in TASKS if os.path.basename(path).startswith(t.id + "_"))
        with open(path, "rb") as fh:
            try:
                artifact = parse_bytes(fh.read(), source=path)
            except ArtifactError as exc:
                artifact = exc
        report = score_artifact(task, artifact)
        if isinstance(artifact, ArtifactError):
            report = replace(report, source=path)
        assert dumps_line(report.as_dict()) == line, path


def test_batch_file_matches_the_reports(tmp_path, inputs, outputs):
    out = tmp_path / "out.jsonl"
    r = run(["score", *inputs, "--output", str(out)], "987")
    assert b"Traceback" not in r.stderr
    rows = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    reports = [json.loads(line) for line in outputs[SEEDS[0]].stdout.decode("utf-8").splitlines()]
    assert len(rows) == len(reports)
    for row, rep in zip(rows, reports):
        row.pop("batch")
        assert row == rep
