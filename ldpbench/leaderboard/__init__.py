"""Stage 5 of a run: the leaderboard, from stored rows to a verdict.

- :mod:`.aggregate`: rows -> one leaderboard row per group (mean, standard error, confidence
  interval, best and tied-with-best marks);
- :mod:`.render`: the leaderboard as a terminal table, Markdown, CSV or JSON;
- :mod:`.load`: leaderboards read back, from a results folder or a JSON file (a CI baseline);
- :mod:`.compare`: baseline against current, the noise-aware regression gate;
- :mod:`.identical`: rows that are the same numbers under different names;
- :mod:`.theory`: rows whose measurement is far from their theory.
"""
