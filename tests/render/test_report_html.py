"""One run's page (``mmverify score ARTIFACT --format html``): failed gates
first, replayed values of the artifact's own plan shown and values the
statement alone determines withheld, no anchor value the text report does not
show, every string from the artifact escaped, and the two ways the command
line is read giving the same page."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from mmverify.cli import main
from mmverify.pipeline.evaluate import score_path
from mmverify.pipeline.report import render_table
from mmverify.render.report_html import render_html, shown_replay_values
from mmverify.tasks import default_anchors_dir, load_task

from .kit import Page, outside_references

REPO = Path(__file__).resolve().parents[2]
ANCHORS = Path(default_anchors_dir())
DRAGON = "cumcm-2024-a-dragon-dance"
SLOPPY_DRAGON = REPO / "examples" / "sloppy" / f"{DRAGON}_result.json"


def oracle(task_id: str) -> str:
    return str(ANCHORS / task_id / "oracle.json")


def flat_texts(value) -> list[str]:
    if isinstance(value, dict):
        return [t for v in value.values() for t in flat_texts(v)]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in flat_texts(v)]
    return [] if value is None else [str(value)]


def anchor_tokens(task_id: str) -> set[str]:
    """Every anchor value of the task's panel as text, long enough to be telling."""
    task = load_task(task_id)
    out = set()
    for paper in task.panel:
        for text in flat_texts(dict(paper.value_text)):
            if sum(c.isdigit() for c in text) >= 4:
                out.add(text)
    return out


def shown(token: str, text: str) -> bool:
    return re.search(r"(?<![0-9.])" + re.escape(token) + r"(?![0-9])", text) is not None


def perturbed(tmp_path, task_id: str) -> str:
    """The oracle with every number of its scored results nudged (the plan's replay changes too)."""
    data = json.loads(Path(oracle(task_id)).read_text(encoding="utf-8"))

    def nudge(v):
        if isinstance(v, bool):
            return v
        if isinstance(v, float):
            return v * 1.07
        if isinstance(v, dict):
            return {k: nudge(x) for k, x in v.items()}
        if isinstance(v, list):
            return [nudge(x) for x in v]
        return v
    path = tmp_path / f"{task_id}_result.json"
    path.write_text(json.dumps(nudge(data)), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("task_id", [DRAGON, "cumcm-2023-b-multibeam-lines", "cumcm-2024-c-crop-planting",
                                     "mcm-2023-c-wordle", "cumcm-2023-c-vegetable-pricing", "mcm-2024-c-tennis-momentum",
                                     "mcm-2025-c-olympic-medals", "cumcm-2024-b-production-decision",
                                     "cumcm-2023-a-heliostat-field"])
def test_the_page_shows_no_anchor_value_the_text_report_does_not(task_id, tmp_path):
    tokens = anchor_tokens(task_id)
    assert tokens
    for path in (oracle(task_id), perturbed(tmp_path, task_id)):
        report = score_path(path, task_id)
        text_report = render_table(report)
        page = Page(render_html(report))
        body = page.all_text
        leaked = sorted(t for t in tokens if shown(t, body) and not shown(t, text_report))
        assert not leaked, f"{task_id}: anchor values on the page only: {leaked[:5]}"
        assert not outside_references(page)


def test_failed_gates_come_first_and_the_failure_is_explained():
    report = score_path(str(SLOPPY_DRAGON), DRAGON)
    text = render_html(report)
    gates = text[text.index('id="gates"'):]
    first_row = re.search(r"<tbody>\s*<tr>(.*?)</tr>", gates, re.S).group(1)
    assert "FAIL" in first_row and "q1.handles_count" in first_row and "225 == 223 + 1" in first_row
    assert "infeasible" in Page(text).all_text


def test_replayed_values_of_the_plan_are_shown_and_statement_values_withheld():
    dragon = score_path(oracle(DRAGON), DRAGON)
    values = {n: (v, why) for n, v, why in shown_replay_values(dragon)}
    assert values["q1.table_max_error"][0] == "0"                  # replayed from the artifact's own table
    assert values["q2.terminal_time_s"][0] is None                  # the statement alone determines it
    assert "statement alone" in values["q2.terminal_time_s"][1]
    beam = score_path(oracle("cumcm-2023-b-multibeam-lines"), "cumcm-2023-b-multibeam-lines")
    beam_values = {n: (v, why) for n, v, why in shown_replay_values(beam)}
    assert beam_values["q3.total_length_m"][0] == "125936"          # the plan's replay
    assert shown("125936", Page(render_html(beam)).all_text)


def test_a_replayed_value_equal_to_a_hidden_anchor_is_withheld(tmp_path):
    from dataclasses import replace

    from mmverify.reading.numbers import fraction_text
    from mmverify.render.report_html import hidden_anchor_values

    beam = score_path(oracle("cumcm-2023-b-multibeam-lines"), "cumcm-2023-b-multibeam-lines")
    name, value = sorted(beam.gates.replay.values.items())[0]
    # make one of the report's anchors a list (shown as "[n items]" in the text report) holding the replayed value
    m = beam.panel.metrics[0]
    pm = replace(m.per_paper[0], anchor=[fraction_text(value), "1"])
    panel = replace(beam.panel, metrics=(replace(m, per_paper=(pm,) + m.per_paper[1:]),) + beam.panel.metrics[1:])
    doctored = replace(beam, panel=panel)
    assert value in hidden_anchor_values(doctored)
    got = {n: (v, why) for n, v, why in shown_replay_values(doctored)}
    assert got[name] == (None, "withheld: equal to an anchor value the text report does not show")


def test_strings_from_the_artifact_and_its_name_are_text(tmp_path):
    data = json.loads(SLOPPY_DRAGON.read_text(encoding="utf-8"))
    data["paper_title"] = "<script>alert(1)</script>"
    data["experiment_result"]["q1"]["handles"] = "<img src=x onerror=alert(1)>"
    path = tmp_path / '<b onclick="x">run<i>.json'
    path.write_text(json.dumps(data), encoding="utf-8")
    report = score_path(str(path), DRAGON)
    text = render_html(report)
    page = Page(text)
    assert not outside_references(page) and page.scripts == 1
    assert "<img" not in text and '<b onclick' not in text
    assert '<b onclick="x">run<i>.json' in page.all_text


def run(*args):
    return subprocess.run([sys.executable, "-m", "mmverify", *map(str, args)], capture_output=True, text=True,
                          timeout=300)


def test_cli_score_format_html_both_readings_of_the_command_line_agree():
    fast = run("score", SLOPPY_DRAGON, "--format", "html")          # the plain command line: no click
    assert fast.returncode == 1 and fast.stdout.startswith("<!DOCTYPE html>")
    slow = CliRunner().invoke(main, ["score", str(SLOPPY_DRAGON), "--format", "html"])
    assert slow.exit_code == 1 and slow.stdout == fast.stdout
    ok = run("score", oracle(DRAGON), "--format=html")
    assert ok.returncode == 0 and "q1.table_max_error" in ok.stdout


def test_cli_score_html_takes_one_artifact_and_pages_an_error(tmp_path):
    r = run("score", SLOPPY_DRAGON, oracle(DRAGON), "--format", "html")
    assert r.returncode == 2 and "one artifact" in r.stderr
    broken = tmp_path / f"{DRAGON}_result.json"
    broken.write_text("{not json", encoding="utf-8")
    r = run("score", broken, "--format", "html")
    assert r.returncode == 1 and r.stdout.startswith("<!DOCTYPE html>")
    assert not outside_references(Page(r.stdout))
