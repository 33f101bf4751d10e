"""``mmverify.replay``: level-C replay, between parsing and the gates.

A task that allows an independent replay names its module in ``task.json``
(``"replay": "smoke_screen"``); each module here exposes
``TASK_ID``, ``DERIVED`` (the names it may derive; optionally ``STATEMENT``,
those of them no artifact changes), ``load_official(data_dir)``
(I/O: the task's official data under ``anchors/<task>/data/``, read once) and
``replay(data, official) -> Derived`` (pure). :func:`run_replay` runs it with a
time cap and turns every failure into gaps, so a replay can never crash scoring:
a time-out or an engine error leaves the claims unverified and is reported.
"""
from __future__ import annotations

import importlib
import os
import re
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from fractions import Fraction
from typing import Any, Mapping

from .base import ROOT, Derived

__all__ = ["ROOT", "Derived", "ReplayReport", "load_module", "replay_module", "declared_names", "statement_names",
           "run_replay", "gate_view"]

MODULE_NAME = re.compile(r"^[a-z][a-z0-9_]*$")

DEFAULT_TIME_CAP_S = 10.0


@dataclass(frozen=True)
class ReplayReport:
    """What the replay stage did for one artifact."""

    task_id: str
    module: str
    values: Mapping[str, Fraction] = field(default_factory=dict)
    gaps: Mapping[str, str] = field(default_factory=dict)
    status: str = "ok"            # ok | timeout | error
    detail: str | None = None

    def as_dict(self) -> dict[str, Any]:
        from mmverify.reading.numbers import fraction_text

        return {"module": self.module, "status": self.status, "detail": self.detail,
                "values": {k: fraction_text(v) for k, v in sorted(self.values.items())},
                "gaps": dict(sorted(self.gaps.items()))}


def load_module(name: str):
    """The replay module ``name`` of this package (a name from trusted anchors).
    Raises ValueError when there is no such replay or it lacks its surface."""
    if not isinstance(name, str) or not MODULE_NAME.match(name) or name == "base":
        raise ValueError(f"{name!r} is not a replay module name")
    try:
        mod = importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError:
        raise ValueError(f"no replay module {name!r} in mmverify.replay") from None
    for attr in ("TASK_ID", "DERIVED", "load_official", "replay"):
        if not hasattr(mod, attr):
            raise ValueError(f"replay module {name!r} lacks {attr}")
    return mod


def replay_module(task):
    """The replay module a task declares, or None when it has no replay."""
    name = getattr(task, "replay", None)
    return load_module(name) if name else None


def declared_names(task) -> frozenset[str]:
    """Every derived name the task's replay may produce (empty without a replay)."""
    mod = replay_module(task)
    return frozenset(mod.DERIVED) if mod is not None else frozenset()


def statement_names(task) -> frozenset[str]:
    """The derived names that the statement (and the official data) alone
    determine, whatever the artifact holds: a module's optional ``STATEMENT``
    (empty without a replay). A claim gate ``claimed == replayed`` on such a
    value decides the claim (:attr:`mmverify.gates.model.Gate.decides`)."""
    mod = replay_module(task)
    return frozenset(getattr(mod, "STATEMENT", ())) if mod is not None else frozenset()


class ReplayTimeout(BaseException):
    """The replay's own time cap (a BaseException: no ``except Exception`` in a
    replay module can swallow it)."""


_official: dict[tuple[str, str], Any] = {}
_official_lock = threading.Lock()


def official_data(mod, task) -> Any:
    """The task's official data as the replay module reads it (cached per task folder)."""
    key = (task.id, os.path.abspath(task.directory))
    with _official_lock:
        if key in _official:
            return _official[key]
    value = mod.load_official(os.path.join(task.directory, "data"))
    with _official_lock:
        _official[key] = value
    return value


def run_replay(task, data: Any, *, time_cap_s: float | None = None) -> ReplayReport | None:
    """Run the task's replay on parsed artifact data; None when the task has none.
    The time cap is ``time_cap_s``, else the module's own ``TIME_CAP_S`` (a
    replay whose honest inputs take seconds declares one, so that a loaded
    machine does not turn them into timeouts), else ``DEFAULT_TIME_CAP_S``."""
    mod = replay_module(task)
    if mod is None:
        return None
    if time_cap_s is None:
        time_cap_s = getattr(mod, "TIME_CAP_S", DEFAULT_TIME_CAP_S)
    names = tuple(mod.DERIVED)
    official = official_data(mod, task)   # anchor data: a defect here is the task's, so it may raise
    if not isinstance(data, dict):
        return ReplayReport(task.id, mod.__name__, {}, {n: "artifact is not an object" for n in names})
    from mmverify.pipeline.timecap import time_cap

    try:
        with time_cap(time_cap_s, ReplayTimeout):
            derived = mod.replay(data, official)
    except ReplayTimeout:
        return ReplayReport(task.id, mod.__name__, {}, {n: f"replay time-out after {time_cap_s} s" for n in names},
                            status="timeout", detail=f"replay exceeded {time_cap_s} s; claims left unverified")
    except Exception as exc:  # noqa: BLE001 - a replay defect must not crash scoring
        return ReplayReport(task.id, mod.__name__, {}, {n: "replay error" for n in names}, status="error",
                            detail=f"{type(exc).__name__}: {exc}"[:300])
    values = {k: v for k, v in derived.values.items() if k in names and isinstance(v, Fraction)}
    gaps = {n: derived.gaps.get(n, "not derived") for n in names if n not in values}
    return ReplayReport(task.id, mod.__name__, values, gaps)


@lru_cache(maxsize=4096)
def _steps(name: str) -> tuple[tuple[str, ...], str]:
    """A derived name's dotted steps: (the objects on the way, the last key);
    made once per name (the names are a replay module's ``DERIVED``)."""
    *heads, last = name.split(".")
    return tuple(heads), last


def gate_view(data: Any, report: ReplayReport | None) -> Any:
    """The data gates read: the artifact, with the derived values under ``$replay``.

    An artifact key named ``$replay`` is replaced, so an artifact can never
    supply its own derived values."""
    if report is None or not isinstance(data, dict):
        return data
    tree: dict[str, Any] = {}
    for name, value in report.values.items():
        node = tree
        heads, last = _steps(name)
        for h in heads:
            child = node.get(h)
            if child is None:
                child = node[h] = {}
            node = child
        node[last] = value
    view = dict(data)
    view[ROOT] = tree
    return view
