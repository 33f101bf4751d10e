"""Board: manifest reading, aggregation, rendering, plot, exit codes (small real tasks)."""
from __future__ import annotations

import json
import os
import re
import sys
from fractions import Fraction

import pytest
from click.testing import CliRunner

from mmverify.cli import main
from mmverify.pipeline.evaluate import score_path
from mmverify.batch.manifest import read_manifest
from tests.helpers.board_kit import (check_board_against, expected_board, frac, run_board, speed_artifact,
                            synthetic_anchors, write, write_manifest)

SUITE = {"t-a": "CUMCM", "t-b": "MCM", "t-c": "MCM"}
HEADLINE = {"t-a": True, "t-b": True, "t-c": False}


@pytest.fixture(scope="module")
def anchors(tmp_path_factory):
    return synthetic_anchors(str(tmp_path_factory.mktemp("board-anchors") / "anchors"))


def board_cli(*args, **kw):
    """In-process CLI (fast); returns click's Result."""
    return CliRunner().invoke(main, ["board", *args], catch_exceptions=False, **kw)


# speeds per (entry, seed): baseline slightly short of the anchor, alpha at the
# anchor, beta further short; pitch overshoot on t-b for beta
PLAN = {
    "base": {0: "1.2", 1: "1.18", 2: "1.21"},
    "alpha": {0: "1.246266", 1: "1.23", 2: "1.246266"},
    "beta": {0: "1.1", 1: "1.15", 2: "1.12"},
}


@pytest.fixture()
def small_run(tmp_path, anchors):
    """3 entries x 3 tasks x 3 seeds with a hard-gate break, a dropped file,
    a null artifact and an absent row."""
    rows = []
    cells_spec = {}
    for e, seeds in PLAN.items():
        for t in ("t-a", "t-b", "t-c"):
            for s, speed in seeds.items():
                path = f"runs/{e}/s{s}/{t}_result.json"
                pitch = "0.43" if (e == "beta" and t == "t-b") else "0.4"
                if e == "beta" and t == "t-a" and s == 1:
                    speed = "5"                                  # hard gate speed <= 3
                write(str(tmp_path / path), speed_artifact(speed, pitch))
                rows.append({"entry": e, "task": t, "seed": s, "artifact": path, "cost_usd": 0.25 if e != "base" else 0.1,
                             "wall_s": 10, "model": f"m-{e}", "harness": "h"})
    # alpha loses one file, beta has a null artifact and one row absent
    os.remove(str(tmp_path / "runs/alpha/s2/t-b_result.json"))
    for r in rows:
        if (r["entry"], r["task"], r["seed"]) == ("beta", "t-b", 0):
            r["artifact"] = None
    rows = [r for r in rows if (r["entry"], r["task"], r["seed"]) != ("beta", "t-c", 2)]
    manifest = write_manifest(str(tmp_path / "runs.jsonl"), rows)
    for r in rows:
        key = (r["entry"], r["task"], r["seed"])
        if r["artifact"] is None or not os.path.exists(tmp_path / r["artifact"]):
            cells_spec[key] = ("missing", Fraction(0))
        else:
            rep = score_path(str(tmp_path / r["artifact"]), r["task"], anchors)
            cells_spec[key] = (rep.status, rep.oeval)
    cells_spec[("beta", "t-c", 2)] = ("absent", Fraction(0))
    return manifest, cells_spec


