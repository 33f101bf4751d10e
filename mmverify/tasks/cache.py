"""The compiled-task cache on disk: what a task load proved once, kept for the
next process.

Design notes: docs/architecture.md, `mmverify/tasks/cache.py`.
"""
from __future__ import annotations

import json
import os
from typing import Any, Callable

from mmverify.reading import digest

_OFF = {"", "0", "off", "no", "false", "none"}
_STAMP: list[str] = []


def cache_dir() -> str | None:
    """The cache folder, or None when the cache is off."""
    env = os.environ.get("MMVERIFY_CACHE")
    if env is not None:
        return None if env.strip().lower() in _OFF else env
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "mmverify")


def _engine_stamp() -> str:
    """Path, size and mtime of everything that decides a cached result."""
    if _STAMP:
        return _STAMP[0]
    import importlib.util

    tasks = os.path.dirname(os.path.abspath(__file__))
    here = os.path.dirname(tasks)       # the package folder
    files = [os.path.join(tasks, "spec.py"), os.path.join(tasks, "load.py"), os.path.join(tasks, "cache.py"),
             os.path.join(here, "schemas", "task.schema.json"),
             # the oracle check of a task load: the parser and the path reader
             os.path.join(here, "reading", "artifact.py"), os.path.join(here, "reading", "paths.py")]
    # the gates package: inside this one when installed, beside it in a source
    # checkout (found without an import search, which costs more than the stats)
    gdir = os.path.join(here, "gates")
    if not os.path.isdir(gdir):
        gdir = os.path.join(os.path.dirname(here), "gates")
    files += [os.path.join(gdir, "identity.py"), os.path.join(gdir, "compile.py")]
    for dep in ("jsonschema", "sympy"):
        spec = importlib.util.find_spec(dep)
        files.append(spec.origin if spec is not None and spec.origin else dep)
    parts = []
    for f in files:
        try:
            st = os.stat(f)
            parts.append(f"{f}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            parts.append(f"{f}:absent")
    _STAMP.append("\n".join(parts))
    return _STAMP[0]


def key_of(kind: str, *content: bytes | str) -> str:
    h = digest.sha256()
    h.update(kind.encode())
    h.update(b"\0" + _engine_stamp().encode())
    for c in content:
        b = c.encode("utf-8", "surrogatepass") if isinstance(c, str) else c
        h.update(b"\0" + str(len(b)).encode() + b"\0" + b)
    return f"{kind}-{h.hexdigest()[:40]}"


def load(key: str) -> Any:
    """The record stored under ``key``, or None (absent, off, corrupt)."""
    folder = cache_dir()
    if folder is None:
        return None
    try:
        with open(os.path.join(folder, key + ".json"), "rb") as fh:
            record = json.loads(fh.read().decode("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("key") != key:
        return None
    return record.get("value")


def store(key: str, value: Any) -> None:
    """Write ``value`` under ``key`` atomically; any error is ignored."""
    folder = cache_dir()
    if folder is None:
        return
    tmp = None
    try:
        os.makedirs(folder, exist_ok=True)
        final = os.path.join(folder, key + ".json")
        tmp = f"{final}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump({"key": key, "value": value}, fh, sort_keys=True)
        os.replace(tmp, final)
        tmp = None
    except (OSError, TypeError, ValueError):
        pass
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def cached(key: str, compute: Callable[[], Any], valid: Callable[[Any], bool]) -> Any:
    """The stored value under ``key`` when ``valid`` accepts it, else
    ``compute()`` (stored for the next process)."""
    hit = load(key)
    if hit is not None and valid(hit):
        return hit
    value = compute()
    store(key, value)
    return value
