"""Path reads written as straight code, for the checks generated once per task.

The gates' all-pass check (:mod:`mmverify.gates.quickcode`) and the panel's
verdict table (:mod:`mmverify.scoring.panelcode`) are each written as the
source of one function over the parsed artifact ``view``. Both read the
values on an anchor's paths the same way, with :class:`PathWriter`: each
object on a path is read once into a local, with plain ``dict.get`` and list
indexing, the sentinel :data:`MISSING` standing where a step is not there;
every value the source needs from outside is a named constant of the
function's namespace (:meth:`PathWriter.const`).

A path's keys appear in the source as ``repr`` literals of the anchor's own
keys (``[A-Za-z_][A-Za-z0-9_-]*`` or ``$replay``, by the path grammar of
:mod:`mmverify.reading.paths`), its indices as integers; nothing from an artifact is
ever part of the source.
"""
from __future__ import annotations

from typing import Any

from mmverify.reading import paths

MISSING = paths.Missing("not read")


class PathWriter:
    """The lines of a generated function, the constants it names and the
    locals holding what it has read. A read's line goes to :attr:`reads_out`
    (:attr:`lines` unless a generator points it elsewhere)."""

    def __init__(self, names: dict[str, Any] | None = None) -> None:
        self.lines: list[str] = []
        self.reads_out: list[str] = self.lines
        self.names: dict[str, Any] = {"MISSING": MISSING, **(names or {})}
        # a concrete path's segments -> the local holding its value (a generator may key more on it)
        self.reads: dict[Any, str] = {}

    def const(self, value: Any, stem: str) -> str:
        """A fresh name for ``value`` in the function's namespace."""
        name = f"{stem}{len(self.names)}"
        self.names[name] = value
        return name

    def walk(self, segments: tuple[Any, ...]) -> str:
        """The local holding the value at ``segments`` (a concrete path: keys
        and indices), read once; ``view`` for the empty path."""
        if not segments:
            return "view"
        if segments in self.reads:
            return self.reads[segments]
        parent = self.walk(segments[:-1])
        seg = segments[-1]
        local = self.reads[segments] = f"r{len(self.reads)}"
        if seg.__class__ is str:
            self.reads_out.append(f"    {local} = {parent}.get({seg!r}, MISSING) if {parent}.__class__ is dict "
                                  "else MISSING")
        else:
            self.reads_out.append(f"    {local} = {parent}[{seg}] if {parent}.__class__ is list "
                                  f"and {seg} < len({parent}) else MISSING")
        return local
