"""What the HTML pages share: escaping, the page frame (inline CSS, a content
security policy that forbids every outside resource, a small sorting script),
table cells and the colour scale.

Every string that reaches a page goes through :func:`esc`: manifests, judge
files and artifacts are hostile, so an entry name, an error message or a gate
detail is text, never markup. Element ids are made from indices only, never
from such strings. The pages load nothing: no URL appears in an attribute, and
the policy (``default-src 'none'``) would refuse one anyway.
"""
from __future__ import annotations

import html
from fractions import Fraction
from typing import Iterable, Sequence

from mmverify.render.tables import printable

# no outside resource of any kind; the inline style and the one inline script only
POLICY = ("default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; "
          "base-uri 'none'; form-action 'none'")

CSS = """
:root { --fg:#1b1f24; --muted:#57606a; --line:#d0d7de; --bg:#ffffff; --head:#f6f8fa; --accent:#0b5cad;
        --bad:#b42318; --good:#1a7f37; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif; color: var(--fg);
       background: var(--bg); margin: 0 auto; max-width: 1240px; padding: 16px 20px 48px; }
h1 { font-size: 24px; margin: 4px 0 6px; } h2 { font-size: 19px; margin: 28px 0 8px; border-bottom: 1px solid var(--line);
  padding-bottom: 4px; } h3 { font-size: 15px; margin: 18px 0 6px; }
p, li { max-width: 100ch; } .muted { color: var(--muted); } .small { font-size: 12px; }
nav { margin: 8px 0 4px; } nav a { margin-right: 14px; }
a { color: var(--accent); }
table { border-collapse: collapse; margin: 6px 0 10px; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid var(--line); padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: var(--head); font-weight: 600; }
td.num { text-align: right; white-space: nowrap; } th.num { text-align: right; }
.nowrap { white-space: nowrap; }
th button { all: unset; cursor: pointer; } th button:focus-visible { outline: 2px solid var(--accent); }
th[aria-sort="ascending"] button::after { content: " \\25B2"; } th[aria-sort="descending"] button::after { content: " \\25BC"; }
.wrap { overflow-x: auto; }
.pill { display: inline-block; padding: 0 6px; border-radius: 9px; font-size: 12px; border: 1px solid var(--line); }
.fail { color: var(--bad); font-weight: 600; } .pass { color: var(--good); } .gap { color: #9a6700; font-weight: 600; }
tr.baseline td { background: #f3f8ff; }
tbody:target td, tr:target td { background: #fff8c5; }
.heat a { color: inherit; text-decoration: none; display: block; }
figure { margin: 8px 0 14px; } figcaption { color: var(--muted); font-size: 12px; max-width: 100ch; }
svg text { font: 11px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; fill: #1b1f24; }
svg .axis { stroke: #8c959f; stroke-width: 1; } svg .grid { stroke: #eaeef2; stroke-width: 1; }
code { font-size: 12.5px; background: #f6f8fa; padding: 0 3px; border-radius: 3px; }
"""

# click a header to sort the table by that column; numbers sort by data-v,
# cells without a value sort last both ways; without JavaScript the table is
# simply shown in the order written
SORT_SCRIPT = """
(function () {
  function key(cell) {
    var v = cell.getAttribute('data-v');
    if (v === null) { return {n: false, t: cell.textContent.trim().toLowerCase()}; }
    if (v === '') { return null; }
    return {n: true, x: parseFloat(v)};
  }
  function sortBy(table, col, th) {
    var asc = th.getAttribute('aria-sort') !== 'ascending';
    Array.prototype.forEach.call(table.querySelectorAll('thead th'), function (h) { h.removeAttribute('aria-sort'); });
    th.setAttribute('aria-sort', asc ? 'ascending' : 'descending');
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var ka = key(a.cells[col]), kb = key(b.cells[col]);
      if (ka === null || kb === null) { return (ka === null) - (kb === null); }
      var c = ka.n && kb.n ? ka.x - kb.x : (ka.n ? ka.x + '' : ka.t).localeCompare(kb.n ? kb.x + '' : kb.t);
      return asc ? c : -c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  Array.prototype.forEach.call(document.querySelectorAll('table.sortable'), function (table) {
    Array.prototype.forEach.call(table.querySelectorAll('thead th'), function (th, col) {
      var b = document.createElement('button');
      b.type = 'button';
      while (th.firstChild) { b.appendChild(th.firstChild); }
      th.appendChild(b);
      b.addEventListener('click', function () { sortBy(table, col, th); });
    });
  });
})();
"""


