"""Measurement beside theory: which leaderboard rows are far from their expected value.

Every row whose pipeline left the oracle's vector unchanged carries a ``theory`` column, the
expected value of its metric (:mod:`ldpbench.engine.theory`). A measured mean both far from it
(ratio beyond :data:`FAR`) and significantly far (beyond :data:`FAR_SIGMAS` standard errors) is
how a wrong oracle, a variance formula and a sampler that disagree, shows itself in a run summary
and a report without a dedicated test.
"""

from __future__ import annotations

import math
from typing import Any

from ldpbench.leaderboard.render import format_epsilon, format_number

#: measured/theory outside [1/FAR, FAR] (and beyond the noise, see :func:`far_from_theory`) is
#: flagged in the run summary.
FAR = 1.25
#: ... and more than this many standard errors away from theory.
FAR_SIGMAS = 4.0


def far_from_theory(mean: float, stderr: float, theory: float) -> bool:
    """True when a measured mean is both far (ratio beyond :data:`FAR`) and significantly far
    (beyond :data:`FAR_SIGMAS` standard errors) from its theoretical value."""
    if not (math.isfinite(mean) and math.isfinite(theory)) or theory <= 0:
        return False
    ratio = mean / theory
    noise = stderr if math.isfinite(stderr) else 0.0
    return (ratio > FAR or ratio < 1 / FAR) and abs(mean - theory) > FAR_SIGMAS * noise


def theory_warnings(leaderboard: Any) -> list[str]:
    """One line per leaderboard row whose measured mean is far from its ``theory``."""
    out = []
    for r in leaderboard.iter_rows(named=True):
        theory = r.get("theory")
        if theory is not None and far_from_theory(r["mean"], r["stderr"], theory):
            out.append(
                f"{r['dataset']} {format_epsilon(r['epsilon'])} {r['oracle']} · {r['pipeline']} · {r['metric']}: "
                f"measured {format_number(r['mean'])} = {format_number(r['mean'] / theory, 3)} x theory "
                f"{format_number(theory)}"
            )
    return out
