"""Helpers of the report-page tests (no tests here): boards built straight from
result rows, pages parsed with the standard library's HTML parser, Chromium."""
from __future__ import annotations

import os
import shutil
import subprocess
from html.parser import HTMLParser

import pytest

from mmverify.scoring.board import TaskInfo, build_board

TASKS = (TaskInfo("t-a", "CUMCM", True, None, "Task A"), TaskInfo("t-b", "MCM", True, None, "Task B"),
         TaskInfo("t-c", "MCM", False, "literature split (test)", "Task C"))


def result_row(line: int, entry: str, task: str, seed, status: str, oeval: str | None, *, share: str | None = "0",
               gates=(), cost: str | None = None) -> dict:
    return {"attributed": True, "line": line, "entry": entry, "task": task, "seed": seed, "status": status,
            "oeval_exact": oeval, "hard_gates_failed": list(gates), "verified_share_exact": share,
            "cost_usd": cost, "error": {"code": "hard_gate_failed", "message": "x"} if status == "infeasible" else None}


def make_board(cells: dict, baseline: str, *, replicates: int = 0, tasks=TASKS, costs: dict | None = None):
    """cells: {(entry, task, seed): (status, oeval text)} -> a Board (pure)."""
    rows = []
    for i, ((e, t, s), (status, o)) in enumerate(sorted(cells.items(), key=lambda kv: str(kv[0])), 1):
        gates = ("speed_cap",) if status == "infeasible" else ()
        rows.append(result_row(i, e, t, s, status, "0" if status == "infeasible" else o, gates=gates,
                               cost=(costs or {}).get(e)))
    return build_board(rows, list(tasks), baseline, bootstrap_replicates=replicates, bootstrap_seed=0,
                       manifest={"name": "m.jsonl", "sha256": "0" * 64, "gates_run": True})


class Page(HTMLParser):
    """Every tag with its attributes, the text, and the ids of a page."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.ids: set[str] = set()
        self.scripts = 0
        self.styles: list[str] = []
        self._in: str | None = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "script":
            self.scripts += 1
        if tag in ("style", "script"):
            self._in = tag

    def handle_endtag(self, tag):
        if tag == self._in:
            self._in = None

    handle_startendtag = handle_starttag

    def handle_data(self, data):
        if self._in == "style":
            self.styles.append(data)
        elif self._in is None:
            self.text.append(data)

    @property
    def all_text(self) -> str:
        return "".join(self.text)

    def hrefs(self) -> list[str]:
        return [a["href"] for t, a in self.tags if "href" in a]


URL_ATTRS = ("src", "srcset", "href", "action", "formaction", "poster", "data", "xlink:href", "background")


def outside_references(page: Page) -> list[str]:
    """Attributes that would load or link anything outside the page itself."""
    out = []
    for tag, attrs in page.tags:
        for k, v in attrs.items():
            if k in URL_ATTRS and not (k == "href" and v is not None and v.startswith("#")):
                out.append(f"<{tag} {k}={v!r}>")
            if k.startswith("on"):
                out.append(f"<{tag} {k}=...> (event handler attribute)")
        if tag in ("link", "iframe", "img", "object", "embed", "base", "image", "use", "video", "audio", "source"):
            out.append(f"<{tag}>")
    return out


CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run")


def chromium() -> str:
    """The Chromium binary, or a skip (a failure under MMVERIFY_REQUIRE_EXTRAS=1)."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    reason = ("headless Chromium is not installed (Debian: apt-get install chromium); the real-browser test of the "
              "HTML pages needs it")
    if os.environ.get("MMVERIFY_REQUIRE_EXTRAS") == "1":
        pytest.fail(reason + " and MMVERIFY_REQUIRE_EXTRAS=1 requires it")
    pytest.skip(reason)


def run_chromium(binary: str, profile: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ, HOME=profile)
    return subprocess.run([binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args], capture_output=True,
                          text=True, timeout=timeout, env=env)