def test_small_board_matches_independent_computation(small_run, anchors):
    manifest, cells = small_run
    r = board_cli(manifest, "--baseline", "base", "--anchors", anchors, "--format", "json")
    assert r.exit_code == 0, r.output
    board = json.loads(r.stdout)
    exp = expected_board(cells, SUITE, HEADLINE, "base")
    check_board_against(board, exp)
    assert board["tasks"]["headline"] == ["t-a", "t-b"]
    assert board["tasks"]["non_headline"] == [{"id": "t-c", "reason": "literature split (test)"}]
    assert board["tasks"]["suites"] == {"CUMCM": ["t-a"], "MCM": ["t-b"]}
    by = {er["entry"]: er for er in board["entries"]}
    assert by["base"]["multi_bo_exact"] == "1" and by["base"]["multi_bo"] == 1.0
    assert by["beta"]["counts"]["hard_gate_zeroes"] == 1
    # a null artifact is counted as such, not as an artifact file that is absent
    assert by["beta"]["counts"]["null_artifacts"] == 1 and by["beta"]["counts"]["missing_artifacts"] == 0
    assert by["beta"]["counts"]["absent_rows"] == 1 and by["beta"]["counts"]["missing"] == 2
    assert by["alpha"]["counts"]["missing"] == 1 and by["alpha"]["counts"]["missing_artifacts"] == 1
    text = board_cli(manifest, "--baseline", "base", "--anchors", anchors).stdout
    assert ('beta: ' in text and '0 artifact files absent, 1 rows with "artifact": null, 1 without a manifest row'
            in text)
    # costs are summed exactly, per entry, over the rows that carry one
    assert by["base"]["cost_usd_exact"] == "0.9" and by["alpha"]["cost_usd_exact"] == "2.25"
    assert by["beta"]["cost_usd_exact"] == "2" and by["beta"]["cost_rows"] == 8
    assert by["beta"]["models"] == ["m-beta"] and by["beta"]["harnesses"] == ["h"]
    # the gate zero is visible cell by cell, with the gate that fired
    ta = next(t for t in by["beta"]["tasks"] if t["task"] == "t-a")
    cell = next(c for c in ta["cells"] if c["seed"] == 1)
    assert cell["status"] == "infeasible" and cell["hard_gates_failed"] == ["speed_cap"] and cell["oeval_exact"] == "0"
    # non-headline task excluded from the headline mean: recompute with it included and see it differs
    with_c = expected_board(cells, SUITE, {"t-a": True, "t-b": True, "t-c": True}, "base")
    assert any(with_c[e]["mean"] != frac(by[e]["headline"]["oeval_exact"]) for e in by)


def test_missing_cells_score_zero_and_minus_one(tmp_path, anchors):
    rows = []
    for e in ("base", "gappy"):
        for t in ("t-a", "t-b"):
            p = f"{e}/{t}.json"
            write(str(tmp_path / p), speed_artifact("1.2"))
            rows.append({"entry": e, "task": t, "seed": 0, "artifact": p})
    rows[3]["artifact"] = "gappy/not-there.json"
    m = write_manifest(str(tmp_path / "m.jsonl"), rows)
    r = board_cli(m, "--baseline", "base", "--anchors", anchors, "--format", "json")
    board = json.loads(r.stdout)
    gappy = next(er for er in board["entries"] if er["entry"] == "gappy")
    tb = next(t for t in gappy["tasks"] if t["task"] == "t-b")
    assert tb["oeval_exact"] == "0" and tb["forced"] and tb["bo"]["b_exact"] == "-1"
    assert tb["bo"]["rule"] == "forced_minus_one"
    assert tb["cells"][0]["status"] == "missing"
    assert gappy["counts"]["missing"] == 1 and gappy["counts"]["missing_artifacts"] == 1
    # MULTI-BO = 1 + (0 + (-1)) / 2
    assert gappy["multi_bo_exact"] == "0.5"
    text = board_cli(m, "--baseline", "base", "--anchors", anchors).stdout
    assert re.search(r"gappy: 2 cells, 1 scored, 0 hard-gate zeroes, 0 invalid, 0 errors, 1 missing", text)
    assert re.search(r"^2\s+gappy\s.*\s1$", text, re.M)   # the missing column of the summary table


def test_forced_over_seeds_and_baseline_forced(tmp_path, anchors):
    """A task is forced -1 only when every seed is forced; when the baseline is
    forced on the same task too, the term is 0 (both_forced) and the baseline
    against itself stays exactly 1."""
    rows = []
    for e in ("base", "x"):
        for s in (0, 1):
            for t in ("t-a", "t-b"):
                p = f"{e}/{s}/{t}.json"
                write(str(tmp_path / p), speed_artifact("1.2"))
                rows.append({"entry": e, "task": t, "seed": s, "artifact": p})
    for r in rows:
        if r["task"] == "t-b" and (r["entry"] == "base" or r["seed"] == 0):
            r["artifact"] = None          # base: t-b forced on both seeds; x: only on seed 0
    m = write_manifest(str(tmp_path / "m.jsonl"), rows)
    board = json.loads(board_cli(m, "--baseline", "base", "--anchors", anchors, "--format", "json").stdout)
    by = {er["entry"]: er for er in board["entries"]}
    assert by["base"]["multi_bo_exact"] == "1"
    btb = next(t for t in by["base"]["tasks"] if t["task"] == "t-b")
    assert btb["forced"] and btb["bo"]["rule"] == "both_forced" and btb["bo"]["b_exact"] == "0"
    xtb = next(t for t in by["x"]["tasks"] if t["task"] == "t-b")
    one = score_path(str(tmp_path / "x/1/t-b.json"), "t-b", anchors).oeval
    assert not xtb["forced"] and xtb["forced_seeds"] == 1 and frac(xtb["oeval_exact"]) == one / 2
    # baseline f = 0 (forced) -> b = (O - 0) / (1 - 0) = O
    assert frac(xtb["bo"]["b_exact"]) == one / 2 and xtb["bo"]["rule"] == "gap_closed"


