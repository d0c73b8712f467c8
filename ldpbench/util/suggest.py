"""Did-you-mean suggestions for unknown names (the tox / cfgv style of error)."""

from __future__ import annotations

import difflib
import os
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
    scored = []
    for candidate in folded:
        matcher = difflib.SequenceMatcher(None, key, candidate)
        if matcher.real_quick_ratio() >= 0.6 and matcher.quick_ratio() >= 0.6 and matcher.ratio() >= 0.6:
            # Equally similar names: the one that starts like the typo ('gr' is 'grr', not 'pgr').
            prefix = len(os.path.commonprefix([key, candidate]))
            scored.append((matcher.ratio(), prefix, candidate))
    return folded[max(scored)[2]] if scored else None
