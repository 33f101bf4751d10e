"""The board page: self-contained (nothing loaded from outside, every link
inside the page), every hostile string escaped, the heat map's cells linking
to existing run sections, the baseline comparison, judge columns apart from
O-EVAL, exclusions and corrections with their reasons, and the CLI."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mmverify.scoring.board_html import baseline_differences, render_html, task_notes
from mmverify.scoring.judge import compare, parse_judge
from mmverify.tasks import load_task

from .kit import Page, make_board, outside_references

REPO = Path(__file__).resolve().parents[2]
HOSTILE = ('<script>alert(1)</script>', '"><img src=x onerror=alert(1)>', "https://evil.example/a.png",
           "</style><style>body{background:url(https://evil.example/b)}", "\u202eevil\x1b[31m", "&amp;<b>")


def cells_for(entries, statuses=("scored", "scored", "scored")):
    out = {}
    for k, e in enumerate(entries):
        for j, t in enumerate(("t-a", "t-b", "t-c")):
            status = statuses[(j + k) % len(statuses)]
            out[(e, t, 0)] = (status, f"{(k + j) % 5 + 1}/6" if status == "scored" else None)
    return out


def check_page(text: str, entries) -> Page:
    page = Page(text)
    assert not outside_references(page), outside_references(page)
    assert page.scripts == 1                                  # the sorting script, nothing else
    assert len(page.styles) == 1 and "url(" not in page.styles[0] and "@import" not in page.styles[0]
    assert re.search(r'<meta http-equiv="Content-Security-Policy" content="default-src \'none\'', text)
    for href in page.hrefs():
        assert href[1:] in page.ids, f"link {href} to no element"
    body = page.all_text
    for e in entries:
        assert e.replace("\x1b", "\\x1b").replace("\u202e", "\\u202e") in body
    return page


def test_every_string_from_a_manifest_is_text_never_markup():
    entries = ["base", *HOSTILE]
    b = make_board(cells_for(entries, ("scored", "infeasible", "missing")), "base", replicates=50,
                   costs={e: "0.5" for e in HOSTILE})
    judge = compare(b, parse_judge("entry,task,score,source\n" + "".join(
        f'"{e.replace(chr(34), chr(34) * 2)}",t-b,0.9,"<i>judge</i>"\n' for e in entries), "j.csv"))
    text = render_html(b, judge=judge)
    page = check_page(text, entries)
    assert "<script>alert" not in text and "<img" not in text and "<i>judge</i>" not in text
    assert "&lt;i&gt;judge&lt;/i&gt;" in text
    assert "<i>judge</i>" in page.all_text                     # shown as text


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=4, unique=True))
def test_any_entry_names_give_a_self_contained_page_that_names_them(names):
    entries = ["base", *[n for n in names if n != "base"]]
    b = make_board(cells_for(entries, ("scored", "infeasible", "absent")), "base")
    check_page(render_html(b), [e for e in entries if e.isprintable()])


def test_heat_map_cells_link_to_each_runs_section():
    entries = ["base", "other"]
    b = make_board(cells_for(entries), "base")
    page = Page(render_html(b))
    runs = {h for h in page.hrefs() if h.startswith("#run-")}
    assert runs == {f"#run-{i}-{j}" for i in range(2) for j in range(3)}
    assert all(h[1:] in page.ids for h in runs)


def test_the_page_is_deterministic_and_names_suites_and_exclusions():
    b = make_board(cells_for(["base", "x"], ("scored", "infeasible")), "base", replicates=100)
    text = render_html(b)
    assert text == render_html(b)
    assert "literature split (test)" in text              # t-c left out of the headline, with its reason
    assert "a hard gate failed: speed_cap" in text          # the zeroed cell, with its gate
    assert "CUMCM %" in text and "MCM %" in text


def test_baseline_differences_are_paired_and_the_baseline_is_not_compared_with_itself():
    same = cells_for(["base"])
    twin = {("twin", t, s): v for (_, t, s), v in same.items()}
    worse = {("worse", t, s): ("infeasible", None) for (_, t, s) in same}
    b = make_board({**same, **twin, **worse}, "base", replicates=200)
    d = baseline_differences(b)
    assert set(d) == {"twin", "worse"}
    assert d["twin"].diff == 0 and d["twin"].significant is False
    base_mean = next(er.headline.mean for er in b.entries if er.entry == "base")
    assert d["worse"].diff == -base_mean
    assert d["worse"].ci.high <= 0
    assert baseline_differences(b) == d                      # seeded: the same intervals again
    assert all(v.ci is None for v in baseline_differences(make_board({**same, **worse}, "base")).values())


def test_judge_is_a_separate_column_and_leaves_the_scores_alone():
    b = make_board(cells_for(["base", "x"], ("scored", "infeasible")), "base")
    judge = compare(b, parse_judge("entry,task,score,source\nx,t-a,0.95,j1\nbase,t-a,0.2,j1\n", "j.csv"))
    with_judge, without = render_html(b, judge=judge), render_html(b)
    assert "judge 1: <b>j1</b>" in with_judge and "judge 1" not in without
    assert "Judge high on an infeasible run (1)" in with_judge

    def leaderboard_numbers(text):
        section = text[text.index('id="leaderboard"'):text.index('id="suites"')]
        return re.findall(r'data-v="([^"]*)"', section)
    # the judge adds its column; every O-EVAL, CI, MULTI-BO ... value is unchanged
    n_cols = len(re.findall(r"<th ", without[without.index('id="leaderboard"'):without.index("</thead>")]))
    a = leaderboard_numbers(with_judge)
    bb = leaderboard_numbers(without)
    per_row_with, per_row_without = len(a) // 2, len(bb) // 2
    assert per_row_with == per_row_without + 1 and n_cols
    assert [x for i, x in enumerate(a) if i % per_row_with != per_row_with - 1] == bb


def test_task_notes_carry_corrections_and_findings_with_their_reasons():
    notes = task_notes([load_task("cumcm-2024-a-dragon-dance")])
    corr = {n.metric: n for n in notes if n.kind == "correction"}
    assert "q2.terminal_time_s" in corr and "anchor corrected by replay" in corr["q2.terminal_time_s"].text
    assert "anchor corrected by publication" in corr["q5.max_head_speed"].text
    from types import SimpleNamespace

    paper = SimpleNamespace(paper_id="P1", excluded={"m4": "units differ"}, audit={
        "m1": {"reason": "kept as published", "source": "audit"},
        "m2": {"original": "7", "corrected_by": "replay", "reason": "r2"},
        "m3": {"original": "8", "reason": "recomputed"}})
    got = [(n.kind, n.metric, n.text) for n in task_notes([SimpleNamespace(id="t", panel=(paper,))])]
    assert got == [("finding", "m1", "kept as published; source: audit"),
                   ("correction", "m2", "paper reported 7; anchor corrected by replay; r2"),
                   ("correction", "m3", "paper reported 8; the anchor differs from the printed value; recomputed"),
                   ("exclusion", "m4", "units differ")]
    b = make_board(cells_for(["base"]), "base")
    assert "q2.terminal_time_s" in render_html(b, notes=notes)


# ----------------------------------------------------------------- the CLI

def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "mmverify", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


def test_cli_board_html_and_judge_on_the_shipped_examples(tmp_path):
    out = tmp_path / "out.html"
    r = run("board", REPO / "examples" / "board.jsonl", "--baseline", "oracle", "--bootstrap", "200",
            "--html", out, "--judge", REPO / "examples" / "judge.csv")
    assert r.returncode in (0, 1), r.stderr                # 1: a task that fails to load is a row problem
    assert "HTML board written to" in r.stderr
    text = out.read_text(encoding="utf-8")
    page = check_page(text, ["oracle", "sample", "sloppy"])
    assert "example-judge (rubric v1)" in page.all_text
    assert "judge high, run infeasible" in page.all_text     # sloppy's dragon dance: a hard gate zeroed it
    assert "Spearman" in r.stdout and "never part of O-EVAL" in r.stdout
    # the board's own JSON is the same with or without --judge, plus the judge key
    plain = json.loads(run("board", REPO / "examples" / "board.jsonl", "--baseline", "oracle", "--bootstrap", "0",
                           "--format", "json").stdout)
    judged = json.loads(run("board", REPO / "examples" / "board.jsonl", "--baseline", "oracle", "--bootstrap", "0",
                            "--format", "json", "--judge", REPO / "examples" / "judge.csv").stdout)
    assert judged.pop("judge")["enters_oeval"] is False
    assert judged == plain


def test_cli_judge_file_problems_are_usage_errors_only_for_the_file_as_a_whole(tmp_path):
    manifest = REPO / "examples" / "board.jsonl"
    r = run("board", manifest, "--baseline", "oracle", "--bootstrap", "0", "--judge", tmp_path / "nope.csv")
    assert r.returncode == 2 and "cannot read the judge file" in r.stderr
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"\xff\xfe\x00bad")
    r = run("board", manifest, "--baseline", "oracle", "--bootstrap", "0", "--judge", bad)
    assert r.returncode == 2 and "not UTF-8" in r.stderr
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"entry": "oracle", "task": "mcm-2023-c-wordle", "score": 0.9, "source": "j"}\nnot json\n',
                    encoding="utf-8")
    r = run("board", manifest, "--baseline", "oracle", "--bootstrap", "0", "--judge", rows)
    assert r.returncode in (0, 1) and "judge file line 2: not JSON" in r.stdout


def test_cli_html_to_an_unwritable_place_is_a_usage_error(tmp_path):
    r = run("board", REPO / "examples" / "board.jsonl", "--baseline", "oracle", "--bootstrap", "0",
            "--html", tmp_path / "no" / "such" / "dir" / "x.html")
    assert r.returncode == 2 and "cannot write" in r.stderr
    assert not os.path.exists(tmp_path / "no")
