"""``ldpbench report DIR --html``: one self-contained HTML file.

No network: the figures are embedded as ``data:`` URIs and the few lines of JavaScript that sort
(click a header) and filter (type in the box above a table) are inline. The page holds the
leaderboard with its tie marks, the report's figures and critical-difference diagrams, the
failures with their reasons, and the provenance from ``manifest.json`` (spec, seeds, plugin
versions, commit, machine).

The leaderboard is one table per (dataset, users, metric), as the Markdown report groups it: a
single table of every row mixes metrics whose numbers cannot be compared, and sorting it by mean
would interleave them. Each group's table sorts and filters on its own.
"""

from __future__ import annotations

import base64
import html
import json
import math
from pathlib import Path
from typing import Any

import polars as pl

from ldpbench.leaderboard.render import format_epsilon, format_number, undecided_note
from ldpbench.stats.ties import manifest_alpha

HTML_FILE = "report.html"

_SCRIPT = """
document.querySelectorAll('table.lb').forEach(function (table) {
  var body = table.tBodies[0];
  table.querySelectorAll('th').forEach(function (th, col) {
    th.addEventListener('click', function () {
      var asc = th.dataset.dir !== 'asc';
      table.querySelectorAll('th').forEach(function (h) { delete h.dataset.dir; });
      th.dataset.dir = asc ? 'asc' : 'desc';
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = a.cells[col].dataset.v, y = b.cells[col].dataset.v;
        var nx = parseFloat(x), ny = parseFloat(y);
        var c = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : String(x).localeCompare(String(y));
        return asc ? c : -c;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});
document.querySelectorAll('input.filter').forEach(function (box) {
  box.addEventListener('input', function () {
    var table = document.getElementById(box.dataset.table), q = box.value.toLowerCase();
    Array.prototype.forEach.call(table.tBodies[0].rows, function (r) {
      r.style.display = r.textContent.toLowerCase().indexOf(q) >= 0 ? '' : 'none';
    });
  });
});
"""

_STYLE = """
body{font-family:system-ui,sans-serif;margin:1.5em;max-width:1400px}
table{border-collapse:collapse;font-size:13px;margin:.5em 0 1.5em}
th,td{border:1px solid #ccc;padding:2px 6px;text-align:right}
th{cursor:pointer;background:#f3f3f3}th[data-dir=asc]::after{content:' ▲'}th[data-dir=desc]::after{content:' ▼'}
td.t,th.t{text-align:left}tr.best td{font-weight:bold}tr.tied td{background:#f4fbf4}
img{max-width:100%}section.group h3{margin:1.2em 0 .2em;font-size:15px}ul.contents{font-size:13px;columns:2}
input.filter{display:block;margin:.2em 0}div.scroll{max-height:26em;overflow-y:auto;display:inline-block;margin-bottom:1em}div.scroll table{margin:0}
thead th{position:sticky;top:0;z-index:1}pre{background:#f6f6f6;padding:.5em;overflow-x:auto}
"""

_COLUMNS = (
    ("dataset", "t"),
    ("users", "t"),
    ("epsilon", ""),
    ("oracle", "t"),
    ("pipeline", "t"),
    ("metric", "t"),
    ("mean", ""),
    ("stderr", ""),
    ("rank", ""),
    ("tied_best", "t"),
    ("p_value", ""),
    ("theory", ""),
    ("repeats", ""),
    ("failed", ""),
)
#: Columns a grouped table leaves out: its heading states them.
_GROUP_KEYS = ("dataset", "users", "metric")


def data_uri(path: Path) -> str:
    """A PNG as a ``data:`` URI (the page must load without the files beside it)."""
    return "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def _cell(key: str, value: Any) -> tuple[str, str]:
    """(sort key, shown text) of a leaderboard value."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "", "—"
    if key == "epsilon":
        return repr(value), format_epsilon(value).removeprefix("ε=")
    if key == "tied_best":
        return str(int(bool(value))), "≈" if value else ""
    if isinstance(value, float):
        return repr(value), format_number(value)
    return str(value), str(value)


def _undecided(lb: pl.DataFrame, manifest: Any) -> list[str]:
    """The leaderboard's note on rows too few repeats could not decide, as a paragraph."""
    note = undecided_note(lb, manifest_alpha(manifest))
    return [f"<p>{html.escape(note)}.</p>"] if note else []


