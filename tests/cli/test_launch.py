"""The program's entry point: ``mmverify verify`` read without click.

:mod:`mmverify.launch` reads the plain command lines of ``verify`` from the
options' declaration and hands every other one to click. These tests hold the
two readings to each other on generated command lines, and run both paths
through the real program.
"""
import atexit
import gc
import json
import os
import subprocess
import sys

import click
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.helpers.taskfactory import SPEED_LIMIT, speed_task

from mmverify import clibase, launch
from mmverify.commands.verify import verify
from mmverify.plugin.verifier import VERIFY_OPTIONS

TID = "t-speed"


@pytest.fixture(scope="module")
def places(tmp_path_factory):
    base = tmp_path_factory.mktemp("launch")
    folder = base / "folder"
    folder.mkdir()
    file = base / "file.json"
    file.write_text("{}")
    return {"absent": str(base / "absent"), "folder": str(folder), "file": str(file)}


def _value(places):
    return st.sampled_from(["t-speed", "x", "", "-", "-x", "--task", "a=b", "ü", "0",
                            places["absent"], places["folder"], places["file"]])


def _token(places):
    names = [n for o in VERIFY_OPTIONS for n in o.names]
    odd = ["--tas", "--reward", "-h", "--help", "--", "--unknown", "-qq", "verify"]
    return st.one_of(
        st.sampled_from(names + odd),
        st.builds(lambda n, v: f"{n}={v}", st.sampled_from(names + ["--tas"]), _value(places)),
        _value(places))


def _click_params(argv, command=verify):
    """What click sets for ``mmverify <command> <argv>``, or None where it refuses (or prints help)."""
    try:
        ctx = command.make_context(command.name, list(argv))
    except (click.exceptions.ClickException, click.exceptions.Exit):
        return None
    return dict(ctx.params)


@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_a_command_line_read_without_click_is_read_as_click_reads_it(places, data):
    argv = data.draw(st.lists(_token(places), max_size=9))
    fast = launch.read_options(argv, VERIFY_OPTIONS)
    if fast is not None:
        assert fast == _click_params(argv), argv


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_every_plain_command_line_is_read_without_click(places, data):
    # each option at most once, in any order and either spelling; values that click takes as they are
    value = st.sampled_from(["t-speed", "x", "ü", places["absent"], places["folder"]])
    chosen = data.draw(st.permutations(VERIFY_OPTIONS))
    keep = data.draw(st.lists(st.booleans(), min_size=len(chosen), max_size=len(chosen)))
    argv, want = [], {o.dest: False if o.flag else None for o in VERIFY_OPTIONS}
    for option, kept in zip(chosen, keep):
        if not (kept or option.required):
            continue
        name = data.draw(st.sampled_from(option.names))
        if option.flag:
            argv.append(name)
            want[option.dest] = True
            continue
        v = data.draw(value)
        argv += data.draw(st.sampled_from([[name, v], [f"{name}={v}"]])) if name.startswith("--") else [name, v]
        want[option.dest] = v
    assert launch.read_options(argv, VERIFY_OPTIONS) == want == _click_params(argv)


@pytest.mark.parametrize("argv", [
    [],                                         # required options missing
    ["--task", "t"],                            # --reward-dir missing
    ["--task", "t", "--reward-dir"],            # no value
    ["--task", "t", "--reward-dir", "r", "--task", "u"],   # repeated (click keeps the last)
    ["--task", "t", "--reward-dir", "r", "--help"],
    ["--task", "t", "--reward-dir", "r", "--quiet=yes"],
    ["--task", "t", "--reward-dir", "r", "extra"],
    ["--task", "-q", "--reward-dir", "r"],      # a value that looks like an option
    ["--task=", "--reward-dir", "r"],           # an empty value
    ["--tas", "t", "--reward-dir", "r"],        # an abbreviation
])
def test_other_command_lines_are_left_to_click(argv):
    assert launch.read_options(argv, VERIFY_OPTIONS) is None


