"""Anchor values in agent-facing text: the audit's leak check.

An agent reads the statement and the artifact schema. A reference value that
appears in the schema's prose (``description``, ``title``, ``examples``,
``default``, ``$comment``) hands the answer over with the question. This scan
reports every panel value (numbers with at least three significant digits, at
the precision the panel writes them, or the same value written with more
zeros; labels of four characters or more as whole words) found there.

The statement (``problem.md``) is the contest's own text and is not scanned:
a value the statement itself gives away is not a leak of the benchmark's.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any, Iterator

PROSE_KEYS = ("description", "title", "examples", "default", "$comment")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:[.,]\d+)*(?:\.\d+)?(?![\w])")


@dataclass(frozen=True)
class Leak:
    metric: str
    paper: str
    value: str
    where: str       # schema location (JSON pointer-like) of the text


def _prose(node: Any, where: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(node, dict):
        for key, value in node.items():
            here = f"{where}/{key}"
            if key in PROSE_KEYS:
                yield from ((here, t) for t in _texts(value))
            elif key not in ("enum", "const"):
                yield from _prose(value, here)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _prose(value, f"{where}/{i}")


def _texts(value: Any) -> Iterator[str]:
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        yield str(value)
    elif isinstance(value, list):
        for v in value:
            yield from _texts(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _texts(v)


def _significant(x: Fraction) -> int:
    d = Decimal(x.numerator) / Decimal(x.denominator)
    digits = d.normalize().as_tuple().digits
    return len(digits)


def _anchors(task) -> Iterator[tuple[str, str, Any]]:
    for paper in task.panel:
        for metric_id, value in paper.values.items():
            items = value if isinstance(value, tuple) else (value,)
            for item in items:
                v = item[1] if isinstance(item, tuple) else item
                yield metric_id, paper.paper_id, v


def find_schema_leaks(task) -> list[Leak]:
    """Every panel value written in the artifact schema's prose."""
    texts = list(_prose(task.artifact_schema))
    found: dict[tuple[str, str, str], Leak] = {}
    for metric_id, paper_id, value in _anchors(task):
        for where, text in texts:
            if isinstance(value, Fraction):
                if value == int(value) and abs(value) < 1000 or _significant(value) < 3:
                    continue
                for token in _NUMBER.findall(text):
                    try:
                        if Fraction(Decimal(token.replace(",", ""))) == value:
                            found.setdefault((metric_id, paper_id, where),
                                             Leak(metric_id, paper_id, token, where))
                    except (InvalidOperation, ValueError):
                        continue
            elif isinstance(value, str) and len(value.strip()) >= 4:
                if re.search(r"(?<!\w)" + re.escape(value.strip()) + r"(?!\w)", text, re.IGNORECASE):
                    found.setdefault((metric_id, paper_id, where), Leak(metric_id, paper_id, value, where))
    return list(found.values())
