"""Synthetic populations: Zipf and uniform histograms.

Both are deterministic given their parameters (the counts are ``n * pmf`` rounded by the
largest-remainder method, so they sum to exactly ``n``): a synthetic population is a fixed
workload, and all randomness of a run lives in the users' reports (and in ``sample``).
"""

from __future__ import annotations

import numpy as np

from ldpbench import hookimpl
from ldpbench.params import Param
from ldpbench.types import Dataset, Population
from ldpbench.types.oracle import MIN_DOMAIN

#: The largest domain a synthetic dataset accepts: 10**8 items. A float64 vector over the domain
#: is then 800 MB, and a run holds several at once (the weights and counts while loading, the true
#: frequencies, every estimate a pipeline makes), so this is about the most a large machine can
#: run; the domains of the LDP literature stop well below it (Kosarak 41,270 items; 2**20 to
#: 2**24 for the largest hashed domains). Above it, a spec is refused when it is validated (exit 2,
#: FILE:LINE), instead of every cell failing with MemoryError or the run being killed for memory.
MAX_DOMAIN = 10**8
#: The most users a synthetic dataset holds (10**10: counts are int64, and the aggregate path
#: draws from binomials over n; the per-user path has a lower limit, see docs/spec-format.md).
MAX_USERS = 10**10
_DOMAIN_HELP = f"domain size (at most {MAX_DOMAIN:,}: a float vector over it is 800 MB)"


def apportion(weights: np.ndarray, n: int) -> np.ndarray:
    """Integer counts summing to ``n`` proportional to ``weights`` (largest remainder)."""
    w = np.asarray(weights, dtype=float)
    exact = n * w / w.sum()
    counts = np.floor(exact).astype(np.int64)
    short = int(n - counts.sum())
    if short:
        # Ties broken by index so that the result is a pure function of the inputs.
        order = np.lexsort((np.arange(w.size), -(exact - counts)))
        counts[order[:short]] += 1
    return counts


class Zipf(Dataset):
    """Zipf population: item v (0-based) has frequency proportional to (v + 1)^(-s).

    The setting of [W20]'s slides is ``d: 1024, n: 1000000, s: 1.5``; a Kosarak-shaped stand-in
    is ``d: 41270, n: 8019015``.
    """

    name = "zipf"
    params = (
        Param("d", int, 1024, _DOMAIN_HELP, min=MIN_DOMAIN, max=MAX_DOMAIN, describes="d"),
        Param("n", int, 100_000, "number of users", min=1, max=MAX_USERS, describes="n"),
        Param("s", float, 1.5, "Zipf exponent (0 gives uniform)", min=0, max=100),
    )

    def load(self, rng: np.random.Generator) -> Population:
        weights = np.arange(1, self.d + 1, dtype=float) ** (-self.s)
        return Population(
            apportion(weights, self.n),
            name=f"zipf(d={self.d},n={self.n},s={self.s:g})",
            info={"synthetic": True, "source": "Zipf law, deterministic apportionment"},
        )


class Uniform(Dataset):
    """Uniform population: n users spread as evenly as possible over d items."""

    name = "uniform"
    params = (
        Param("d", int, 1024, _DOMAIN_HELP, min=MIN_DOMAIN, max=MAX_DOMAIN, describes="d"),
        Param("n", int, 100_000, "number of users", min=1, max=MAX_USERS, describes="n"),
    )

    def load(self, rng: np.random.Generator) -> Population:
        return Population(
            apportion(np.ones(self.d), self.n),
            name=f"uniform(d={self.d},n={self.n})",
            info={"synthetic": True},
        )


@hookimpl
def ldpbench_register_datasets(registry):
    registry.register(Zipf)
    registry.register(Uniform)
