"""LDPRecover: recover the genuine users' frequencies from poisoned ones (docs/poisoning.md §Defenses).

Sun, Ye, Hu, Duan, Wo, Xu & Yang, "LDPRecover: Recovering Frequencies from Poisoning Attacks against
Local Differential Privacy", ICDE 2024 (arXiv 2403.09351). With ``n`` genuine and ``m`` fake users,
``eta = m / n``, the poisoned estimate over the ``n + m`` reports is the mixture

    f~_Z = (n f~_X + m f~_Y) / (n + m),

``f~_X`` the genuine users' estimate and ``f~_Y`` the fake users' (the *genuine frequency
estimator*: ``f~_X = (1 + eta) f~_Z - eta f~_Y``). The server does not know the attack; under the
paper's adaptive attack it learns one statistic of ``f~_Y``, its sum: a fake report that supports
``S`` items gives, for a pure protocol (p*, q*),

    sum_v f~_Y(v) = (S - d q*) / (p* - q*),

taken here with ``S = p* + (d - 1) q*`` (the adaptive attacker's reports support as many items as
a genuine one's, so the sum is 1; for GRR every report supports one item, ``S = 1``, the same
number). Knowing nothing of which items are promoted, the server spreads the sum evenly over
``D_1 = {v : f~_Z(v) > 0}`` (``spread: positive``, the paper's partition into ``D_0`` and ``D_1``
as the comments of MDPA's public reimplementation name it; ``f~_Y = 0`` on ``D_0``) or over all
``d`` items (``spread: all``, what that reimplementation computes: its ``len`` of a boolean mask is
``d``; Li et al., ACM CCS 2025, repository Marvin-huoshan/MDPA_LDP). The recovered frequencies
solve the *constraint inference* problem ``min ||f - f~_X||^2 s.t. f >= 0, sum f = 1``, whose KKT
solution is the simplex projection of Norm-Sub (docs/algorithms.md §2.8):
``f'_v = max(f~_X(v) - lambda, 0)``.

A consequence worth knowing: the projection absorbs any shift common to the items it keeps, so
with either spread the result is the projection of ``(1 + eta) f~_Z`` whenever the items of
``D_0`` end at 0 (always, unless the positive estimates sum to less than 1): LDPRecover without
attack details is Norm-Sub of the rescaled poisoned vector (tested). The paper's extension with
attack details as further constraints is not implemented. Its full text beyond the abstract was
not readable here (reports/ldprecover_recovery.md, departures).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ldpbench import hookimpl
from ldpbench.errors import NotApplicable
from ldpbench.params import Param
from ldpbench.types import Estimate, PostProcessor, PostProcessorTags
from ldpbench_plugins.numerics.simplex import simplex_shift


def malicious_sum(d: int, p_star: float, q_star: float) -> float:
    """``sum_v f~_Y(v) = (S - d q*) / (p* - q*)`` with ``S = p* + (d - 1) q*`` (equals 1)."""
    support = p_star + (d - 1) * q_star
    return (support - d * q_star) / (p_star - q_star)


def malicious_estimate(f_poisoned: np.ndarray, p_star: float, q_star: float, spread: str) -> np.ndarray:
    """The learned ``f~_Y``: its sum spread evenly over ``D_1`` (``positive``) or over all items."""
    f = np.asarray(f_poisoned, dtype=float)
    total = malicious_sum(f.size, p_star, q_star)
    if spread == "all":
        return np.full(f.size, total / f.size)
    positive = f > 0
    if not positive.any():
        return np.zeros(f.size)
    return np.where(positive, total / int(positive.sum()), 0.0)


def genuine_estimate(f_poisoned: np.ndarray, eta: float, p_star: float, q_star: float, spread: str) -> np.ndarray:
    """The genuine frequency estimator ``(1 + eta) f~_Z - eta f~_Y``."""
    f = np.asarray(f_poisoned, dtype=float)
    return (1.0 + eta) * f - eta * malicious_estimate(f, p_star, q_star, spread)


def ldprecover(f_poisoned: np.ndarray, eta: float, p_star: float, q_star: float, spread: str) -> np.ndarray:
    """The recovered genuine frequencies: the estimator, then the CI (simplex) projection."""
    genuine = genuine_estimate(f_poisoned, eta, p_star, q_star, spread)
    return np.maximum(genuine - simplex_shift(genuine), 0.0)


class LDPRecover(PostProcessor):
    """LDPRecover (Sun et al., ICDE 2024, arXiv 2403.09351): genuine-frequency estimator + CI projection.

    ``f'`` = the simplex projection of ``(1 + eta) f~_Z - eta f~_Y``, ``eta`` the ratio ``m / n``
    of fake to genuine users the server assumes (the paper's eta), ``f~_Y`` the learned fake
    frequency (sum 1) spread evenly over the items estimated positive (``spread: positive``) or
    over all (``all``, MDPA's code); docs/poisoning.md §Defenses. Sees only the poisoned estimate
    and the oracle's p*, q*: never the targets nor the fake users.
    """

    name = "ldprecover"
    params = (
        Param("eta", float, 0.05, "the assumed ratio m/n of fake to genuine users", min=0.0, max=100.0),
        Param(
            "spread",
            str,
            "positive",
            "where the learned fake frequency goes: positive (the items estimated > 0) or all (MDPA's code)",
            choices=("positive", "all"),
        ),
    )

    def tags(self) -> PostProcessorTags:
        # reads p*, q*: a pure protocol's estimate only
        return dataclasses.replace(super().tags(), requires_pure=True)

    def apply(self, estimate: Estimate, rng: np.random.Generator) -> Estimate:
        p, q = estimate.p_star, estimate.q_star
        if p is None or q is None:
            raise NotApplicable(f"ldprecover needs a pure oracle's p* and q*, and '{estimate.mechanism}' gave none")
        out = ldprecover(np.asarray(estimate.frequencies, dtype=float), self.eta, p, q, self.spread)
        return estimate.replace(frequencies=out)


@hookimpl
def ldpbench_register_postprocessors(registry):
    registry.register(LDPRecover)
