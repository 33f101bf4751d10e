"""``mmverify board MANIFEST --baseline ENTRY``: many runs into one leaderboard.

Exit codes: 0 the board was produced; 1 the board was produced but some
manifest rows could not be processed as written (malformed or duplicate rows,
internal errors, artifacts over the time cap; each is listed); 2 usage
(unreadable manifest, unknown baseline, or ``--plot`` without matplotlib,
in which case the board is still printed); 3 an anchor definition error.
"""
from __future__ import annotations

import contextlib
import os
import sys

import click

from mmverify.cli import EXIT_OK, EXIT_USAGE, EXIT_VERDICT

from .common import anchors_option, executor_options, format_option, task_errors

PLOT_HINT = "pip install 'mmverify[plot]'"


@contextlib.contextmanager
def _progress(enabled: bool, total: int):
    """A progress bar on stderr advanced once per finished row, or nothing."""
    if not enabled:
        yield None
        return
    with click.progressbar(length=total, label="scoring", file=sys.stderr, show_pos=True) as bar:
        yield lambda i, row, reused: bar.update(1)


def build(manifest_path: str, baseline: str, anchors_dir: str | None = None, *, seed: int = 0,
          replicates: int = 2000, output: str | None = None, timeout_s: float | None = None,
          run_gates: bool = True, progress: bool = False, executor=None, wait: bool = False):
    """Read, score and aggregate a manifest. Returns (board, results, stats).
    ``executor``: where the rows are scored (see :mod:`mmverify.batch.executors`)."""
    from mmverify.batch.manifest import load_tasks_for, read_manifest, score_manifest
    from mmverify.scoring.board import TaskInfo, build_board
    from mmverify.tasks import load_index

    index = load_index(anchors_dir)
    known = [t["id"] for t in index]
    manifest = read_manifest(manifest_path, known)
    tasks = load_tasks_for(manifest, anchors_dir)
    with _progress(progress, len(manifest.rows)) as on_row:
        results, stats = score_manifest(manifest, tasks, run_gates=run_gates, timeout_s=timeout_s, output=output,
                                        on_row=on_row, executor=executor, wait=wait)
    infos = [TaskInfo(t.id, t.suite, t.headline, t.headline_reason, t.title)
             for t in (tasks[tid] for tid in known if tid in tasks)]
    board = build_board(results, infos, baseline, bootstrap_replicates=replicates, bootstrap_seed=seed,
                        manifest={"name": manifest.name, "sha256": manifest.sha256, "gates_run": run_gates})
    return board, results, stats


