"""Stage 4 of a run: the versioned results folder (asv's ``results.py`` idea).

A folder written by ``ldpbench run`` holds ``results.jsonl`` (a schema header, then the rows of
:mod:`ldpbench.engine.rows`, appended one cell at a time), ``manifest.json`` (what was run, with
what, where) and ``leaderboard.json``.

- :mod:`.store`: the folder itself: atomic appends, the run lock, reading rows back;
- :mod:`.appends`: a cell's latest append supersedes its earlier rows;
- :mod:`.status`: which stored cells are done, and which are stale (stored by other code or data);
- :mod:`.read`: a folder read back for the readers (``leaderboard``, ``compare``, ``report``):
  the rows of the spec its manifest records;
- :mod:`.manifest` and :mod:`.machine`: what a manifest records;
- :mod:`.versioning`: schema versions of every file, and the migrations that read older ones;
- :mod:`.jsoncodec`: strict JSON as ldpbench writes it.
"""
