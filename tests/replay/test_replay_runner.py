"""The replay runner's time cap: the caller's, else the module's own
``TIME_CAP_S``, else the default; a replay past it is a time-out report, never
a crash and never a wait."""
from __future__ import annotations

import time
import types

import pytest

from mmverify import replay
from mmverify.replay.base import Derived

TASK = "cumcm-2023-a-heliostat-field"    # a real task whose module the fake one stands in for


def _slow_module(cap: float | None) -> types.ModuleType:
    mod = types.ModuleType("slow_replay")
    mod.DERIVED = ("x",)
    mod.load_official = lambda folder: None

    def run(data, official):
        time.sleep(0.6)
        return Derived({}, {})
    mod.replay = run
    if cap is not None:
        mod.TIME_CAP_S = cap
    return mod


@pytest.mark.parametrize("module_cap,caller_cap,timed_out", [
    (0.2, None, True),      # the module's own cap applies
    (5.0, None, False),
    (5.0, 0.2, True),       # the caller's cap wins
    (None, 0.2, True),
])
def test_the_cap_is_the_callers_then_the_modules(monkeypatch, task, module_cap, caller_cap, timed_out):
    monkeypatch.setattr(replay, "replay_module", lambda t: _slow_module(module_cap))
    monkeypatch.setattr(replay, "official_data", lambda mod, t: None)
    t0 = time.monotonic()
    report = replay.run_replay(task, {}, time_cap_s=caller_cap)
    assert (report.status == "timeout") is timed_out
    assert time.monotonic() - t0 < 3
