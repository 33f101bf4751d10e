"""Seeded percentile bootstrap for board entries over tasks and seeds.

Each replicate draws the headline tasks with replacement ONCE and uses the
same draw for every entry (differences between entries are paired on tasks),
and draws each entry's seeds with replacement (seeds are independent runs, so
they are not paired across entries). An entry's replicate statistic is the
mean of its cell values over the drawn tasks x drawn seeds, which on the full
sample is exactly its headline O-EVAL.

The generator is ``numpy.random.default_rng(seed)``; draws happen in a fixed
order (tasks, then each entry's seeds in the given entry order), so the same
inputs and seed give the same intervals. Values are rounded to 6 decimals.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np


def _counts(rng: np.random.Generator, replicates: int, n: int) -> np.ndarray:
    """(replicates, n) how often each index is drawn in n draws with replacement."""
    idx = rng.integers(0, n, size=(replicates, n))
    counts = np.zeros((replicates, n), dtype=np.float64)
    np.add.at(counts, (np.arange(replicates)[:, None], idx), 1.0)
    return counts


def _interval(samples: np.ndarray, estimate: float, level: float) -> tuple[float, float, float]:
    alpha = (1.0 - level) / 2.0
    low, high = np.percentile(samples, [100.0 * alpha, 100.0 * (1.0 - alpha)])
    return (round(float(estimate), 6), round(float(low), 6), round(float(high), 6))


def bootstrap_means(matrices: Mapping[str, Sequence[Sequence[float]]], order: Sequence[str],
                    replicates: int, seed: int, level: float = 0.95
                    ) -> tuple[dict[str, tuple[float, float, float]], list[tuple[float, float, float]]]:
    """Percentile intervals for each entry's mean and for the difference of
    each adjacent pair in ``order``.

    ``matrices[entry]`` is a tasks x seeds matrix of cell values (the same task
    rows, in the same order, for every entry). Returns ({entry: (estimate, low,
    high)}, [(estimate, low, high) for order[i] - order[i+1]])."""
    if replicates <= 0:
        raise ValueError("replicates must be positive")
    rng = np.random.default_rng(seed)
    n_tasks = len(next(iter(matrices.values())))
    task_counts = _counts(rng, replicates, n_tasks)
    stats: dict[str, np.ndarray] = {}
    estimates: dict[str, float] = {}
    for entry in order:
        m = np.asarray(matrices[entry], dtype=np.float64)
        if m.shape[0] != n_tasks:
            raise ValueError("every entry needs the same task rows")
        n_seeds = m.shape[1]
        seed_counts = _counts(rng, replicates, n_seeds)
        stats[entry] = ((task_counts @ m) * seed_counts).sum(axis=1) / (n_tasks * n_seeds)
        estimates[entry] = float(m.mean())
    cis = {e: _interval(stats[e], estimates[e], level) for e in order}
    diffs = [_interval(stats[a] - stats[b], estimates[a] - estimates[b], level) for a, b in zip(order, order[1:])]
    return cis, diffs
