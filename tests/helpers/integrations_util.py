"""Shared helpers of the integration tests: the CLI's score of a file, and the
switch that turns a missing optional extra from a skip into a failure."""
import json
import os
from fractions import Fraction

import pytest
from click.testing import CliRunner

from mmverify.cli import main
from mmverify.tasks import default_anchors_dir

ANCHORS = default_anchors_dir()


def oracle_path(task_id: str) -> str:
    return os.path.join(ANCHORS, task_id, "oracle.json")


def oracle_text(task_id: str) -> str:
    with open(oracle_path(task_id), encoding="utf-8") as fh:
        return fh.read()


def cli_score(task_id: str, path: str) -> dict:
    """``mmverify score PATH --task ID --format json``, parsed."""
    result = CliRunner().invoke(main, ["score", path, "--task", task_id, "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def cli_reward(task_id: str, path: str) -> float:
    """The reward ``mmverify score`` gives: its exact O-EVAL as a float, 0 when
    there is none (the report's ``oeval`` is rounded for display)."""
    exact = cli_score(task_id, path)["oeval_exact"]
    return float(Fraction(exact)) if exact is not None else 0.0


def require(module: str):
    """``pytest.importorskip``, except that with ``MMVERIFY_REQUIRE_EXTRAS=1``
    (set by CI, which installs the extras) a missing package fails the test."""
    if os.environ.get("MMVERIFY_REQUIRE_EXTRAS") == "1":
        import importlib

        return importlib.import_module(module)
    return pytest.importorskip(module)
