"""Statistics over repeated, paired measurements: ties with the best, ranks across a grid.

- :mod:`.paired`: within one leaderboard group, every row against the group's best on the
  per-repeat paired differences (Wilcoxon signed-rank, Holm's correction, paired bootstrap
  interval).
- :mod:`.ranks`: across the cells of a grid, average ranks, the Friedman test, Holm-corrected
  pairwise Wilcoxon tests and the critical difference of Nemenyi (Demšar, JMLR 2006).

``docs/statistics.md`` states each test and its assumptions.
"""

from ldpbench.stats.paired import DEFAULT_ALPHA, PairedResult, compare_with_best, holm

__all__ = ["DEFAULT_ALPHA", "PairedResult", "compare_with_best", "holm"]