def test_single_seed_has_no_sd(tmp_path, anchors):
    rows = []
    for e in ("base", "x"):
        p = f"{e}.json"
        write(str(tmp_path / p), speed_artifact("1.2" if e == "base" else "1.1"))
        rows.append({"entry": e, "task": "t-a", "seed": "only", "artifact": p})
    m = write_manifest(str(tmp_path / "m.jsonl"), rows)
    board = json.loads(board_cli(m, "--baseline", "base", "--anchors", anchors, "--format", "json").stdout)
    for er in board["entries"]:
        assert er["headline"]["sd"] is None and er["headline"]["n_seeds"] == 1
    text = board_cli(m, "--baseline", "base", "--anchors", anchors).stdout
    assert "n/a" in text


def test_manifest_rows_every_line_accounted(tmp_path, anchors):
    write(str(tmp_path / "a.json"), speed_artifact())
    lines = [
        json.dumps({"entry": "base", "task": "t-a", "seed": 0, "artifact": "a.json", "x-note": "ok"}),
        "",
        "{not json",
        json.dumps({"entry": "base", "task": "t-a", "seed": 0, "artifact": "a.json"}),       # duplicate
        json.dumps({"entry": "base", "task": "no-such-task", "seed": 0, "artifact": "a.json"}),
        json.dumps({"entry": "base", "task": "t-b", "seed": 1.5, "artifact": "a.json"}),
        json.dumps({"entry": "base", "task": "t-b", "seed": 0, "artifact": "a.json", "cost": 1}),
        json.dumps({"entry": "base", "task": "t-b", "seed": 2, "artifact": "a.json", "cost_usd": -1}),
        json.dumps([1, 2]),
        json.dumps({"entry": "", "task": "t-b", "seed": 3, "artifact": "a.json"}),
        json.dumps({"entry": "base", "task": "t-b", "seed": 4}),
        '{"entry": "base", "entry": "b", "task": "t-b", "seed": 5, "artifact": null}',
        json.dumps({"entry": "base", "task": "t-b", "seed": 6, "artifact": None, "cost_usd": True}),
    ]
    m = write_manifest(str(tmp_path / "m.jsonl"), lines)
    man = read_manifest(m, ["t-a", "t-b", "t-c"])
    assert [r.line for r in man.rows] == [1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]
    probs = {r.line: (r.problems, r.duplicate_of) for r in man.rows}
    assert probs[1] == ((), None)
    assert "not valid JSON" in probs[3][0][0]
    assert probs[4] == ((), 1)
    assert "unknown task 'no-such-task'" in probs[5][0][0]
    assert "seed must be an integer" in probs[6][0][0]
    assert "unknown field 'cost'" in probs[7][0][0]
    assert "cost_usd must not be negative" in probs[8][0][0]
    assert "must be a JSON object" in probs[9][0][0]
    assert "entry must be a non-empty string" in probs[10][0][0]
    assert "missing field 'artifact'" in probs[11][0][0]
    assert "duplicate key 'entry'" in probs[12][0][0]
    assert "cost_usd must be a number" in probs[13][0][0]

    r = board_cli(m, "--baseline", "base", "--anchors", anchors, "--format", "json", "--output",
                  str(tmp_path / "out.jsonl"))
    assert r.exit_code == 1                           # board printed, rows not processable as written
    board = json.loads(r.stdout)
    assert board["rows"] == 12
    assert [p["line"] for p in board["row_problems"]] == [3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]
    out = [json.loads(x) for x in open(tmp_path / "out.jsonl")]
    assert [o["line"] for o in out] == [1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]
    # rows whose cell is known still count as that cell, scored as an error (O-EVAL 0, BO -1)
    by_line = {o["line"]: o for o in out}
    assert by_line[7]["attributed"] and by_line[7]["status"] == "error"
    assert by_line[7]["error"]["code"] == "manifest_row_invalid"
    assert not by_line[4]["attributed"] and by_line[4]["error"]["code"] == "duplicate_row"
    base = board["entries"][0]
    tb = next(t for t in base["tasks"] if t["task"] == "t-b")
    assert [c["seed"] for c in tb["cells"]] == [0, 2, 4, 6]     # seeds 1.5, 3 (empty entry) and 5 unattributable
    assert all(c["status"] == "error" for c in tb["cells"])
    assert "row problems (11)" in board_cli(m, "--baseline", "base", "--anchors", anchors).stdout