def test_a_file_where_a_folder_is_asked_for_is_left_to_click(places):
    argv = ["--task", "t", "--reward-dir", "r", "--anchors", places["file"]]
    assert launch.read_options(argv, VERIFY_OPTIONS) is None
    assert _click_params(argv) is None      # click: "Directory ... is a file."
    assert launch.read_options(argv[:-1] + [places["folder"]], VERIFY_OPTIONS) is not None


def test_help_and_usage_errors_still_come_from_click(capsys):
    with pytest.raises(SystemExit) as exit_:
        launch.main(["verify", "--help"])
    assert exit_.value.code == 0
    assert "--reward-dir PATH" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_:
        launch.main(["verify", "--task", "t"])
    assert exit_.value.code == 2
    assert "Missing option '--reward-dir'" in capsys.readouterr().err


# ------------------------------------------------------------ the real program

@pytest.fixture()
def anchors(tmp_path):
    return speed_task(str(tmp_path / "anchors"), TID, gates=[SPEED_LIMIT])


_SHOW_CLICK = "import atexit, sys; atexit.register(lambda: print('click loaded:', 'click' in sys.modules)); " \
              "from mmverify.launch import main; main()"


def _program(*args, cwd=None):
    return subprocess.run([sys.executable, "-c", _SHOW_CLICK, "verify", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=120)


def _files(folder):
    return {name: (folder / name).read_text() for name in ("reward.json", "reward-details.json")}


@pytest.mark.parametrize("broken", [False, True])
def test_both_paths_write_the_same_files_and_say_the_same(tmp_path, anchors, broken):
    oracle = os.path.join(anchors, TID, "oracle.json")
    art = tmp_path / "a.json"
    art.write_text("{not json" if broken else open(oracle).read())
    plain = ["--task", TID, "--artifact", str(art), "--anchors", anchors]
    fast = _program(*plain, "--reward-dir", str(tmp_path / "fast"))
    # the same run, given a repeated --task first: only click reads that line (it keeps the last)
    slow = _program("--task", "other", *plain, "--reward-dir", str(tmp_path / "slow"))
    assert fast.stdout.endswith("click loaded: False\n"), fast.stdout + fast.stderr
    assert slow.stdout.endswith("click loaded: True\n"), slow.stdout + slow.stderr
    assert fast.returncode == slow.returncode == (1 if broken else 0)
    assert fast.stdout.replace("fast", "slow") == slow.stdout.replace("True", "False")
    assert fast.stderr.replace("fast", "slow") == slow.stderr
    assert _files(tmp_path / "fast") == _files(tmp_path / "slow")
    reward = json.loads(_files(tmp_path / "fast")["reward.json"])
    assert reward == {"reward": 0.0 if broken else 1.0}


def test_an_unwritable_reward_folder_is_said_on_stderr_without_click(tmp_path, anchors):
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    r = _program("--task", TID, "--anchors", anchors, "--reward-dir", str(blocker / "sub"),
                 "--artifact", os.path.join(anchors, TID, "oracle.json"))
    assert r.returncode == 2
    assert r.stderr.startswith("error: cannot write into")
    assert r.stdout == "click loaded: False\n"


def test_the_quick_path_freezes_the_heap_at_exit_once(monkeypatch, tmp_path, anchors):
    registered = []
    monkeypatch.setattr(clibase, "_EXIT_FREEZE", [])
    monkeypatch.setattr(atexit, "register", lambda fn, *a, **k: registered.append(fn))
    for i in range(2):
        with pytest.raises(SystemExit) as exit_:
            launch.main(["verify", "--task", TID, "--anchors", anchors, "-q", "--reward-dir", str(tmp_path / str(i)),
                         "--artifact", os.path.join(anchors, TID, "oracle.json")])
        assert exit_.value.code == 0
    assert registered == [gc.freeze]


def test_the_line_said_never_carries_a_control_character(capsys):
    # a message may quote the artifact: an escape sequence in it reaches the terminal escaped
    from mmverify.plugin.verifier import _say

    _say("error: bad \x1b[31mvalue\x1b[0m\tand\u202eend")
    out = capsys.readouterr().out
    assert out == "error: bad \\x1b[31mvalue\\x1b[0m\\tand\\u202eend\n"
    assert out[:-1].isprintable()


# ------------------------------------------------------------ score, one artifact

def _score_click_params(argv):
    from mmverify.commands.score import score

    return _click_params(argv, score)


def _score_token(places):
    from mmverify.commands.score_plain import SCORE_OPTIONS

    names = [n for o in SCORE_OPTIONS for n in o.names]
    odd = ["--fail-under", "--output", "--timeout-s", "--executor", "--wait", "--form", "-h", "--", "--unknown"]
    values = st.sampled_from(["t-speed", "x", "", "-", "-x", "table", "json", "md", "csv", "verified", "paper",
                              "0.5", places["absent"], places["folder"], places["file"]])
    return st.one_of(st.sampled_from(names + odd), values,
                     st.builds(lambda n, v: f"{n}={v}", st.sampled_from(names + odd), values))


@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_a_score_line_read_without_click_is_read_as_click_reads_it(places, data):
    from mmverify.commands.score_plain import SCORE_OPTIONS

    argv = data.draw(st.lists(_score_token(places), max_size=8))
    fast = launch.read_options(argv, SCORE_OPTIONS, "artifacts")
    if fast is not None:
        slow = _score_click_params(argv)
        assert slow is not None, argv
        # what the line names is read alike; the options it cannot name are at click's defaults
        assert {k: slow[k] for k in fast} == fast, argv
        defaults = _score_click_params([places["absent"]])
        assert {k: v for k, v in slow.items() if k not in fast} == {k: v for k, v in defaults.items() if k not in fast}


@pytest.mark.parametrize("argv", [
    ["a.json", "b.json"],                       # several artifacts: click (and its progress bar)
    [],
    ["a.json", "--format", "csv"],              # not a choice
    ["a.json", "--fail-under", "0.5"],          # an option the plain line cannot name
    ["a.json", "--json", "--json"],
    ["--", "a.json"],
])
def test_other_score_lines_are_left_to_click(argv):
    from mmverify.commands.score_plain import SCORE_OPTIONS

    assert launch.read_options(argv, SCORE_OPTIONS, "artifacts") is None


def _score_program(*args):
    return subprocess.run([sys.executable, "-c", _SHOW_CLICK, "score", *args], capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("case", ["table", "json", "md", "broken", "unknown task"])
def test_both_score_paths_print_the_same(tmp_path, anchors, case):
    oracle = os.path.join(anchors, TID, "oracle.json")
    art = tmp_path / "a.json"
    art.write_text("{not json" if case == "broken" else open(oracle).read())
    task = "no-such-task" if case == "unknown task" else TID
    fmt = ["--format", case] if case in ("table", "json", "md") else []
    plain = [str(art), "--task", task, "--anchors", anchors, *fmt]
    fast = _score_program(*plain)
    slow_same = _score_program("--task", "other", *plain)          # repeated --task: only click reads it
    assert fast.stdout.endswith("click loaded: False\n"), fast.stdout + fast.stderr
    assert slow_same.stdout.endswith("click loaded: True\n")
    assert fast.returncode == slow_same.returncode == {"broken": 1, "unknown task": 3}.get(case, 0)
    assert fast.stdout.replace("click loaded: False", "") == slow_same.stdout.replace("click loaded: True", "")
    assert fast.stderr == slow_same.stderr


@pytest.mark.parametrize("text", ["plain", "a \x1b[31mred\x1b[0m word", "\x1b[1;32mbold\x1b[K", "tab\there", ""])
@pytest.mark.parametrize("nl", [True, False])
def test_score_output_is_written_as_click_writes_it(capsys, text, nl):
    # not a terminal: the ANSI sequences click's echo removes are removed alike
    from mmverify.clibase import echo

    click.echo(text, nl=nl)
    by_click = capsys.readouterr().out
    echo(text, nl=nl)
    assert capsys.readouterr().out == by_click
    click.echo(text, nl=nl, err=True)
    by_click = capsys.readouterr().err
    echo(text, nl=nl, err=True)
    assert capsys.readouterr().err == by_click