def leaderboard_table(lb: pl.DataFrame, table_id: str = "lb", omit: tuple[str, ...] = ()) -> str:
    """The leaderboard as a sortable, filterable HTML table (best rows bold, tied rows shaded).

    :param omit: columns left out (a grouped table's heading already names them).
    """
    shown = [(k, c) for k, c in _COLUMNS if k in lb.columns and k not in omit]
    head = "".join(f'<th class="{c}">{html.escape(k)}</th>' for k, c in shown)
    rows = []
    for r in lb.iter_rows(named=True):
        cls = "best" if r.get("best") else ("tied" if r.get("tied_best") else "")
        tds = []
        for k, c in shown:
            key, text = _cell(k, r[k])
            tds.append(f'<td class="{c}" data-v="{html.escape(key, quote=True)}">{html.escape(text)}</td>')
        rows.append(f'<tr class="{cls}">' + "".join(tds) + "</tr>")
    box = f'<input class="filter" data-table="{table_id}" placeholder="filter rows…" size="40">'
    # A long group scrolls in its own box under a sticky header, so the next group stays in reach.
    return (
        f'{box}<div class="scroll"><table class="lb" id="{table_id}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def grouped_tables(lb: pl.DataFrame) -> str:
    """One sortable, filterable table per (dataset, users, metric), with a contents list above."""
    if lb.is_empty():
        return "<p>No results.</p>"
    contents, tables = [], []
    groups = lb.group_by(list(_GROUP_KEYS), maintain_order=True)
    for i, ((dataset, users, metric), sub) in enumerate(groups, start=1):
        gib = sub["greater_is_better"].drop_nulls()
        direction = "" if gib.is_empty() else (" (higher is better)" if gib[0] else " (lower is better)")
        title = " · ".join([str(dataset)] + ([f"users {users}"] if users else []) + [f"{metric}{direction}"])
        anchor = f"g{i}"
        contents.append(f'<li><a href="#{anchor}">{html.escape(title)}</a> ({sub.height} rows)</li>')
        tables.append(
            f'<section class="group" id="{anchor}"><h3>{html.escape(title)}</h3>'
            + leaderboard_table(sub, f"lb-{i}", omit=_GROUP_KEYS)
            + "</section>"
        )
    return f'<ul class="contents">{"".join(contents)}</ul>' + "".join(tables)


def failures_table(lb: pl.DataFrame, where: dict[tuple[Any, ...], str] | None = None) -> str:
    """Every row with failed repeats: the first error and where in plugin code it was raised."""
    failed = lb.filter(pl.col("failed") > 0)
    if failed.is_empty():
        return "<p>No failures.</p>"
    where = where or {}
    rows = []
    for r in failed.iter_rows(named=True):
        at = where.get((r["dataset"], r["users"], r["oracle"], r["pipeline"], r["metric"], r["error"]), "")
        cells = [
            r["dataset"],
            format_epsilon(r["epsilon"]).removeprefix("ε="),
            r["oracle"],
            r["pipeline"],
            r["metric"],
            r["failed"],
            r["error"] or "",
            at,
        ]
        rows.append("<tr>" + "".join(f'<td class="t">{html.escape(str(c))}</td>' for c in cells) + "</tr>")
    return (
        "<table><thead><tr><th>dataset</th><th>ε</th><th>oracle</th><th>pipeline</th><th>metric</th>"
        f"<th>failed repeats</th><th>error</th><th>where</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def warnings_table(lb: pl.DataFrame) -> str:
    """Every row whose plugins left a warning, named (:mod:`ldpbench.leaderboard.notes`)."""
    from ldpbench.leaderboard.notes import noted_rows

    noted = noted_rows(lb)
    if not noted:
        return "<p>No warnings.</p>"
    rows = "".join(
        f'<tr><td class="t">{html.escape(row)}</td><td class="t">{html.escape(notes)}</td></tr>' for row, notes in noted
    )
    return f"<table><thead><tr><th>row</th><th>warnings</th></tr></thead><tbody>{rows}</tbody></table>"


def _provenance(manifest: dict[str, Any] | None) -> dict[str, Any]:
    # The cell order is bookkeeping for re-aggregation (thousands of ids), not provenance.
    return {k: v for k, v in (manifest or {}).items() if k != "cell_order"}


def write_html(
    lb: pl.DataFrame,
    manifest: dict[str, Any] | None,
    figures: list[Path],
    rank_figures: list[Path],
    rank_text: str,
    out: Path,
    title: str,
    where: dict[tuple[Any, ...], str] | None = None,
) -> Path:
    """Write ``out/report.html``; returns its path.

    :param where: where each failed group's error was raised, by (dataset, users, oracle,
        pipeline, metric, error), as :func:`ldpbench.report.markdown.write_report` finds it.
    """
    parts = [
        f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
        f"<style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1>",
        "<p>Mean over repeats; <b>bold</b>: best mean of its group; shaded / ≈: not significantly worse "
        "than the best (model confidence set over paired repeats). One table per dataset and metric; "
        "click a header to sort, type in the box above a table to filter it.</p>",
        *_undecided(lb, manifest),
        "<h2>Leaderboard</h2>",
        grouped_tables(lb),
        "<h2>Figures</h2>",
    ]
    parts += [f'<figure><img alt="{html.escape(p.stem)}" src="{data_uri(p)}"></figure>' for p in figures]
    if rank_figures:
        parts.append("<h2>Ranks across the grid</h2>")
        parts += [f'<figure><img alt="{html.escape(p.stem)}" src="{data_uri(p)}"></figure>' for p in rank_figures]
        parts.append(f"<pre>{html.escape(rank_text, quote=False)}</pre>")
    parts += [
        "<h2>Warnings</h2>",
        warnings_table(lb),
        "<h2>Failures</h2>",
        failures_table(lb, where),
        "<h2>Provenance</h2>",
        f"<pre>{html.escape(json.dumps(_provenance(manifest), indent=2, default=str), quote=False)}</pre>",
        f"<script>{_SCRIPT}</script></body></html>",
    ]
    path = out / HTML_FILE
    path.write_text("\n".join(parts), encoding="utf-8")
    return path