def test_usage_errors(tmp_path, anchors):
    write(str(tmp_path / "a.json"), speed_artifact())
    m = write_manifest(str(tmp_path / "m.jsonl"), [{"entry": "x", "task": "t-a", "seed": 0, "artifact": "a.json"}])
    r = board_cli(m, "--baseline", "nobody", "--anchors", anchors)
    assert r.exit_code == 2 and "baseline entry 'nobody'" in r.stderr
    r = board_cli(str(tmp_path / "absent.jsonl"), "--baseline", "x", "--anchors", anchors)
    assert r.exit_code == 2 and "cannot read manifest" in r.stderr


def _md_tables(text: str) -> list[list[list[str]]]:
    tables, cur = [], []
    for line in text.splitlines():
        if line.startswith("|"):
            cur.append([c.strip() for c in line.strip("|").split(" | ")])
        elif cur:
            tables.append(cur)
            cur = []
    if cur:
        tables.append(cur)
    return tables


def test_markdown_is_a_readable_table(small_run, anchors):
    manifest, _ = small_run
    r = board_cli(manifest, "--baseline", "base", "--anchors", anchors, "--format", "md")
    assert r.exit_code == 0
    md = r.stdout
    assert md.startswith("# mmverify board\n")
    tables = _md_tables(md)
    assert len(tables) == 3          # summary, headline tasks, non-headline tasks
    for t in tables:
        assert all(len(row) == len(t[0]) for row in t)
        assert all(set(c) <= set("-") for c in t[1])
    summary = tables[0]
    assert summary[0][:4] == ["rank", "entry", "seeds", "O-EVAL %"]
    assert "MULTI-BO" in summary[0] and "CUMCM %" in summary[0] and "MCM %" in summary[0]
    assert [row[1] for row in summary[2:]][-1] in ("alpha", "base (baseline)", "beta")
    base_row = next(row for row in summary[2:] if row[1] == "base (baseline)")
    assert base_row[summary[0].index("MULTI-BO")] == "1.000"
    assert [row[0] for row in tables[2][2:]] == ["t-c"]
    assert "## Non-headline tasks" in md and "literature split (test)" in md


def test_outputs_are_deterministic(small_run, anchors):
    manifest, _ = small_run
    for fmt in ("json", "md", "table"):
        a = board_cli(manifest, "--baseline", "base", "--anchors", anchors, "--format", fmt, "--seed", "7").stdout
        b = board_cli(manifest, "--baseline", "base", "--anchors", anchors, "--format", fmt, "--seed", "7").stdout
        assert a == b
    ja = json.loads(board_cli(manifest, "--baseline", "base", "--anchors", anchors, "--format", "json",
                              "--seed", "7").stdout)
    jc = json.loads(board_cli(manifest, "--baseline", "base", "--anchors", anchors, "--format", "json",
                              "--seed", "8").stdout)
    assert ja["bootstrap"]["seed"] == 7 and jc["bootstrap"]["seed"] == 8
    assert [e["headline"]["oeval_exact"] for e in ja["entries"]] == [e["headline"]["oeval_exact"] for e in jc["entries"]]