def esc(value: object) -> str:
    """Text for HTML (element content and quoted attributes): control
    characters written as escapes, then ``& < > " '`` escaped."""
    return html.escape(printable(str(value)), quote=True)


def page(title: str, body: Iterable[str], *, sortable: bool = True) -> str:
    """A complete, self-contained HTML document."""
    parts = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
             f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             '<meta name="referrer" content="no-referrer">',
             f"<title>{esc(title)}</title>", f"<style>{CSS}</style>", "</head>", "<body>"]
    parts.extend(body)
    if sortable:
        parts.append(f"<script>{SORT_SCRIPT}</script>")
    parts += ["</body>", "</html>"]
    return "\n".join(parts) + "\n"


def td(text: object, value: Fraction | float | int | None | str = "text", *, cls: str = "", attrs: str = "") -> str:
    """A table cell. ``value``: the number the column sorts by (None: no
    value, sorted last); the default ``"text"`` sorts by the text."""
    sort = ""
    if value != "text":
        sort = ' data-v=""' if value is None else f' data-v="{float(value)!r}"'
        cls = (cls + " num").strip()
    klass = f' class="{cls}"' if cls else ""
    return f"<td{klass}{sort}{attrs}>{text if isinstance(text, Markup) else esc(text)}</td>"


class Markup(str):
    """Text that is already HTML (built here from escaped parts)."""


def table(head: Sequence[str | tuple[str, str]], rows: Iterable[str | Sequence[str]], *, sortable: bool = True,
          caption: str | None = None, cls: str = "") -> str:
    """An HTML table; ``head`` items are header texts or (text, class);
    each row is a string of ``<td>`` cells or a sequence of them (a row given
    as a string starting ``<tr`` is used as it is)."""
    classes = " ".join(x for x in (("sortable" if sortable else ""), cls) if x)
    out = [f'<div class="wrap"><table{f" class={chr(34)}{classes}{chr(34)}" if classes else ""}>']
    if caption:
        out.append(f"<caption class=\"muted small\">{esc(caption)}</caption>")
    ths = []
    for h in head:
        text, hcls = (h, "") if isinstance(h, str) else h
        ths.append(f'<th scope="col"{f" class={chr(34)}{hcls}{chr(34)}" if hcls else ""}>{esc(text)}</th>')
    if any(text for text in (h if isinstance(h, str) else h[0] for h in head)):
        out.append("<thead><tr>" + "".join(ths) + "</tr></thead>")
    out.append("<tbody>")
    for r in rows:
        if isinstance(r, str) and r.startswith("<tr"):
            out.append(r)
        else:
            out.append("<tr>" + "".join(r) + "</tr>")
    out.append("</tbody></table></div>")
    return "\n".join(out)


def pct(x: Fraction | float | None, digits: int = 2) -> str:
    return "-" if x is None else f"{float(x) * 100:.{digits}f}"


def heat_colour(x: Fraction | float) -> tuple[str, str]:
    """(fill, text colour) for a value on [0, 1]: light yellow to dark blue."""
    t = min(1.0, max(0.0, float(x)))
    stops = [(0.0, (255, 247, 188)), (0.5, (65, 182, 196)), (1.0, (8, 48, 107))]
    for (t0, c0), (t1, c1) in zip(stops, stops[1:]):
        if t <= t1:
            u = (t - t0) / (t1 - t0)
            rgb = tuple(round(a + (b - a) * u) for a, b in zip(c0, c1))
            break
    text = "#ffffff" if t > 0.55 else "#1b1f24"
    return "#%02x%02x%02x" % rgb, text


FORCED_FILL = "#d1242f"      # a hard gate zeroed the cell: red
BROKEN_FILL = "#f0a35e"      # invalid or error: orange
MISSING_FILL = "#eaeef2"     # no artifact: pale grey
NOT_SCORED_FILL = "#afb8c1"  # no panel paper votes: grey
