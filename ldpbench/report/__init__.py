"""Stage 6: reports of a run for people.

- :mod:`.markdown`: ``ldpbench report``: leaderboard tables and the papers' metric-vs-epsilon
  figures, with :mod:`.sections` (theory against measurement, the uniform baseline, ranks across
  the grid);
- :mod:`.figures`: readable figures for any leaderboard;
- :mod:`.html`: the same report as one self-contained HTML file;
- :mod:`.history`: a leaderboard's history across several results folders.
"""