def test_bootstrap_intervals_and_significance(tmp_path, anchors):
    """Two identical entries: the difference is not significant; a much weaker
    entry is significantly below both."""
    rows = []
    speeds = {"base": ["1.2", "1.22", "1.21"], "twin": ["1.2", "1.22", "1.21"], "weak": ["1.0", "1.02", "1.01"]}
    for e, ss in speeds.items():
        for s, sp in enumerate(ss):
            for t in ("t-a", "t-b"):
                p = f"{e}/{s}/{t}.json"
                write(str(tmp_path / p), speed_artifact(sp))
                rows.append({"entry": e, "task": t, "seed": s, "artifact": p})
    m = write_manifest(str(tmp_path / "m.jsonl"), rows)
    r = board_cli(m, "--baseline", "base", "--anchors", anchors, "--format", "json", "--bootstrap", "500")
    board = json.loads(r.stdout)
    assert [e["entry"] for e in board["entries"]] == ["base", "twin", "weak"]   # tie broken by name
    for er in board["entries"]:
        ci = er["headline"]["ci"]
        assert ci["low"] <= er["headline"]["oeval"] <= ci["high"]
    d1, d2 = board["differences"]
    assert (d1["higher"], d1["lower"], d1["significant"]) == ("base", "twin", False)
    assert d1["diff_exact"] == "0" and d1["ci"]["low"] <= 0 <= d1["ci"]["high"]
    assert (d2["higher"], d2["lower"], d2["significant"]) == ("twin", "weak", True) and d2["ci"]["low"] > 0
    assert "Not significant" in board["statement"] and "#1 base vs #2 twin" in board["statement"]
    assert "weak" not in board["statement"]
    r = board_cli(m, "--baseline", "base", "--anchors", anchors, "--format", "json", "--bootstrap", "0")
    nb = json.loads(r.stdout)
    assert all(er["headline"]["ci"] is None for er in nb["entries"])
    assert "not assessed" in nb["statement"]


def test_unscorable_task_left_out_for_everyone(tmp_path, anchors):
    from tests.helpers.taskfactory import base_task, number_schema, paper, schema_for, write_task

    a2 = str(tmp_path / "anchors2")
    synthetic_anchors(a2)
    metrics = [{"id": "speed", "path": "result.speed", "unit": "m/s", "direction": "higher_is_better", "weight": 1,
                "band": {"rel": "0.1"}, "comparable": False, "comparable_reason": "test: scales differ"}]
    write_task(a2, base_task("t-z", metrics, [paper("P1", {"speed": "1.2"}, oracle=True)]),
               schema_for({"speed": number_schema("m/s", minimum=0)}), {"result": {"speed": 1.2}})
    rows = []
    for e in ("base", "x"):
        for t in ("t-a", "t-z"):
            p = f"{e}/{t}.json"
            write(str(tmp_path / p), speed_artifact("1.2" if e == "base" else "1.1"))
            rows.append({"entry": e, "task": t, "seed": 0, "artifact": p})
    m = write_manifest(str(tmp_path / "m.jsonl"), rows)
    board = json.loads(board_cli(m, "--baseline", "base", "--anchors", a2, "--format", "json").stdout)
    assert board["tasks"]["unscorable"] == ["t-z"] and board["tasks"]["headline"] == ["t-a"]
    for er in board["entries"]:
        tz = next(t for t in er["tasks"] if t["task"] == "t-z")
        assert tz["oeval"] is None and tz["bo"] is None and tz["cells"][0]["status"] == "not_scored"
        ta = next(t for t in er["tasks"] if t["task"] == "t-a")
        assert er["headline"]["oeval_exact"] == ta["oeval_exact"]


def test_plot_without_matplotlib_keeps_the_board(small_run, anchors, monkeypatch, tmp_path):
    manifest, _ = small_run
    monkeypatch.setitem(sys.modules, "matplotlib", None)     # import matplotlib -> ImportError
    png = tmp_path / "board.png"
    r = board_cli(manifest, "--baseline", "base", "--anchors", anchors, "--plot", str(png))
    assert r.exit_code == 2
    assert "pip install 'mmverify[plot]'" in r.stderr
    assert r.stdout.startswith("mmverify board\n") and "MULTI-BO" in r.stdout
    assert not png.exists()


def test_plot_writes_png(small_run, anchors, tmp_path):
    pytest.importorskip("matplotlib")
    manifest, _ = small_run
    png = tmp_path / "board.png"
    r = board_cli(manifest, "--baseline", "base", "--anchors", anchors, "--plot", str(png))
    assert r.exit_code == 0, r.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_end_to_end_subprocess(small_run, anchors, tmp_path):
    """The real CLI in a child process: the same JSON as in-process, and the
    progress bar stays off when stderr is not a terminal."""
    manifest, cells = small_run
    r = run_board(manifest, "--baseline", "base", "--anchors", anchors, "--format", "json", "--bootstrap", "200")
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    check_board_against(json.loads(r.stdout), expected_board(cells, SUITE, HEADLINE, "base"))
    inproc = board_cli(manifest, "--baseline", "base", "--anchors", anchors, "--format", "json", "--bootstrap", "200")
    assert inproc.stdout == r.stdout
