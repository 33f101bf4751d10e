"""The board page in a real browser: headless Chromium loads the page the CLI
writes for the shipped example manifest and judge file, takes a screenshot
(not blank: the heat map's colours are on it) and dumps the DOM (every entry
named; the sorting script ran and sorts), and the page as written holds the
tables in rank order for a browser without JavaScript. Skipped where Chromium is missing; a failure under
MMVERIFY_REQUIRE_EXTRAS=1."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from mmverify.render.htmlpage import FORCED_FILL

from .kit import Page, chromium, run_chromium
from .png import grey_variance, read_png

REPO = Path(__file__).resolve().parents[2]
ENTRIES = ("oracle", "sloppy", "sample")


@pytest.fixture(scope="module")
def board_page(tmp_path_factory) -> Path:
    binary = chromium()          # skip (or fail) before any work when there is no browser
    assert binary
    out = tmp_path_factory.mktemp("html") / "board.html"
    r = subprocess.run([sys.executable, "-m", "mmverify", "board", str(REPO / "examples" / "board.jsonl"),
                        "--baseline", "oracle", "--bootstrap", "200", "--html", str(out),
                        "--judge", str(REPO / "examples" / "judge.csv")], capture_output=True, text=True, timeout=300)
    assert r.returncode in (0, 1) and out.exists(), r.stderr
    return out


def leaderboard_order(dom: str) -> list[str]:
    section = dom[dom.index('id="leaderboard"'):dom.index('id="suites"')]
    body = section[section.index("<tbody>"):section.index("</tbody>")]
    return re.findall(r"<tr[^>]*>\s*<td[^>]*>[^<]*</td>\s*<td[^>]*><b>([^<]*)</b>", body)


def test_screenshot_shows_the_board(board_page, tmp_path):
    shot = tmp_path / "board.png"
    r = run_chromium(chromium(), str(tmp_path / "profile"), f"--screenshot={shot}", "--window-size=1280,2000",
                     board_page.as_uri())
    assert shot.exists(), r.stderr[-2000:]
    img = read_png(shot.read_bytes())
    assert (img.width, img.height) == (1280, 2000)
    assert grey_variance(img) > 300                       # a blank or single-colour page is about 0
    colours = {img.rgb(x, y) for y in range(0, img.height, 3) for x in range(0, img.width, 3)}
    assert len(colours) > 50
    red = tuple(int(FORCED_FILL[i:i + 2], 16) for i in (1, 3, 5))
    assert red in colours                                 # the heat map's cell a hard gate zeroed
    assert (8, 48, 107) in colours                        # and its cells at O-EVAL 100 %


def test_the_dom_names_every_entry_and_the_columns_sort(board_page, tmp_path):
    r = run_chromium(chromium(), str(tmp_path / "profile"), "--dump-dom", board_page.as_uri())
    dom = r.stdout
    assert "</html>" in dom, r.stderr[-2000:]
    text = Page(dom).all_text
    for entry in ENTRIES:
        assert entry in text
    assert "example-judge (rubric v1)" in text
    assert '<th scope="col" class="num"><button type="button">' in dom      # the script ran
    assert leaderboard_order(dom) == ["oracle", "sloppy", "sample"]        # rank order

    # click the O-EVAL header once (ascending, numeric), as a user would
    clicked = tmp_path / "clicked.html"
    page = board_page.read_text(encoding="utf-8")
    click = ("<script>document.querySelectorAll('#leaderboard thead th')[3].querySelector('button').click();"
             "</script></body>")
    clicked.write_text(page.replace("</body>", click), encoding="utf-8")
    r = run_chromium(chromium(), str(tmp_path / "profile2"), "--dump-dom", clicked.as_uri())
    assert leaderboard_order(r.stdout) == ["sample", "sloppy", "oracle"]
    assert 'aria-sort="ascending"' in r.stdout


def test_without_javascript_the_tables_are_all_there(board_page):
    # what a browser with scripts off shows is the page as written: the tables in rank order, no sort buttons
    # (headless Chromium cannot dump or shoot a page with scripts disabled, so the page itself is read)
    written = board_page.read_text(encoding="utf-8")
    assert "<button" not in written.split("<script>")[0]
    assert leaderboard_order(written) == ["oracle", "sloppy", "sample"]
    for entry in ENTRIES:
        assert entry in Page(written).all_text
