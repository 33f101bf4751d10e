"""Find the JSON artifact in a model's free-text answer.

A completion may hold prose, code and several JSON snippets. The artifact is
the **last** candidate in the text, where a candidate is

* a fenced block labelled ``json`` (or unlabelled) whose body is read whole:
  ```` ```json\\n{...}\\n``` ````;
* a bare JSON object outside any fenced block (``{`` ... ``}`` that parses as
  one JSON object).

Blocks fenced with another language (```` ```python ````) are skipped whole, so a
dict literal in code is never taken for the answer. The chosen text is then
parsed with the engine's strict parser (:func:`mmverify.reading.artifact.parse_bytes`:
exact decimals, no NaN, no duplicate keys), so an artifact taken from text is
held to the same rules as one read from a file. The last candidate wins even
when it is malformed: an earlier, different answer is never scored instead.

A completion with no candidate gives an :class:`~mmverify.reading.artifact.ArtifactError`
with code ``no_artifact``; a candidate that does not parse gives the parser's
error (``malformed_json``, ``duplicate_key``, ``non_finite_number``, ...). The
pipeline turns either into status ``error`` and score 0, with the reason in
the report.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from mmverify.reading.artifact import Artifact, ArtifactError, parse_bytes

# A completion longer than this is not searched (the reason says so). Artifacts
# of the bundled tasks are at most a few tens of KB of JSON.
MAX_COMPLETION_CHARS = 1024 * 1024
# The bare-object search decodes at most this many openings (``{`` followed by
# ``"`` or ``}``). A text with more gets the error ``too_many_candidates``
# rather than a search that stops early and scores an earlier object in place
# of the last one.
MAX_BRACE_TRIES = 2_000

# ```lang ... ``` at the start of a line; an unterminated fence runs to the end.
_FENCE = re.compile(r"^[ \t]*```[ \t]*([A-Za-z0-9_+.-]*)[^\n]*\n(.*?)(?:^[ \t]*```[ \t]*$|\Z)",
                    re.MULTILINE | re.DOTALL)
_DECODER = json.JSONDecoder()
# where a JSON object can start: "{" then a key or "}" (prose braces mostly fail this)
_OPENING = re.compile(r'\{\s*["}]')


@dataclass(frozen=True)
class Extraction:
    """What was found: ``artifact`` is an :class:`Artifact` or the
    :class:`ArtifactError` that explains why there is none; ``kind`` is
    ``"fenced"``, ``"bare"`` or None; ``text`` the candidate's JSON text."""

    artifact: Artifact | ArtifactError
    kind: str | None
    text: str | None

    @property
    def ok(self) -> bool:
        return isinstance(self.artifact, Artifact)

    @property
    def reason(self) -> str | None:
        """None when an artifact was parsed, else ``"<code>: <message>"``."""
        if isinstance(self.artifact, ArtifactError):
            return f"{self.artifact.code}: {self.artifact.message}"
        return None


def completion_text(completion: Any) -> str:
    """The text of one completion: a string, or a chat-message list (the text of
    its assistant messages, in order; the ``content`` may itself be a list of
    ``{"type": "text", "text": ...}`` parts). None (a generation that produced
    nothing) has no text: one such completion is one row without an artifact,
    not the end of its batch."""
    if isinstance(completion, str):
        return completion
    if completion is None:
        return ""
    if isinstance(completion, dict):
        completion = [completion]
    if isinstance(completion, (list, tuple)):
        parts = []
        for msg in completion:
            if not isinstance(msg, dict):
                raise TypeError(f"a chat message is a dict, not {type(msg).__name__}")
            if msg.get("role", "assistant") != "assistant":
                continue
            parts.append(_content_text(msg.get("content")))
        return "\n".join(parts)
    raise TypeError(f"a completion is a string or a list of chat messages, not {type(completion).__name__}")


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, (list, tuple)):
        return "\n".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content
                         if not isinstance(p, dict) or p.get("type", "text") == "text")
    return str(content)


def _candidates(text: str) -> list[tuple[int, str, str]]:
    """(position, kind, json text) of every candidate, in text order. Raises
    :class:`ArtifactError` (``too_many_candidates``) past :data:`MAX_BRACE_TRIES`."""
    found: list[tuple[int, str, str]] = []
    fenced_spans: list[tuple[int, int]] = []
    pos = 0   # only a bare object after the last fenced candidate can win
    for m in _FENCE.finditer(text):
        fenced_spans.append((m.start(), m.end()))
        lang = m.group(1).lower()
        if lang in ("json", ""):
            body = m.group(2).strip()
            if lang == "json" or body.startswith("{"):
                found.append((m.start(), "fenced", body))
                pos = m.end()
    tries = 0
    spans = iter(fenced_spans + [(len(text) + 1, len(text) + 1)])
    span = next(spans)
    while True:
        m = _OPENING.search(text, pos)
        if m is None:
            break
        pos = m.start()
        while pos >= span[1]:
            span = next(spans)
        if span[0] <= pos < span[1]:
            pos = span[1]
            continue
        tries += 1
        if tries > MAX_BRACE_TRIES:
            raise ArtifactError("too_many_candidates", f"more than {MAX_BRACE_TRIES} possible JSON objects "
                                "in the completion; put the artifact in a fenced json block")
        try:
            value, end = _DECODER.raw_decode(text, pos)
        except (ValueError, RecursionError):
            pos += 1
            continue
        if isinstance(value, dict):
            found.append((pos, "bare", text[pos:end]))
            pos = end
        else:  # pragma: no cover - an opening always decodes to an object or fails
            pos += 1
    found.sort(key=lambda c: c[0])
    return found


def extract_artifact(completion: Any, *, source: str = "<completion>") -> Extraction:
    """The last JSON artifact of ``completion`` (a string or chat messages),
    strictly parsed, or the reason there is none. Never raises for bad text."""
    text = completion_text(completion)
    if len(text) > MAX_COMPLETION_CHARS:
        return Extraction(ArtifactError("too_large", f"completion of {len(text)} characters is above the "
                                        f"cap of {MAX_COMPLETION_CHARS}"), None, None)
    try:
        found = _candidates(text)
    except ArtifactError as exc:
        return Extraction(exc, None, None)
    if not found:
        return Extraction(ArtifactError("no_artifact", "no fenced json block and no JSON object "
                                        "found in the completion"), None, None)
    _, kind, body = found[-1]
    try:
        artifact: Artifact | ArtifactError = parse_bytes(body.encode("utf-8", "surrogatepass"), source=source)
    except ArtifactError as exc:
        artifact = exc
    return Extraction(artifact, kind, body)
