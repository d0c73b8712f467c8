"""The HTML report in a real headless browser (Debian's chromium): no console errors, one table per
(dataset, metric), a click on a header sorts that table only, the filter box filters its table
only, every image decodes, a screenshot is taken.

Where chromium is missing: under CI (``CI=true``) as root the test installs Debian's package itself
(``.ci/run`` stays the README's command) and fails loudly if it cannot; elsewhere it skips, saying
why. The page is driven without a DevTools client: a probe script injected into a copy of the page
records errors and clicks a header on load, and ``--dump-dom`` returns the DOM after it ran.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile

import pytest

import ldpbench
from ldpbench.report.markdown import write_report

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

PROBE_HEAD = """<script>
window.__errors = [];
window.addEventListener('error', function (e) { window.__errors.push(String(e.message)); });
var __ce = console.error;
console.error = function () { window.__errors.push(Array.prototype.join.call(arguments, ' ')); __ce.apply(console, arguments); };
</script>"""

PROBE_TAIL = """<script>
(function () {
  function column(table, name) {
    var heads = Array.prototype.map.call(table.tHead.rows[0].cells, function (th) { return th.textContent; });
    var col = heads.indexOf(name);
    return Array.prototype.map.call(table.tBodies[0].rows, function (r) { return r.cells[col].dataset.v; });
  }
  var tables = document.querySelectorAll('table.lb');
  var first = document.getElementById('lb-1'), second = document.getElementById('lb-2');
  var heads = Array.prototype.map.call(first.tHead.rows[0].cells, function (th) { return th.textContent; });
  var col = heads.indexOf('mean');
  var before = column(first, 'mean'), otherBefore = column(second, 'mean');
  first.tHead.rows[0].cells[col].click();
  var asc = column(first, 'mean');
  first.tHead.rows[0].cells[col].click();
  var desc = column(first, 'mean');
  var otherAfter = column(second, 'mean');
  // filter the second table: only its oue rows stay visible, the first table is untouched
  var box = document.querySelector('input.filter[data-table="lb-2"]');
  box.value = 'oue';
  box.dispatchEvent(new Event('input'));
  function visible(table) {
    return Array.prototype.filter.call(table.tBodies[0].rows, function (r) { return r.style.display !== 'none'; })
      .map(function (r) { return r.textContent; });
  }
  document.body.setAttribute('data-probe', JSON.stringify({
    errors: window.__errors, tables: tables.length,
    headings: Array.prototype.map.call(document.querySelectorAll('section.group h3'), function (h) { return h.textContent; }),
    before: before, asc: asc, desc: desc, otherBefore: otherBefore, otherAfter: otherAfter,
    visibleSecond: visible(second), visibleFirst: visible(first).length, rowsFirst: first.tBodies[0].rows.length,
    tied: document.querySelectorAll('tr.tied').length + document.querySelectorAll('tr.best').length,
    images: Array.prototype.map.call(document.images, function (i) { return i.naturalWidth; })}));
})();
</script>"""


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    if os.environ.get("CI", "").lower() in ("true", "1") and hasattr(os, "geteuid") and os.geteuid() == 0:
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update"], check=True, env=env, capture_output=True)
        subprocess.run(["apt-get", "install", "-y", "chromium"], check=True, env=env, capture_output=True)
        found = shutil.which("chromium")
        assert found, "CI: apt-get install chromium succeeded but no chromium on PATH"
        return found
    if os.environ.get("CI", "").lower() in ("true", "1"):
        pytest.fail("CI: chromium is missing and cannot be installed without root")
    pytest.skip("chromium is not installed (apt-get install chromium); under CI=true as root the test installs it")


def test_html_report_in_headless_chromium(tmp_path):
    browser = _chromium()
    spec = {
        "name": "browser",
        "seed": 5,
        "repeats": 6,
        "datasets": [{"zipf": {"d": 64, "n": 20000}}],
        "epsilons": [1, 4],
        "oracles": ["grr", "oue"],
        "pipelines": ["base", "norm-sub"],
        "metrics": ["mse", "l1"],
    }
    ldpbench.run(spec, tmp_path / "r", workers=1)
    page = write_report(tmp_path / "r", tmp_path / "rep", html=True).html
    text = page.read_text()
    probed = tmp_path / "probe.html"
    probed.write_text(text.replace("<head>", "<head>" + PROBE_HEAD, 1).replace("</body>", PROBE_TAIL + "</body>", 1))
    profile = tempfile.mkdtemp(dir=tmp_path)
    run = [browser, *FLAGS, f"--user-data-dir={profile}"]
    dom = subprocess.run([*run, "--dump-dom", probed.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    match = re.search(r"data-probe=\"([^\"]*)\"", dom.stdout)
    assert match, dom.stdout[:2000]
    probe = json.loads(match.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    assert probe["errors"] == []
    # one table per (dataset, metric), each with its heading
    assert probe["tables"] == 2
    assert probe["headings"] == [
        "zipf(d=64,n=20000) · mse (lower is better)",
        "zipf(d=64,n=20000) · l1 (lower is better)",
    ]
    # a click on a header sorts that table, ascending then descending, and leaves the other alone
    values = [float(v) for v in probe["asc"]]
    assert values == sorted(values) and probe["asc"] != probe["before"]
    assert [float(v) for v in probe["desc"]] == sorted(values, reverse=True)
    assert probe["otherAfter"] == probe["otherBefore"]
    # typing in a table's box filters that table only
    assert len(probe["visibleSecond"]) == 4 and all("oue" in row for row in probe["visibleSecond"])
    assert probe["visibleFirst"] == probe["rowsFirst"] == 8
    assert probe["tied"] >= 4  # a best (or tied) row per epsilon and metric
    assert len(probe["images"]) >= 3 and all(w > 0 for w in probe["images"])  # figures and CD diagrams decoded
    shot = tmp_path / "report.png"
    subprocess.run(
        [*run, f"--screenshot={shot}", "--window-size=1280,1600", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
