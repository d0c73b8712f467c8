"""Statistics over repeated, paired measurements: ties with the best, ranks across a grid.

A library of the leaderboard and the report, depending on nothing else of ldpbench:

- :mod:`.paired`: within one leaderboard group, every row against the group's best on the
  per-repeat paired differences (Wilcoxon signed-rank, Holm's correction, paired bootstrap
  interval); :mod:`.ties` turns that into the leaderboard's columns.
- :mod:`.ranks`: across the cells of a grid, average ranks, the Friedman test, Holm-corrected
  pairwise Wilcoxon tests and the critical difference of Nemenyi (Demšar, JMLR 2006).

``docs/statistics.md`` states each test and its assumptions.
"""
