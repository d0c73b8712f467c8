"""Summation with histogram encoding (SHE) ([W17] §4.2).

[W17] Wang, Blocki, Li, Jha, "Locally Differentially Private Protocols for Frequency Estimation",
USENIX Security 2017. A user holding v sends ``y = e_v + Lap(2/eps)^d`` (the Laplace mechanism on
the one-hot vector, whose L1 sensitivity is 2: eps-LDP); the aggregator sums the reports and
estimates ``f_v = sum_u y_u[v] / n``. Unbiased, with variance

    Var[f_v] = 2 (2/eps)^2 / n = 8 / (eps^2 n)

for every item and every f: the one-hot part of the sum is the true count, exactly, and only the n
Laplace draws of coordinate v vary (variance ``2 b^2`` each, ``b = 2/eps``). So there is no f_v term
([W17] §4.2 gives the same ``8/eps^2`` per report, count scale ``n 8/eps^2``).

SHE is not a pure protocol (no support sets): its tags declare ``real_valued_counts`` (the "support
counts" are the real-valued sums, checked as finite floats) and ``report_density`` (the audit attacks
the continuous reports with likelihood-ratio events). ``p*`` = 1 and ``q*`` = 0 are the expected
contribution of a report to its own and to another coordinate, so the generic estimate
``(c/n - q*)/(p* - q*)`` reads ``c/n``; the Estimate carries no p*/q* (post-processors that need a
pure protocol's constants decline it).
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import numpy as np

from ldpbench import hookimpl
from ldpbench.types import Estimate, Oracle, OracleTags

from . import _histogram
from ._common import as_counts, as_items, check_domain, check_epsilon


class SHE(Oracle):
    """Summation with histogram encoding: sum Laplace(2/eps)-noised one-hot vectors, divide by n.

    - **Per-user path**: the faithful client, ``m x d`` Laplace draws per chunk of m users
      (``chunk_users`` keeps a chunk near 4M coordinates); the aggregator sums the reports.
    - **Aggregate path**: ``sum_v = n_v + G_v - G'_v`` with ``G_v, G'_v ~ Gamma(n, 2/eps)``
      independent, **exact in distribution**: a Laplace(b) variable is the difference of two
      independent Exponential(b) ones, and a sum of n i.i.d. Exponential(b) is Gamma(n, b); the
      coordinates' noises are independent. O(d).
    - No finite output space: the reports are real vectors, so there is no output table and no
      support sets; the audit checks the declared Laplace density and attacks it with
      likelihood-ratio events (:meth:`report_log_likelihood`).
    """

    name = "she"
    exact_aggregate: ClassVar[bool] = True

    def __init__(self, d: int, epsilon: float, **params):
        super().__init__(d=d, epsilon=epsilon, **params)
        self.d = check_domain(d, self.name)
        self.epsilon = check_epsilon(epsilon, self.name)
        #: Laplace scale ``b = 2/eps`` of every coordinate ([W17] §4.2).
        self.scale = _histogram.laplace_scale(self.epsilon)

    @property
    def p_star(self) -> float:
        """Expected contribution of a report to its own coordinate (not a support probability)."""
        return 1.0

    @property
    def q_star(self) -> float:
        """Expected contribution of a report to any other coordinate."""
        return 0.0

    @property
    def chunk_users(self) -> int:
        return _histogram.chunk_users(self.d)

    def tags(self) -> OracleTags:
        return dataclasses.replace(super().tags(), real_valued_counts=True)

    # -- client side --------------------------------------------------------------------------
    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """``(m, d)`` floats: ``e_v + Lap(2/eps)`` on every coordinate."""
        return _histogram.noisy_one_hot(as_items(values, self.d), self.d, self.scale, rng)

    # -- aggregator side ----------------------------------------------------------------------
    def support_counts(self, reports: np.ndarray) -> np.ndarray:
        """The per-item sums of the reports (real numbers: the ``real_valued_counts`` tag)."""
        return np.asarray(reports, dtype=np.float64).reshape(-1, self.d).sum(axis=0)

    def sample_support_counts(self, true_counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        counts = as_counts(true_counts, self.d)
        n = int(counts.sum())
        if self.scale == 0 or n == 0:
            return counts.astype(np.float64)
        noise = rng.gamma(n, self.scale, size=self.d) - rng.gamma(n, self.scale, size=self.d)
        return counts + noise

    def estimate(self, support_counts: np.ndarray, n: int) -> Estimate:
        """``f_v = sum_v / n`` with variance ``8/(eps^2 n)`` ([W17] §4.2)."""
        sums = np.asarray(support_counts, dtype=np.float64)
        return Estimate(
            frequencies=sums / n,
            n=int(n),
            epsilon=self.epsilon,
            mechanism=self.name,
            variance=np.full(self.d, self.noise_variance(n)),
            support_counts=sums,
        )

    def variance(self, n: int, f: np.ndarray) -> np.ndarray:
        """``8/(eps^2 n)`` for every item: no f_v term (module docstring)."""
        return np.full(np.shape(f), self.noise_variance(n), dtype=float)

    def noise_variance(self, n: int) -> float:
        """``2 b^2 / n = 8/(eps^2 n)``."""
        return 2.0 * self.scale**2 / n

    # -- the declared law of a report (the audit) -----------------------------------------------
    def report_log_likelihood(self, reports: np.ndarray) -> np.ndarray:
        """``log p(y | v) = -sum_w |y_w - [w = v]| / b``; dropping the part common to every v leaves
        ``(|y_v| - |y_v - 1|) / b``, in ``[-1/b, 1/b] = [-eps/2, eps/2]``: two inputs differ by at
        most eps, the Laplace mechanism's guarantee."""
        if self.scale == 0:
            raise ValueError("oracle 'she' at epsilon = inf has no density (reports are exact)")
        y = np.asarray(reports, dtype=np.float64).reshape(-1, self.d)
        return (np.abs(y) - np.abs(y - 1.0)) / self.scale


@hookimpl
def ldpbench_register_oracles(registry):
    registry.register(SHE)
