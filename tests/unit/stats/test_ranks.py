"""Ranks across a grid (ldpbench/stats/ranks.py): Demšar's average ranks, Friedman, critical difference."""

from __future__ import annotations

import numpy as np
import pytest
from support import rank_board

from ldpbench.stats.ranks import GridRanks, grid_ranks


def test_average_ranks_friedman_and_the_nemenyi_cd_of_demsar():
    rng = np.random.default_rng(0)
    noise = rng.gamma(2.0, 1.0, 12)
    lb = rank_board({"a": list(noise), "b": list(noise * 1.5), "c": list(noise * 1.5 + rng.normal(0, 0.01, 12))})
    res = grid_ranks(lb)
    assert res.average_rank[0] == 1.0 and res.average_rank[1:].sum() == pytest.approx(5.0)
    # Demšar Table 5(a): q_0.05 = 2.343 for k = 3; CD = q sqrt(k(k+1)/(6N)), N = 12
    assert res.critical_difference == pytest.approx(2.343 * np.sqrt(12 / 72), rel=1e-3)
    assert res.friedman_p < 0.01
    adjusted = {(a, b): p for a, b, p in res.pairwise}
    assert adjusted[("oue · a", "oue · b")] < 0.05 and adjusted[("oue · b", "oue · c")] > 0.05


def _grid(k: int, cd: float) -> GridRanks:

    ranks = np.array([1.0 + 0.9 * ((7 * i) % k) for i in range(k)])  # distinct, in scrambled order
    return GridRanks("mse", [f"m{i}" for i in range(k)], ranks, 10, 0.0, 1.0, cd)


def test_a_cd_diagram_of_many_methods_names_the_best_twenty_and_counts_the_rest(tmp_path):
    from ldpbench.stats.ranks import cd_layout, plot_cd

    result = _grid(44, cd=3.0)
    layout = cd_layout(result)
    best = sorted(range(44), key=lambda i: result.average_rank[i])[:20]
    assert layout.shown == best
    last = result.average_rank[best[-1]]
    assert layout.axis_end == int(np.ceil(last)) + 1
    assert layout.note.startswith("best 20 of 44 methods by average rank; 24 more (ranks ")
    # bars join only runs of shown methods within CD of the first
    for a, b in layout.cliques:
        assert result.average_rank[best[b]] - result.average_rank[best[a]] < 3.0
    assert plot_cd(result, tmp_path / "cd.png", max_methods=20).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_small_cd_diagram_shows_every_method_on_the_whole_axis():
    from ldpbench.stats.ranks import cd_layout

    layout = cd_layout(_grid(6, cd=1.0))
    assert len(layout.shown) == 6 and layout.axis_end == 6 and layout.note == ""


def test_methods_equal_in_every_cell_are_ranked_once_under_both_names():
    rng = np.random.default_rng(3)
    base = rng.gamma(2.0, 1.0, 10)
    same = base * 2.0
    lb = rank_board({"a": list(base), "power": list(same), "calibrate": list(same * (1 + 1e-12)), "c": list(base * 3)})
    res = grid_ranks(lb)
    assert res.methods == ["oue · a", "oue · power = oue · calibrate", "oue · c"]
    assert list(res.average_rank) == [1.0, 2.0, 3.0]
    # a method that differs in a single cell stays apart
    near = list(same)
    near[4] *= 1.001
    res = grid_ranks(rank_board({"a": list(base), "power": list(same), "calibrate": near}))
    assert len(res.methods) == 3


def test_too_few_blocks_are_said_not_counted_as_no_difference():
    """Three cells, 15 methods: no pair can reach Holm-adjusted p < 0.05 (105 pairs), so the
    summary says how many cells a difference needs instead of "0 of 105 pairs differ"."""
    from ldpbench.stats.ranks import GridRanks, format_ranks, min_blocks, smallest_pairwise_p

    assert min_blocks(105, 0.05) == 13 and min_blocks(1, 0.05) == 5  # the normal approximation (ties) reaches 0.043
    assert smallest_pairwise_p(13, 105) < 0.05 <= smallest_pairwise_p(12, 105)
    methods = [f"m{i}" for i in range(15)]
    pairs = [(a, b, 1.0) for i, a in enumerate(methods) for b in methods[i + 1 :]]
    few = GridRanks("mse", methods, np.arange(1.0, 16.0), 3, 10.0, 0.5, 12.0, pairs)
    text = format_ranks(few)
    assert "3 blocks cannot show a difference at alpha 0.05; at least 13 are needed" in text
    assert "pairs differ" not in text
    enough = GridRanks("mse", methods, np.arange(1.0, 16.0), 13, 10.0, 0.5, 12.0, pairs)
    assert "0 of 105 pairs differ at alpha 0.05" in format_ranks(enough)
