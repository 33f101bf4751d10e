"""The README serves its readers: a contents list whose links resolve, the
quickstart, every command in the command table, the statuses and exit codes
the code has, figures kept in docs/performance.md; LICENSE and CHANGELOG exist."""
import re
from pathlib import Path

from mmverify.cli import COMMANDS
from mmverify.pipeline.statuses import STATUSES

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def anchor(title: str) -> str:
    return re.sub(r"[^a-z0-9_ -]", "", title.lower()).replace(" ", "-")


def test_contents_links_resolve_to_headings():
    contents = README.split("## Contents", 1)[1].split("\n## ", 1)[0]
    targets = re.findall(r"\]\(#([^)]+)\)", contents)
    headings = {anchor(h) for h in re.findall(r"^#{2,3} (.+)$", README, re.M)}
    assert len(targets) >= 10 and set(targets) <= headings, set(targets) - headings


def test_quickstart_has_five_steps_gate_then_score():
    quick = README.split("## Quickstart for agent authors", 1)[1].split("\n## ", 1)[0]
    steps = re.findall(r"^(\d)\. ", quick, re.M)
    assert steps == ["1", "2", "3", "4", "5"]
    assert quick.index("mmverify gate") < quick.index("mmverify score")


def test_command_table_names_every_command():
    table = README.split("## Command line", 1)[1].split("###", 1)[0]
    for name in COMMANDS:
        assert f"`mmverify {name}" in table, name


def test_every_status_is_in_the_status_table():
    for status in STATUSES:
        assert f"| `{status}`" in README, status


def test_exit_codes_table_has_the_task_mismatch_and_figures_live_in_docs():
    codes = README.split("### Exit codes (stable)", 1)[1].split("\n\n", 2)[1]
    assert "task_mismatch" in codes
    perf = README.split("## Performance", 1)[1].split("\n## ", 1)[0]
    assert "not met" not in perf and "artifacts/s" not in perf
    assert "artifacts/s" in (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")


def test_license_changelog_and_venv_ignored():
    assert "Apache License" in (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert (ROOT / "CHANGELOG.md").is_file()
    assert ".venv/" in (ROOT / ".gitignore").read_text(encoding="utf-8").split()
    assert "bash .ci/run" in README
