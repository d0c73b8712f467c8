"""``ldpbench report DIR --html``: one self-contained page (no browser here: structure only)."""

from __future__ import annotations

import re

import ldpbench


def test_html_report_is_self_contained_with_tie_marks_ranks_failures_and_provenance(tmp_path, run_cli):
    spec = {
        "name": "page",
        "seed": 3,
        "repeats": 6,
        "datasets": [{"zipf": {"d": 64, "n": 20000}}],
        "epsilons": [1, 4],
        "oracles": ["grr", "oue"],
        "pipelines": ["base", "norm-sub"],
        "metrics": ["mse"],
    }
    ldpbench.run(spec, tmp_path / "r", workers=1)
    out = run_cli("report", "r", "--html", "-o", "rep")
    assert out.returncode == 0, out.stderr
    page = (tmp_path / "rep" / "report.html").read_text()
    # no network: every image inline, no external script, style or link
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", page)
    images = re.findall(r'<img [^>]*src="([^"]+)"', page)
    assert len(images) == 2 and all(i.startswith("data:image/png;base64,") for i in images)  # figure + CD
    assert '<table class="lb" id="lb-1">' in page and '<th class="">rank</th>' in page
    assert page.count('<tr class="best">') == 2  # one best per epsilon
    assert "Ranks across the grid" in page and "No failures." in page
    assert '"seed": 3' in page and '"commit"' in page  # provenance from manifest.json
    assert "addEventListener('click'" in page
