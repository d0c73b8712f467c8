"""TreeHist (Bassily, Nissim, Stemmer & Thakurta, "Practical Locally Private Heavy Hitters",
NeurIPS 2017; docs/heavy-hitters.md): a prefix tree walked one bit per level, pruned by a threshold.

Users are split into one group per level of the binary prefix tree over the m-bit items; group l
reports its l-bit prefix with a frequency oracle, and the server keeps every candidate prefix whose
estimated count exceeds a threshold, then extends the survivors by one bit. The last level's
survivors, largest first, at most k, are the heavy hitters.

Departures, stated: the frequency oracle is OLH over the candidates (``_candidates``, the one PEM
uses), not the paper's Hashtogram; the threshold is the significance threshold of the round (an
item nobody holds passes with probability at most ``beta / |C|``, the normal approximation), not
the paper's worst-case ``O(sqrt(n log(d) / beta) / eps)`` bound; the survivors of a level are
capped at ``max_kept`` (the largest estimates), which bounds the server's work where many
prefixes pass. With ``step_bits: 1`` and the top-k rule instead of the threshold this is PEM.
"""

from __future__ import annotations

import numpy as np

from ldpbench import hookimpl
from ldpbench.params import Param

from . import _candidates as olh
from .pem import PEM, SHARDS_PARAM, top


class TreeHist(PEM):
    """TreeHist: PEM's rounds, one bit per level, pruned by a significance threshold."""

    name = "treehist"
    params = (
        Param("k", int, 32, "how many heavy hitters to return at most", min=1, max=4096),
        Param("start_bits", int, 1, "prefix length of the first level (the root's children: 1)", min=1, max=24),
        Param("step_bits", int, 1, "bits per level (the paper's binary tree: 1)", min=1, max=16),
        Param(
            "beta",
            float,
            0.05,
            "a null prefix passes a level's threshold with probability beta / |C|",
            min=1e-12,
            max=1,
        ),
        Param("max_kept", int, 256, "most prefixes a level keeps (the largest estimates)", min=1, max=1 << 16),
        Param(
            "split",
            str,
            "users",
            "users: a group of users per level at the full budget; budget: every user at every level at epsilon / levels",
            choices=("users", "budget"),
        ),
        SHARDS_PARAM,
    )

    def select(
        self, candidates: np.ndarray, estimates: np.ndarray, users: int, epsilon: float, *, last: bool
    ) -> tuple[np.ndarray, np.ndarray]:
        threshold = olh.significance_threshold(users, epsilon, candidates.size, self.beta) / max(users, 1)
        passed = estimates > threshold
        return top(candidates[passed], estimates[passed], self.k if last else self.max_kept)


@hookimpl
def ldpbench_register_protocols(registry):
    registry.register(TreeHist)
