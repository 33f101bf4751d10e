"""Helpers shared by the benchmark scripts: clocks, medians, the machine's
description, child-process timing and the anchored tasks' oracle artifacts."""
from __future__ import annotations

import math
import os
import platform
import statistics
import subprocess
import sys
import time
from typing import Any, Iterable

try:
    import resource
except ImportError:  # not POSIX: child CPU times are reported as not measured
    resource = None  # type: ignore[assignment]


def median(xs: Iterable[float]) -> float:
    xs = list(xs)
    return statistics.median(xs) if xs else float("nan")


class Clock:
    """Wall and CPU time of a block (CPU: this process, user + system)."""

    def __enter__(self) -> "Clock":
        self.w0, self.c0 = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.wall = time.perf_counter() - self.w0
        self.cpu = time.process_time() - self.c0


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def fmt(x: Any, digits: int = 3) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        if math.isnan(x):
            return "-"
        if abs(x) >= 1000:
            return f"{x:,.0f}"
        return f"{x:.{digits}g}" if abs(x) < 1 else f"{x:.{max(digits - len(str(int(abs(x)))), 0) + 1}f}"
    return str(x)


def machine() -> dict[str, Any]:
    """Cores, CPU model, Python: never a path, a host name or a user name."""
    model = platform.processor() or ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    mem = None
    try:
        with open("/proc/meminfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    mem = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return {
        "cpu_model": model or "unknown", "cores_logical": os.cpu_count(), "cores_usable": usable,
        "memory_gib": mem, "os": f"{platform.system()} {platform.release()}", "arch": platform.machine(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
    }


def load_avg() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in ("mmverify", "jsonschema", "sympy", "numpy", "click"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "not installed"
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=os.path.dirname(os.path.abspath(__file__)),
                             capture_output=True, text=True, timeout=10)
        if rev.returncode == 0:
            out["git"] = rev.stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        pass
    return out


# ------------------------------------------------------------------ the tasks

def load_oracles() -> list[tuple[Any, Any, bytes]]:
    """(task, parsed oracle artifact, oracle bytes) for every anchored task."""
    from mmverify.artifact import parse_bytes
    from mmverify.tasks import load_all

    out = []
    for task in load_all():
        with open(task.oracle_path, "rb") as fh:
            raw = fh.read()
        out.append((task, parse_bytes(raw, source=f"anchors/{task.id}/oracle.json"), raw))
    return out


def _nudge(task: Any, data: Any, k: int) -> Any:
    """``data`` with every scored number that no gate reads moved by k units of
    its last digit (the gates, and so the verdicts, see the oracle's values)."""
    import copy
    from decimal import Decimal

    from mmverify import paths
    from mmverify.gates import compile_gates

    read = {p.text for g in compile_gates(task) for p in g.inputs}
    out = copy.deepcopy(data)
    for m in task.metrics:
        if m.path.is_list or m.path.text in read:
            continue
        v = paths.get(out, m.path)
        if isinstance(v, Decimal) and v.is_finite() and v.as_tuple().exponent < 0:
            paths.put(out, m.path, v + k * Decimal((0, (1,), v.as_tuple().exponent)))
    return out


def varied(oracles: list[tuple[Any, Any, bytes]], copies: int) -> list[tuple[Any, Any, bytes]]:
    """``copies`` variants of every oracle, round-robin over the tasks: in
    variant k every scored number no gate reads is k units of its last digit
    larger. The verdicts are the oracles', the metric scores differ, and no
    two artifacts are alike, so no cache keyed on an artifact's content could
    make a rate look better than scoring new artifacts does."""
    from mmverify.artifact import parse_bytes
    from mmverify.plugin.exactjson import dumps_exact

    out = []
    for k in range(1, copies + 1):
        for task, art, _raw in oracles:
            raw = dumps_exact(_nudge(task, art.data, k)).encode("utf-8")
            out.append((task, parse_bytes(raw, source=f"anchors/{task.id}/oracle.json~{k}"), raw))
    return out


def children_cpu() -> float:
    """User + system CPU seconds of finished child processes (nan when unknown)."""
    if resource is None:
        return float("nan")
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _child_run(argv: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    c0 = children_cpu()
    w0 = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - w0
    return wall, children_cpu() - c0, proc.returncode
