"""Judge scores: reading CSV and JSON Lines (every bad row reported with its
line, never a crash), the exact Spearman rank correlation, and the cells where
a judge rates an infeasible run highly. Judge scores never change the board."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from mmverify.scoring.board_render import board_dict
from mmverify.scoring.judge import average_ranks, compare, judge_dict, judge_lines, parse_judge, spearman

from tests.render.kit import make_board

CSV = """entry,task,score,max,source,note
alpha,t-a,8.5,10,judge-1,fine
alpha,t-b,9,10,judge-1,
beta,t-a,2,10,judge-1,
beta,t-b,9.5,10,judge-1,very fluent
"""


def board():
    # alpha: scored on both; beta: infeasible on t-b (a hard gate), low on t-a
    return make_board({("alpha", "t-a", 0): ("scored", "9/10"), ("alpha", "t-b", 0): ("scored", "3/4"),
                       ("beta", "t-a", 0): ("scored", "1/5"), ("beta", "t-b", 0): ("infeasible", None)}, "alpha")


def test_csv_rows_are_read_exactly_and_put_on_zero_one():
    jf = parse_judge(CSV, "j.csv")
    assert jf.kind == "csv" and not jf.problems
    assert [(s.entry, s.task, s.raw, s.max, s.line) for s in jf.scores][:2] == [
        ("alpha", "t-a", Fraction(17, 2), Fraction(10), 2), ("alpha", "t-b", Fraction(9), Fraction(10), 3)]
    assert jf.scores[0].score == Fraction(17, 20) and jf.scores[0].note == "fine"
    assert jf.sources == ("judge-1",)


def test_jsonl_rows_and_the_kind_sniffed_from_the_text():
    text = ('{"entry": "alpha", "task": "t-a", "score": 0.85, "source": "j"}\n\n'
            '{"entry": "beta", "task": "t-b", "score": "7", "max": 10, "source": "j", "x-run": 3}\n')
    jf = parse_judge(text, "scores.txt")
    assert jf.kind == "jsonl" and not jf.problems
    assert [s.score for s in jf.scores] == [Fraction(17, 20), Fraction(7, 10)]
    assert [s.line for s in jf.scores] == [1, 3]


def test_bad_rows_are_reported_with_line_numbers_and_left_out():
    text = "\n".join([
        '{"entry": "alpha", "task": "t-a", "score": 0.5, "source": "j"}',      # 1 ok
        '{"entry": "alpha", "task": "t-a", "score": 0.6, "source": "j"}',      # 2 duplicate
        'not json',                                                            # 3
        '[1, 2]',                                                              # 4 not an object
        '{"entry": "alpha", "task": "t-b", "score": NaN, "source": "j"}',      # 5 non-finite
        '{"entry": "alpha", "task": "t-b", "score": 1.5, "source": "j"}',      # 6 out of range
        '{"entry": "", "task": "t-b", "score": 0.5}',                          # 7 empty entry, no source
        '{"entry": "a", "task": "t-b", "score": true, "source": "j"}',         # 8 bool is not a number
        '{"entry": "a", "task": "t-b", "score": 1e999, "source": "j"}',        # 9 huge exponent
        '{"entry": "a", "task": "t-b", "score": 0.5, "source": "j", "k": 1}',  # 10 unknown key
        '{"entry": "a", "entry": "b", "task": "t-b", "score": 0.5, "source": "j"}',  # 11 duplicate key
        '{"entry": "a", "task": "t-b", "score": 0.5, "max": 0, "source": "j"}',     # 12 max 0
        '{"entry": "a", "task": "t-b", "score": ' + "9" * 5000 + ', "source": "j"}',  # 13 over-long integer
    ])
    jf = parse_judge(text, "j.jsonl")
    assert [s.line for s in jf.scores] == [1]
    assert [p.line for p in jf.problems] == list(range(2, 14))
    msgs = {p.line: p.message for p in jf.problems}
    assert "line 1 is kept" in msgs[2] and "not JSON" in msgs[3] and "not a JSON object" in msgs[4]
    assert "NaN" in msgs[5] and "outside [0, 1]" in msgs[6] and "source" in msgs[7] and "entry" in msgs[7]
    assert "'k'" in msgs[10] and "duplicate key" in msgs[11] and "max" in msgs[12]


def test_csv_problems_header_and_ragged_rows():
    assert parse_judge("", "j.csv").problems[0].message.startswith("no header line")
    jf = parse_judge("entry,task,score\nalpha,t-a,1\n", "j.csv")
    assert not jf.scores and "missing: source" in jf.problems[0].message and jf.problems[0].line == 1
    jf = parse_judge("entry,task,score,source,extra\nalpha,t-a,1,j,z\nalpha,t-b,0.5\nbeta,t-a,abc,j,\n", "j.csv")
    assert [s.line for s in jf.scores] == [2]
    assert [(p.line, p.message[:12]) for p in jf.problems] == [
        (1, "unknown colu"), (3, "3 field(s) w"), (4, "score must b")]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300), st.sampled_from(["j.csv", "j.jsonl", "j"]))
def test_no_text_makes_the_reader_raise(text, name):
    jf = parse_judge(text, name)
    assert all(p.line is None or p.line >= 1 for p in jf.problems)
    assert all(0 <= s.score <= 1 for s in jf.scores)


# ----------------------------------------------------------------- Spearman

def numpy_spearman(xs, ys):
    rx = np.array([float(r) for r in average_ranks(xs)])
    ry = np.array([float(r) for r in average_ranks(ys)])
    return float(np.corrcoef(rx, ry)[0, 1])


def test_spearman_known_values():
    f = [Fraction(x) for x in (1, 2, 3, 4)]
    r2, sign, why = spearman(f, f)
    assert (r2, sign, why) == (1, 1, None)
    r2, sign, _ = spearman(f, f[::-1])
    assert (r2, sign) == (1, -1)
    assert average_ranks([Fraction(5), Fraction(1), Fraction(5)]) == [Fraction(5, 2), 1, Fraction(5, 2)]
    assert spearman(f[:1], f[:1])[2].startswith("1 cell")
    assert spearman([Fraction(1)] * 3, f[:3])[2] == "every judge score is the same"
    assert spearman(f[:3], [Fraction(1)] * 3)[2] == "every O-EVAL is the same"


pairs = st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), min_size=2, max_size=25)


@settings(max_examples=200, deadline=None)
@given(pairs, st.randoms(use_true_random=False))
def test_spearman_agrees_with_numpy_and_ignores_row_order(data, rnd):
    xs, ys = [Fraction(a) for a, _ in data], [Fraction(b) for _, b in data]
    r2, sign, why = spearman(xs, ys)
    shuffled = list(zip(xs, ys))
    rnd.shuffle(shuffled)
    assert spearman([a for a, _ in shuffled], [b for _, b in shuffled]) == (r2, sign, why)
    if why is None:
        rho = sign * math.sqrt(r2)
        assert abs(rho - numpy_spearman(xs, ys)) < 1e-9
        assert -1 <= rho <= 1
        # a strictly increasing transform of the judge's scale changes nothing
        assert spearman([x * x * x + 3 for x in xs], ys) == (r2, sign, why)


# ----------------------------------------------------------------- against a board

def test_judge_high_on_an_infeasible_run_is_flagged():
    cmp = compare(board(), parse_judge(CSV, "j.csv"))
    flagged = [(c.judge.entry, c.judge.task) for c in cmp.disagreements]
    assert flagged == [("beta", "t-b")]           # 9.5/10 on a run a hard gate zeroed
    (corr,) = cmp.correlations
    assert corr.n == 4 and corr.rho is not None
    assert cmp.entry_mean("judge-1", "alpha") == Fraction(35, 40)
    text = "\n".join(judge_lines(cmp))
    assert "judge high on an infeasible run" in text and "beta on t-b" in text


def test_a_low_judge_score_on_an_infeasible_run_is_not_a_disagreement():
    low = CSV.replace("beta,t-b,9.5", "beta,t-b,1")
    assert compare(board(), parse_judge(low, "j.csv")).disagreements == ()


def test_rows_naming_what_the_board_does_not_hold_are_listed():
    text = CSV + "gamma,t-a,5,10,judge-1,\nalpha,t-z,5,10,judge-1,\n"
    cmp = compare(board(), parse_judge(text, "j.csv"))
    assert [(p.line, p.message) for p in cmp.unmatched] == [
        (6, "entry 'gamma' is not on the board"), (7, "task 't-z' is not on the board")]
    d = judge_dict(cmp)
    assert d["enters_oeval"] is False and [p["line"] for p in d["problems"]] == [6, 7]


def test_judge_scores_never_change_the_board():
    b = board()
    before = board_dict(b)
    cmp = compare(b, parse_judge(CSV, "j.csv"))
    assert board_dict(b) == before
    assert cmp.cells and all(c.oeval == next(tr.oeval for er in b.entries if er.entry == c.judge.entry
                                             for tr in er.tasks if tr.task == c.judge.task) for c in cmp.cells)
