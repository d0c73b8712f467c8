"""The speed figures of the README and docs/ are marked for scripts/docs_figures.py, which
measures and rewrites them: every marker names a figure it knows, and every figure is used."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location("docs_figures", ROOT / "scripts" / "docs_figures.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_every_marker_is_a_known_figure_and_every_figure_is_marked():
    assert _script().check() == []


def test_the_quoted_timings_are_marked():
    figures = _script()
    # The README quotes the quick start's time; the speed table lives in docs/scale-out.md.
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "quickstart-wall" in figures.markers(readme)
    speed = (ROOT / "docs" / "scale-out.md").read_text(encoding="utf-8")
    assert {"quickstart-wall", "ci-wall", "kosarak-sweep-wall", "postprocess-kosarak", "em-per-estimate"} <= set(
        figures.markers(speed)
    )
    assert "ci-wall" in figures.markers((ROOT / "docs" / "ci.md").read_text(encoding="utf-8"))


def test_the_script_owns_every_page_with_a_marker():
    # a marker on a page the script does not rewrite would never be measured again
    figures = _script()
    owned = {path.resolve() for path in figures.DOCS}
    marked = [p for p in [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")] if "<!-- fig:" in p.read_text("utf-8")]
    assert marked and not [str(p.relative_to(ROOT)) for p in marked if p.resolve() not in owned]


def test_an_unknown_marker_is_reported(tmp_path, monkeypatch):
    figures = _script()
    page = tmp_path / "page.md"
    page.write_text("takes <!-- fig:no-such-figure -->1 s<!-- /fig -->\n")
    monkeypatch.setattr(figures, "DOCS", (*figures.DOCS, page))
    monkeypatch.setattr(figures, "ROOT", tmp_path.parent)
    assert any("unknown figure 'no-such-figure'" in p for p in figures.check())


def test_a_span_prints_its_unit_once():
    figures = _script()
    assert figures.span([0.012, 0.018], figures.milliseconds) == "12–18 ms"
    assert figures.span([0.05, 0.21], figures.seconds_or_ms) == "50 ms–0.21 s"
    assert figures.span([0.0121, 0.0122], figures.milliseconds) == "12 ms"
