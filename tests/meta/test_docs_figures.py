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


def test_the_peer_tables_are_marked_as_blocks():
    figures = _script()
    assert "peer-oracles" in figures.tables((ROOT / "README.md").read_text(encoding="utf-8"))
    speed = figures.tables((ROOT / "docs" / "scale-out.md").read_text(encoding="utf-8"))
    assert {"peer-oracles", "peer-heavy-hitters"} <= set(speed)
    assert "peer-heavy-hitters" in figures.tables((ROOT / "docs" / "heavy-hitters.md").read_text(encoding="utf-8"))


def test_an_unknown_or_broken_table_block_is_reported(tmp_path, monkeypatch):
    figures = _script()
    page = tmp_path / "page.md"
    page.write_text("<!-- table:no-such-table -->\n| a |\n<!-- /table -->\n\n<!-- table:peer-oracles --> | a |\n")
    monkeypatch.setattr(figures, "DOCS", (*figures.DOCS, page))
    monkeypatch.setattr(figures, "ROOT", tmp_path.parent)
    problems = figures.check()
    assert any("unknown table 'no-such-table'" in p for p in problems)
    assert any("a table block is a line" in p for p in problems)


def test_without_the_peers_the_tables_are_left_as_they_are(capsys):
    figures = _script()
    assert figures.measure_tables(["peer-oracles", "peer-heavy-hitters"], None) == {}
    err = capsys.readouterr().err
    assert err.count("left as it is (no --peers-python given") == 2
    # the block's text is replaced, and nothing else of the page
    text = "before <!-- fig:ci-wall -->7 s<!-- /fig -->\n<!-- table:peer-oracles -->\n| old |\n<!-- /table -->\nafter\n"
    new = figures.TABLE.sub(lambda m: f"<!-- table:{m.group(1)} -->\n| new |\n<!-- /table -->", text)
    assert new == text.replace("| old |", "| new |")


def test_an_interpreter_without_the_peers_leaves_the_tables(capsys):
    if importlib.util.find_spec("pure_ldp") or importlib.util.find_spec("multi_freq_ldpy"):
        return  # this interpreter has the peers: measuring would take minutes
    figures = _script()
    # the comparison script exits 2 ("not installed") before it imports ldpbench or times anything
    assert figures.measure_tables(["peer-oracles"], sys.executable) == {}
    assert "the peers are not installed" in capsys.readouterr().err
