"""Cao, Jia & Gong's normalization countermeasure against poisoning (docs/poisoning.md §Defenses).

Cao, Jia & Gong, "Data Poisoning Attacks to Local Differential Privacy Protocols", USENIX
Security 2021 (arXiv 1911.02046), §"Countermeasures", *Normalization*: a poisoning attack pushes
the estimated frequencies of its targets up, so their sum leaves 1; the server shifts every
estimate by the smallest one and rescales,

    f'_v = (f~_v - min_u f~_u) / sum_w (f~_w - min_u f~_u),

so the least frequent item gets 0 and the vector sums to 1. How it differs from the consistency
methods of [W20] (docs/algorithms.md §2): Norm (§2.5) shifts every entry by the same
``(1 - sum f~)/d`` and may leave negatives; Norm-Mul (§2.6) sets the negatives to 0 and rescales
the positives; Norm-Sub (§2.8) subtracts the one ``lambda`` that makes ``sum max(f~ - lambda, 0) = 1``
(the simplex projection, which zeroes every item below ``lambda``). Cao's normalization zeroes
only the minimum, keeps every other item's *differences* to it, and scales multiplicatively: the
result is non-negative and sums to 1, but it is neither a projection nor unbiased.
"""

from __future__ import annotations

import numpy as np

from ldpbench import hookimpl
from ldpbench.types import Estimate, PostProcessor


def cao_normalize(f: np.ndarray) -> tuple[np.ndarray, bool]:
    """``(f - min f) / sum(f - min f)``; uniform (and ``True``) when every entry is the same."""
    f = np.asarray(f, dtype=float)
    shifted = f - f.min()
    total = shifted.sum()
    if not total > 0:
        return np.full(f.size, 1.0 / f.size), True
    return shifted / total, False


class CaoNorm(PostProcessor):
    """Normalization of Cao, Jia & Gong (USENIX Security 2021, §"Countermeasures"). Cost O(d).

    ``f'_v = (f~_v - min f~) / sum_w (f~_w - min f~)``; a vector with all entries equal becomes
    uniform (``info["cao-norm"]["uniform"]``). Sees only the estimate (never the fake users).
    """

    name = "cao-norm"

    def apply(self, estimate: Estimate, rng: np.random.Generator) -> Estimate:
        out, uniform = cao_normalize(np.asarray(estimate.frequencies, dtype=float))
        if uniform:
            return estimate.replace(frequencies=out, info={**estimate.info, self.name: {"uniform": True}})
        return estimate.replace(frequencies=out)


@hookimpl
def ldpbench_register_postprocessors(registry):
    registry.register(CaoNorm)
