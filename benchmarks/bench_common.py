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
    from mmverify.reading.artifact import parse_bytes
    from mmverify.tasks import load_all

    out = []
    for task in load_all():
        with open(task.oracle_path, "rb") as fh:
            raw = fh.read()
        out.append((task, parse_bytes(raw, source=f"anchors/{task.id}/oracle.json"), raw))
    return out


def node_paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    """Segments of every node of a parsed JSON document (the root is ``()``)."""
    out = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            out.extend(node_paths(value, prefix + (key,)))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out.extend(node_paths(value, prefix + (i,)))
    return out


def _decimal_leaves(data: Any) -> list[tuple]:
    """Segments of every number in ``data`` written with a fractional part."""
    from decimal import Decimal

    from mmverify.reading import paths

    out = []
    for segs in node_paths(data):
        v = paths.get(data, paths.FieldPath(paths.render_segments(segs), segs)) if segs else data
        if isinstance(v, Decimal) and v.is_finite() and v.as_tuple().exponent < 0:
            out.append(segs)
    return out


def _nudged(data: Any, leaves: list[tuple], k: int) -> Any:
    """``data`` with each number at ``leaves`` moved by k units in the third
    digit after its last one (``0.3`` becomes ``0.3001`` for k = 1): new
    numbers, far inside any bound the oracle's number meets."""
    import copy
    from decimal import Decimal

    from mmverify.reading import paths

    out = copy.deepcopy(data)
    for segs in leaves:
        path = paths.FieldPath(paths.render_segments(segs), segs)
        v = paths.get(out, path)
        paths.put(out, path, v + k * Decimal((0, (1,), v.as_tuple().exponent - 3)))
    return out


def _nudge_plan(task: Any, data: Any, copies: int) -> list[tuple]:
    """The numbers a variant moves: every one no gate reads (scored ones and
    the rest) when the schema and the gates still give the oracle's verdicts
    after the largest move, else only the scored ones no gate reads (a replay
    or a schema bound may read the others), else the first single number
    whose move keeps them."""
    from mmverify.reading import paths
    from mmverify.gates import compile_gates, evaluate_gates
    from mmverify.pipeline.validate import is_valid

    gated = [p for g in compile_gates(task) for p in g.inputs]
    free = [segs for segs in _decimal_leaves(data)
            if not any(paths.matches(p, paths.render_segments(segs)) for p in gated)]
    scored = [segs for segs in free if any(paths.matches(m.path, paths.render_segments(segs)) for m in task.metrics)]
    def verdicts(d: Any) -> tuple:
        return is_valid(task.artifact_schema, d), [(i.name, i.verdict) for i in evaluate_gates(task, d).instances]

    want = verdicts(data)
    # failing both, one number no gate reads whose move keeps the verdicts
    for plan in [free, scored] + [[segs] for segs in free[:200]]:
        if plan and verdicts(_nudged(data, plan, copies)) == want:
            return plan
    return []


def varied(oracles: list[tuple[Any, Any, bytes]], copies: int) -> list[tuple[Any, Any, bytes]]:
    """``copies`` variants of every oracle, round-robin over the tasks: in
    variant k every number no gate reads is moved by k units three digits
    past its last one
    (only the scored ones where moving the others changes a verdict: see
    ``_nudge_plan``). The verdicts are the oracles', the metric scores differ
    where a scored number moved, and no two artifacts are alike, so no cache
    keyed on an artifact's content could make a rate look better than
    scoring new artifacts does."""
    from mmverify.reading.artifact import parse_bytes
    from mmverify.plugin.exactjson import dumps_exact

    plans = {task.id: _nudge_plan(task, art.data, copies) for task, art, _raw in oracles}
    out = []
    for k in range(1, copies + 1):
        for task, art, _raw in oracles:
            raw = dumps_exact(_nudged(art.data, plans[task.id], k)).encode("utf-8")
            out.append((task, parse_bytes(raw, source=f"anchors/{task.id}/oracle.json~{k}"), raw))
    return out


_BREAKERS = ("1E+200", "-1E+200", "0.5", "-0.5", "123456.789")


def failing(oracles: list[tuple[Any, Any, bytes]]) -> list[tuple[Any, Any, bytes]]:
    """Every oracle with one artifact value a hard gate reads replaced so that
    the gate fails (the first of a few far-off or fractional numbers that makes
    a hard instance fail): the artifacts an RL policy hands in when it breaks a
    constraint, on which the reward cannot take the all-pass shortcut.
    Tasks where no such value is found are left out."""
    import copy
    from decimal import Decimal

    from mmverify.reading import paths
    from mmverify.reading.artifact import parse_bytes
    from mmverify.gates import compile_gates, evaluate_gates
    from mmverify.plugin.exactjson import dumps_exact

    out = []
    for task, art, _raw in oracles:
        found = None
        targets = [p for g in compile_gates(task) if g.hard for p in g.inputs if p.segments[0] != "$replay"]
        for path in targets:
            concrete = paths.parse_path(paths.concrete(path, 0)) if path.is_list else path
            for text in _BREAKERS:
                data = copy.deepcopy(art.data)
                if paths.put(data, concrete, Decimal(text), replace=False) and \
                        evaluate_gates(task, data, hard_only=True).hard_failures:
                    found = data
                    break
            if found is not None:
                break
        if found is not None:
            raw = dumps_exact(found).encode("utf-8")
            out.append((task, parse_bytes(raw, source=f"anchors/{task.id}/oracle.json~failing"), raw))
    return out


def children_cpu() -> float:
    """User + system CPU seconds of finished child processes (nan when unknown)."""
    if resource is None:
        return float("nan")
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _child_run(argv: list[str], env: dict[str, str], cwd: str | None = None) -> tuple[float, float, int]:
    c0 = children_cpu()
    w0 = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
    wall = time.perf_counter() - w0
    return wall, children_cpu() - c0, proc.returncode
