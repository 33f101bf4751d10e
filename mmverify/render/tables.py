"""Plain-text and Markdown tables of string cells, shared by the reports."""
from __future__ import annotations

from fractions import Fraction
from typing import Sequence


def printable(line: str) -> str:
    """``line`` with every character that is not printable (a newline, a
    carriage return, an escape sequence's ESC) written as its escape: text
    quoted from an artifact (a file name, a label, a key) can neither start a
    line of its own nor drive a terminal."""
    if line.isprintable():
        return line
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in line)


def fixed(x: Fraction | float | None, digits: int) -> str:
    """``x`` with ``digits`` decimals (rounded, for display), ``-`` for None."""
    return "-" if x is None else f"{float(x):.{digits}f}"


def text_table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Left-aligned columns two spaces apart, a dashed rule under the header;
    trailing spaces trimmed."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(head)]
    out = ["  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip(), "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    return out


def markdown_table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A Markdown table, ``|`` in a cell escaped."""
    def esc(c: str) -> str:
        return c.replace("|", "\\|")

    out = ["| " + " | ".join(esc(h) for h in head) + " |", "| " + " | ".join("---" for _ in head) + " |"]
    out += ["| " + " | ".join(esc(c) for c in r) + " |" for r in rows]
    return out
