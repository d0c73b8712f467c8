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
    if not scored:
        # Short names are too short for the ratio ('l2' is 0.5 from 'l1'): one edit away counts.
        scored = [(0.0, len(os.path.commonprefix([key, c])), c) for c in folded if _one_edit(key, c)]
    return folded[max(scored)[2]] if scored else None


def _one_edit(a: str, b: str) -> bool:
    """Whether ``a`` becomes ``b`` by one substitution, insertion or deletion (not equal)."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b)) == 1
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))
