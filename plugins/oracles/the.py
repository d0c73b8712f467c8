"""Thresholding with histogram encoding (THE) ([W17] §4.2).

[W17] Wang, Blocki, Li, Jha, "Locally Differentially Private Protocols for Frequency Estimation",
USENIX Security 2017. A user holding v sends SHE's report ``y = e_v + Lap(2/eps)^d``; the aggregator
reads it as the support set ``Support(y) = {w : y[w] > theta}``. With F the CDF of Laplace(0, 2/eps)
([W17] §4.2):

    p* = 1 - F(theta - 1),    q* = 1 - F(theta),

and the pure-protocol estimate ``(c_v/n - q*)/(p* - q*)`` with variance
``[q*(1-q*) + f_v (p*-q*)(1-p*-q*)] / (n (p*-q*)^2)`` ([W17] Eq. (2) and Theorem 2 for the
constant term; the f_v term as in Wang et al., NDSS 2020, §III). ``theta`` defaults to the value in
(1/2, 1) that minimizes ``q*(1-q*)/(p*-q*)^2``, which [W17] §4.2 finds numerically; we find it the
same way (bounded scalar minimization).

THE is post-processing of SHE's eps-LDP reports, so it is eps-LDP; its support sets alone spend less:
the worst ratio of the support law is ``p*(1-q*)/(q*(1-p*)) < e^eps``, so the tag ``attains_epsilon``
is off (the kit then checks the bound without asking that it be attained).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import ClassVar

import numpy as np

from ldpbench import hookimpl
from ldpbench.errors import ParamError
from ldpbench.params import Param
from ldpbench.types import Oracle, OracleTags

from . import _histogram
from ._common import as_counts, as_items, check_domain, check_epsilon, independent_binomials, independent_bits_table


def the_constants(epsilon: float, theta: float) -> tuple[float, float]:
    """``(p*, q*) = (1 - F(theta - 1), 1 - F(theta))``, F the Laplace(0, 2/eps) CDF ([W17] §4.2)."""
    scale = _histogram.laplace_scale(epsilon)
    return _histogram.laplace_tail(theta - 1.0, scale), _histogram.laplace_tail(theta, scale)


def noise_factor(epsilon: float, theta: float) -> float:
    """``q*(1-q*)/(p*-q*)^2``: n times the variance of an estimate without the f_v term."""
    p, q = the_constants(epsilon, theta)
    return q * (1 - q) / (p - q) ** 2


@functools.lru_cache(maxsize=256)
def optimal_theta(epsilon: float) -> float:
    """The threshold in [1/2, 1] minimizing :func:`noise_factor` ([W17] §4.2, found numerically).

    ``eps = inf`` (no noise) returns 1/2: every threshold in (0, 1) is then exact.
    """
    if math.isinf(epsilon):
        return 0.5
    from scipy.optimize import minimize_scalar

    result = minimize_scalar(
        lambda t: noise_factor(epsilon, t), bounds=(0.5, 1.0), method="bounded", options={"xatol": 1e-10}
    )
    return float(result.x)


class THE(Oracle):
    """Thresholding with histogram encoding: SHE's noisy one-hot vector, supports above ``theta``.

    - **Per-user path**: the faithful client: ``m x d`` Laplace draws per chunk of m users (reports
      are the noisy float vectors; ``chunk_users`` keeps a chunk near 4M coordinates); the
      aggregator thresholds them.
    - **Aggregate path**: ``c_v ~ Binomial(n_v, p*) + Binomial(n - n_v, q*)`` independently over v,
      **exact in distribution**: the coordinates' noises are independent, so given the inputs every
      support indicator is an independent Bernoulli (p* for the own item, q* for the others). O(d).
    - Output space (for the audits): support sets, ``2^d`` of them, each the product of independent
      bits; the noisy reports themselves are continuous.
    """

    name = "the"
    exact_aggregate: ClassVar[bool] = True
    params = (
        Param(
            "theta",
            float,
            0.0,
            "threshold on a noisy coordinate; 0 means the variance-minimizing value in (1/2, 1) ([W17] §4.2)",
            min=0.0,
        ),
    )

    def __init__(self, d: int, epsilon: float, theta: float = 0.0, **params):
        super().__init__(d=d, epsilon=epsilon, theta=theta, **params)
        self.d = check_domain(d, self.name)
        self.epsilon = check_epsilon(epsilon, self.name)
        if not (math.isfinite(theta) and theta >= 0):
            raise ParamError(
                f"oracle 'the': theta must be 0 (automatic) or a finite positive number, got {theta}", "theta"
            )
        #: The threshold actually used (``theta``, or the optimum when ``theta == 0``).
        self.threshold = float(theta) if theta else optimal_theta(self.epsilon)
        self._scale = _histogram.laplace_scale(self.epsilon)
        self._p, self._q = the_constants(self.epsilon, self.threshold)
        if not self._p > self._q:
            raise ParamError(f"oracle 'the': theta={theta} gives p* <= q* at epsilon={epsilon}", "theta")

    @property
    def p_star(self) -> float:
        return self._p

    @property
    def q_star(self) -> float:
        return self._q

    @property
    def chunk_users(self) -> int:
        return _histogram.chunk_users(self.d)

    def tags(self) -> OracleTags:
        # Supports are bits of a thresholded SHE report: their law spends less than eps (module doc);
        # bit v is 1 w.p. p* for the user's own item and q* for any other (ibu's per-item likelihood).
        return dataclasses.replace(super().tags(), attains_epsilon=False, bernoulli_support=True)

    # -- client side --------------------------------------------------------------------------
    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """SHE's reports: ``(m, d)`` floats ``e_v + Lap(2/eps)``."""
        return _histogram.noisy_one_hot(as_items(values, self.d), self.d, self._scale, rng)

    # -- aggregator side ----------------------------------------------------------------------
    def support_matrix(self, reports: np.ndarray) -> np.ndarray:
        """``(n_users, d)`` bools: the coordinates above the threshold."""
        return np.asarray(reports).reshape(-1, self.d) > self.threshold

    def support_counts(self, reports: np.ndarray) -> np.ndarray:
        return self.support_matrix(reports).sum(axis=0, dtype=np.int64)

    def sample_support_counts(self, true_counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return independent_binomials(as_counts(true_counts, self.d), self._p, self._q, rng)

    # -- exact law of the support sets ----------------------------------------------------------
    def output_table(self) -> tuple[np.ndarray, np.ndarray]:
        """All ``2^d`` support sets (row = sum of bit_w 2^w); P = product of independent bits."""
        return independent_bits_table(self.d, self._p, self._q)

    def output_rows(self, reports: np.ndarray) -> np.ndarray:
        """Row of :meth:`output_table` of each report: its support set read as a binary number."""
        bits = self.support_matrix(reports).astype(np.int64)
        return (bits << np.arange(self.d)).sum(axis=1)


@hookimpl
def ldpbench_register_oracles(registry):
    registry.register(THE)