def plot_board(board, file: str) -> None:
    """O-EVAL against cost (log axis) and per-suite bars, as a PNG (or any
    format matplotlib infers from the file name). Raises ImportError when
    matplotlib is not installed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    entries = list(board.entries)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.8))
    with_cost = [er for er in entries if er.cost_usd is not None and er.cost_usd > 0 and er.headline.mean is not None]
    if with_cost:
        xs = [float(er.cost_usd) for er in with_cost]
        ys = [float(er.headline.mean) * 100 for er in with_cost]
        errs = [er.headline.sd * 100 if er.headline.sd is not None else 0.0 for er in with_cost]
        ax1.errorbar(xs, ys, yerr=errs, fmt="o", capsize=3)
        for er, x, y in zip(with_cost, xs, ys):
            ax1.annotate(er.entry, (x, y), textcoords="offset points", xytext=(5, 5), fontsize=8)
        ax1.set_xscale("log")
    else:
        ax1.text(0.5, 0.5, "no cost data in the manifest", ha="center", va="center", transform=ax1.transAxes)
    ax1.set_xlabel("total cost (USD, log scale)")
    ax1.set_ylabel("headline O-EVAL (%), bars: sd over seeds")
    ax1.set_title("O-EVAL against cost")
    suites = list(board.suites)
    width = 0.8 / max(1, len(suites))
    for i, su in enumerate(suites):
        vals = [float(er.suites[su].mean) * 100 if er.suites[su].mean is not None else 0.0 for er in entries]
        ax2.bar([k + i * width for k in range(len(entries))], vals, width, label=su)
    ax2.set_xticks([k + width * (len(suites) - 1) / 2 for k in range(len(entries))])
    ax2.set_xticklabels([er.entry for er in entries], rotation=30, ha="right", fontsize=8)
    ax2.set_ylabel("O-EVAL (%)")
    ax2.set_title("per suite (headline tasks)")
    if suites:
        ax2.legend()
    fig.tight_layout()
    fig.savefig(file, dpi=120, metadata={"Software": None} if file.lower().endswith(".png") else None)
    plt.close(fig)


@click.command()
@click.argument("manifest", type=click.Path(dir_okay=False))
@click.option("--baseline", required=True, help="entry whose per-task O-EVAL is the MULTI-BO baseline")
@anchors_option
@format_option
@click.option("--plot", "plot_file", type=click.Path(dir_okay=False), default=None,
              help="also write a plot (PNG): O-EVAL against cost, per-suite bars (needs mmverify[plot])")
@click.option("--html", "html_file", type=click.Path(dir_okay=False), default=None,
              help="also write the board as one self-contained HTML page (tables, plots, every run's section)")
@click.option("--judge", "judge_file", type=click.Path(dir_okay=False), default=None,
              help="judge scores per entry and task (CSV or JSON Lines: entry, task, score, source), shown beside "
                   "O-EVAL with their rank correlation; they never enter O-EVAL")
@click.option("--seed", type=int, default=0, show_default=True, help="bootstrap seed")
@click.option("--bootstrap", "replicates", type=click.IntRange(min=0), default=2000, show_default=True,
              help="bootstrap replicates (0: no intervals)")
@click.option("--output", type=click.Path(dir_okay=False), default=None,
              help="JSON Lines file of per-row results, flushed per row; an existing file is resumed")
@click.option("--timeout-s", type=click.FloatRange(min=0, min_open=True), default=None,
              help="time cap per artifact in seconds (an artifact over it is an error row)")
@click.option("--no-gates", is_flag=True, help="closeness only: skip the feasibility gates (diagnostic)")
@executor_options
@task_errors
def board(manifest, baseline, anchors_dir, fmt, plot_file, html_file, judge_file, seed, replicates, output, timeout_s,
          no_gates, executor, wait):
    """Score every row of MANIFEST (JSON Lines: entry, task, seed, artifact, ...)
    and print the leaderboard: O-EVAL +- sd over seeds, suites, MULTI-BO against
    --baseline, cost, hard-gate zeroes, missing artifacts, bootstrap intervals."""
    from mmverify.batch.engine import OutputBusy, time_cap_available
    from mmverify.batch.executors import ExecutorUnavailable
    from mmverify.batch.manifest import ManifestError
    from mmverify.scoring.board import ROW_PROBLEMS, BoardError
    from mmverify.scoring.board_render import render

    if timeout_s is not None and not time_cap_available():
        click.echo("warning: --timeout-s needs POSIX signals on the main thread; running without a time cap",
                   err=True)
    try:
        result, results, stats = build(manifest, baseline, anchors_dir, seed=seed, replicates=replicates,
                                       output=output, timeout_s=timeout_s, run_gates=not no_gates,
                                       progress=sys.stderr.isatty(), executor=executor, wait=wait)
    except (ManifestError, BoardError, OutputBusy, ExecutorUnavailable) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    judge = None
    if judge_file is not None:
        from .board_extras import JudgeFileError, read_judge

        try:
            judge = read_judge(judge_file, result)
        except JudgeFileError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(EXIT_USAGE)
    if judge is None:
        click.echo(render(result, fmt), nl=False)
    else:
        from .board_extras import rendered

        click.echo(rendered(result, fmt, judge), nl=False)
    if output is not None:
        click.echo(f"{len(results)} result row{'' if len(results) == 1 else 's'} in {output} ({stats.scored} scored now, {stats.reused} reused"
                   + (f", {stats.dropped_lines} torn/unreadable lines dropped" if stats.dropped_lines else "")
                   + (f", {stats.lost} lost with their worker (error rows, retried on resume)" if stats.lost else "")
                   + ")", err=True)
    code = EXIT_OK
    problems = [e for e in result.errors if e["code"] in ROW_PROBLEMS or not e["attributed"]]
    if problems:
        click.echo(f"warning: {len(problems)} manifest row(s) could not be processed as written "
                   "(listed under row problems)", err=True)
        code = EXIT_VERDICT
    if html_file is not None:
        from .board_extras import write_html

        try:
            write_html(result, html_file, judge, anchors_dir)
        except OSError as exc:
            click.echo(f"error: cannot write {html_file}: {exc.strerror or exc}", err=True)
            sys.exit(EXIT_USAGE)
        click.echo(f"HTML board written to {os.path.abspath(html_file)}", err=True)
    if plot_file is not None:
        try:
            plot_board(result, plot_file)
        except ImportError:
            click.echo(f"error: --plot needs matplotlib, which is not installed; install it with: {PLOT_HINT}",
                       err=True)
            sys.exit(EXIT_USAGE)
        click.echo(f"plot written to {os.path.abspath(plot_file)}", err=True)
    sys.exit(code)
