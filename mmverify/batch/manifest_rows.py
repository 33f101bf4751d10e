"""Run manifests, read: the row format and its strict reader.

A manifest is JSON Lines, one object per (entry, task, seed); see
:mod:`mmverify.batch.manifest` for the format and ``docs/board.md`` for every field.
Reading never raises for a bad line: a malformed line becomes a row carrying
its ``problems``, and a second row for a cell already seen is marked
``duplicate_of``. Only a file that cannot be read at all raises
:class:`ManifestError`.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any, Iterable

from mmverify.errors import MmverifyError

from mmverify.reading.jsonstrict import loads_strict

FIELDS = ("entry", "task", "seed", "artifact", "cost_usd", "wall_s", "harness", "model")
REQUIRED = ("entry", "task", "seed", "artifact")


class ManifestError(MmverifyError, ValueError):
    """The manifest as a whole cannot be read (not one bad row: those are rows)."""


@dataclass(frozen=True)
class ManifestRow:
    line: int
    text_sha256: str                 # sha256 of the line's text, for error-row identity
    entry: str | None = None
    task: str | None = None
    seed: int | str | None = None
    artifact: str | None = None      # as written in the manifest
    artifact_path: str | None = None  # resolved against the manifest's folder
    cost_usd: Fraction | None = None
    wall_s: Fraction | None = None
    harness: str | None = None
    model: str | None = None
    problems: tuple[str, ...] = ()   # why the row is malformed (empty when it is fine)
    duplicate_of: int | None = None  # line of the earlier row for the same cell

    @property
    def cell(self) -> tuple[str, str, int | str] | None:
        """(entry, task, seed) when the row can be attributed to a board cell."""
        if self.entry is None or self.task is None or self.seed is None or self.duplicate_of is not None:
            return None
        return (self.entry, self.task, self.seed)

    @property
    def ok(self) -> bool:
        return not self.problems and self.duplicate_of is None


@dataclass(frozen=True)
class Manifest:
    path: str
    name: str
    sha256: str
    rows: tuple[ManifestRow, ...]

    @property
    def folder(self) -> str:
        return os.path.dirname(os.path.abspath(self.path))


def seed_sort_key(seed: int | str) -> tuple[int, Any]:
    """Integers first, in numeric order, then strings."""
    return (0, seed) if isinstance(seed, int) else (1, seed)


# ------------------------------------------------------------------- reading

def _duplicate_key(key: str) -> ValueError:
    return ValueError(f"duplicate key {key!r}")


def _non_finite(name: str) -> ValueError:
    return ValueError(f"non-finite number {name}")


def _number(value: Any, name: str, problems: list[str]) -> Fraction | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, Decimal)):
        problems.append(f"{name} must be a number or null, got {_type(value)}")
        return None
    f = Fraction(value)
    if f < 0:
        problems.append(f"{name} must not be negative")
        return None
    return f


def _type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, Decimal)):
        return "number"
    return {str: "string", list: "array", dict: "object"}.get(type(value), type(value).__name__)


def parse_row(text: str, line: int, folder: str, known_tasks: Iterable[str] | None = None) -> ManifestRow:
    """One manifest line as a row; problems are collected, never raised."""
    sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
    try:
        obj = loads_strict(text, duplicate_key=_duplicate_key, non_finite=_non_finite)
    except (json.JSONDecodeError, ValueError) as exc:
        msg = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        return ManifestRow(line, sha, problems=(f"not valid JSON: {msg}",))
    if not isinstance(obj, dict):
        return ManifestRow(line, sha, problems=(f"a row must be a JSON object, got {_type(obj)}",))
    problems: list[str] = []
    for key in sorted(obj):
        if key not in FIELDS and not key.startswith(("x-", "x_")):
            problems.append(f"unknown field {key!r} (extra fields must start with 'x-' or 'x_')")
    for key in REQUIRED:
        if key not in obj:
            problems.append(f"missing field {key!r}")

    def text_field(name: str, required: bool) -> str | None:
        v = obj.get(name)
        if v is None:
            if required and name in obj:
                problems.append(f"{name} must be a non-empty string, got null")
            return None
        if not isinstance(v, str) or not v.strip():
            problems.append(f"{name} must be a non-empty string, got {_type(v) if not isinstance(v, str) else 'an empty string'}")
            return None
        return v

    entry = text_field("entry", True)
    task = text_field("task", True)
    if task is not None and known_tasks is not None and task not in known_tasks:
        problems.append(f"unknown task {task!r} (not in the anchors index)")
        task = None
    seed = obj.get("seed")
    if "seed" in obj:
        if isinstance(seed, bool) or not (isinstance(seed, int) or (isinstance(seed, str) and seed.strip())):
            problems.append(f"seed must be an integer or a non-empty string, got {_type(seed)}"
                            + (f" {seed}" if isinstance(seed, Decimal) else ""))
            seed = None
    artifact = obj.get("artifact")
    artifact_path = None
    if artifact is not None:
        if not isinstance(artifact, str) or not artifact:
            problems.append(f"artifact must be a path string or null, got {_type(artifact)}")
            artifact = None
        elif "\x00" in artifact:
            problems.append("artifact path contains a NUL character")
            artifact = None
        else:
            artifact_path = os.path.normpath(os.path.join(folder, artifact))
    cost = _number(obj.get("cost_usd"), "cost_usd", problems)
    wall = _number(obj.get("wall_s"), "wall_s", problems)
    harness = text_field("harness", False)
    model = text_field("model", False)
    return ManifestRow(line, sha, entry, task, seed, artifact, artifact_path, cost, wall, harness, model,
                       tuple(problems))


def read_manifest(path: str, known_tasks: Iterable[str] | None = None) -> Manifest:
    """Read a manifest file. Raises :class:`ManifestError` only when the file
    itself cannot be read; bad lines become rows with ``problems``. A second
    row for an (entry, task, seed) already seen is marked ``duplicate_of``."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise ManifestError(f"cannot read manifest {path}: {exc.strerror or exc}") from None
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ManifestError(f"manifest {path} is not valid UTF-8 (byte {exc.start})") from None
    known = frozenset(known_tasks) if known_tasks is not None else None
    folder = os.path.dirname(os.path.abspath(path))
    rows: list[ManifestRow] = []
    seen: dict[tuple, int] = {}
    for i, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        row = parse_row(line, i, folder, known)
        cell = row.cell
        if cell is not None:
            if cell in seen:
                row = _replace(row, duplicate_of=seen[cell])
            else:
                seen[cell] = i
        rows.append(row)
    return Manifest(path, os.path.basename(path), hashlib.sha256(raw).hexdigest(), tuple(rows))


def _replace(row: ManifestRow, **changes: Any) -> ManifestRow:
    from dataclasses import replace

    return replace(row, **changes)
