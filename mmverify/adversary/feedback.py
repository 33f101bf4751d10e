"""A score-feedback search: what a policy trained on the reward could climb to.

Design notes: docs/architecture.md, `mmverify/adversary/feedback.py`.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from decimal import Decimal
from typing import Callable

from mmverify.reading import paths

from .build import generic, knowledge, leaves

FACTORS = tuple(Decimal(f) for f in ("0.5", "0.8", "0.9", "0.97", "0.99", "1.01", "1.03", "1.1", "1.25", "2"))
GRID = tuple(sorted({Decimal(i) / 50 for i in range(51)} | {Decimal(i) for i in range(31)}))
LINE_SHARE = Decimal("0.7")      # of the budget, at most, for the line search


@dataclass(frozen=True)
class Climb:
    """One search: the score it started from and ended at, the scores it used,
    the leaves it moved (path, from, to) and the final artifact."""

    start: float
    final: float
    calls: int
    moved: tuple[tuple[str, str, str], ...]
    artifact: dict


def climb(task, start: dict, budget: int, score: Callable[[dict], float] | None = None) -> Climb:
    """Search from ``start`` (left unchanged) with at most ``budget`` scores.
    ``score`` maps artifact data to its reward (default: :func:`mmverify.pipeline.evaluate.reward_of`
    under the default ruleset)."""
    if score is None:
        score = _reward(task)
    data = copy.deepcopy(start)
    calls = 0

    def scored(candidate: dict) -> float:
        nonlocal calls
        calls += 1
        return score(candidate)

    know = knowledge(task)
    numbers, labels = leaves(know)
    coords = [leaf.path for leaf in numbers if isinstance(paths.get(data, leaf.path), Decimal)]
    coords.sort(key=lambda p: (generic(p) not in know.scored_paths, p))
    enums = [(leaf.path, tuple(leaf.node["enum"])) for leaf in labels if leaf.node.get("enum")]
    before = {p: paths.get(data, p) for p in coords}
    current = first = scored(data)

    def best_of(path: str, candidates, limit: int) -> None:
        """Try each candidate at ``path`` while scores are left; keep the best that raises the score."""
        nonlocal current
        old = paths.get(data, path)
        best, best_value = current, None
        for c in candidates:
            if calls >= limit:
                break
            if c == old:
                continue
            paths.put(data, path, c)
            s = scored(data)
            if s > best:
                best, best_value = s, c
        paths.put(data, path, old if best_value is None else best_value)
        current = best

    line_limit = int(budget * LINE_SHARE)
    for p in coords:
        if generic(p) not in know.scored_paths or calls >= line_limit:
            continue
        x = paths.get(data, p)
        scale = abs(x) if x != 0 else Decimal(1)
        best_of(p, sorted(set(GRID) | {_round(scale * Decimal(10) ** (Decimal(k) / 12)) for k in range(-36, 37)}),
                line_limit)
    improved = True
    while improved and calls < budget:
        was = current
        for p in coords:
            best_of(p, _moves(paths.get(data, p)), budget)
        for p, members in enums:
            if isinstance(paths.get(data, p), str):
                best_of(p, members, budget)
        improved = current > was
    moved = tuple((p, str(before[p]), str(paths.get(data, p))) for p in coords if paths.get(data, p) != before[p])
    return Climb(first, current, calls, moved, data)


def _moves(x: Decimal) -> list[Decimal]:
    """Greedy candidates around ``x``: whole numbers stay whole."""
    if x == 0:
        return [Decimal("0.1"), Decimal(1), Decimal(10)]
    if x == x.to_integral_value() and abs(x) >= 1 and x.as_tuple().exponent >= 0:
        return sorted({(x * f).to_integral_value() for f in FACTORS} | {x - 1, x + 1})
    return [_round(x * f) for f in FACTORS]


def _round(x: Decimal) -> Decimal:
    """``x`` to five significant digits (a value a writer of a report would give)."""
    return x if x == 0 else Decimal(f"{x:.5g}")


def _reward(task) -> Callable[[dict], float]:
    """The reward of artifact data (0.0 for data that is no artifact), on the verdict-only path."""
    from mmverify.pipeline.evaluate import reward_of
    from mmverify.plugin.reward import coerce_artifact

    return lambda data: reward_of(task, coerce_artifact(data))
