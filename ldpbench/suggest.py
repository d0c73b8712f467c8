"""Did-you-mean suggestions for unknown names (the tox / cfgv style of error)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def closest(name: str, candidates: Iterable[str]) -> str | None:
    """Return the candidate closest to ``name``, or ``None`` if nothing is close.

    ``norm_sub`` finds ``norm-sub`` and ``Norm-Sub`` too: underscores and case are folded
    before the fuzzy match, because those are the commonest slips in plugin names.
    """
    candidates = list(candidates)
    folded = {c.lower().replace("_", "-"): c for c in candidates}
    key = str(name).lower().replace("_", "-")
    if key in folded:
        return folded[key]
    match = difflib.get_close_matches(key, list(folded), n=1, cutoff=0.6)
    return folded[match[0]] if match else None
