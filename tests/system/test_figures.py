"""Report figures: past sixteen panels a metric's figure goes into more files."""

from __future__ import annotations

from support import figure_leaderboard

from ldpbench.report.figures import DEFAULT_FACET, plot_metric


def test_more_files_past_sixteen_panels(tmp_path):
    lb = figure_leaderboard(pipelines=("a",), epsilons=(1.0,), datasets=tuple("abcde"))
    many = plot_metric(lb, "mse", "", tmp_path / "fig-two.png", facet=DEFAULT_FACET)
    assert [d.path.name for d in many.drawn] == ["fig-two.png", "fig-two-2.png"]
    assert [d.panels for d in many.drawn] == [16, 4]
    for d in many.drawn:
        assert d.path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
