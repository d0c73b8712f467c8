"""LDPRecover: recover the genuine users' frequencies from poisoned ones (docs/poisoning-defenses.md).

Sun, Ye, Hu, Duan, Wo, Xu & Yang, "LDPRecover: Recovering Frequencies from Poisoning Attacks against
Local Differential Privacy", ICDE 2024 (arXiv 2403.09351). With ``n`` genuine and ``m`` fake users,
``eta = m / n``, the poisoned estimate over the ``n + m`` reports is the mixture

    f~_Z = (n f~_X + m f~_Y) / (n + m),

``f~_X`` the genuine users' estimate and ``f~_Y`` the fake users' (the *genuine frequency
estimator*: ``f~_X = (1 + eta) f~_Z - eta f~_Y``). The server does not know the attack; under the
paper's adaptive attack it learns one statistic of ``f~_Y``, its sum: a fake report that supports
``S`` items gives, for a pure protocol (p*, q*),

    sum_v f~_Y(v) = (S - d q*) / (p* - q*),

and, knowing nothing of which items are promoted, spreads it evenly: ``f~_Y(v) = sum / d``. The
recovered frequencies solve the *constraint inference* problem
``min ||f - f~_X||^2 s.t. f >= 0, sum f = 1``, whose KKT solution is the active-set loop of
Norm-Sub (docs/algorithms.md §2.8): ``f'_v = max(f~_X(v) - lambda, 0)``.

Two readings of ``S`` (``fake_support``): ``genuine`` (default) -- the adaptive attacker's reports
support as many items as a genuine one's in expectation, ``S = p* + (d - 1) q*``, so the sum is 1
(and for GRR every report supports exactly one item: both readings agree); ``one`` -- ``S = 1``
for every protocol, as the reimplementation in MDPA's public code does (Li et al., ACM CCS 2025;
repository Marvin-huoshan/MDPA_LDP, which also spreads over all ``d`` items). The paper's full text
beyond its abstract was not readable here: which reading its Eq. for OUE and OLH takes is a
departure to state (reports/ldprecover_recovery.md).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ldpbench import hookimpl
from ldpbench.errors import NotApplicable
from ldpbench.params import Param
from ldpbench.types import Estimate, PostProcessor, PostProcessorTags
from ldpbench_plugins.numerics.simplex import simplex_shift


def malicious_sum(d: int, p_star: float, q_star: float, fake_support: str) -> float:
    """``sum_v f~_Y(v) = (S - d q*) / (p* - q*)`` for the assumed support size ``S`` of a fake report."""
    support = p_star + (d - 1) * q_star if fake_support == "genuine" else 1.0
    return (support - d * q_star) / (p_star - q_star)


def genuine_estimate(f_poisoned: np.ndarray, eta: float, p_star: float, q_star: float, fake_support: str) -> np.ndarray:
    """The genuine frequency estimator ``(1 + eta) f~_Z - eta f~_Y`` with ``f~_Y`` spread evenly."""
    f = np.asarray(f_poisoned, dtype=float)
    f_fake = malicious_sum(f.size, p_star, q_star, fake_support) / f.size
    return (1.0 + eta) * f - eta * f_fake


def ldprecover(f_poisoned: np.ndarray, eta: float, p_star: float, q_star: float, fake_support: str) -> np.ndarray:
    """The recovered genuine frequencies (module docstring): estimator, then the CI projection."""
    genuine = genuine_estimate(f_poisoned, eta, p_star, q_star, fake_support)
    return np.maximum(genuine - simplex_shift(genuine), 0.0)


class LDPRecover(PostProcessor):
    """LDPRecover (Sun et al., ICDE 2024, arXiv 2403.09351): genuine-frequency estimator + CI projection.

    ``eta`` is the ratio ``m / n`` of fake to genuine users the server assumes (the paper's eta);
    ``fake_support`` the reading of the fake reports' support size (module docstring). Sees only
    the poisoned estimate and the oracle's p*, q*: never the targets nor the fake users.
    """

    name = "ldprecover"
    params = (
        Param("eta", float, 0.05, "the assumed ratio m/n of fake to genuine users", min=0.0, max=100.0),
        Param(
            "fake_support",
            str,
            "genuine",
            "items a fake report supports: genuine (as a genuine report, sum f_Y = 1) or one (MDPA's code)",
            choices=("genuine", "one"),
        ),
    )

    def tags(self) -> PostProcessorTags:
        # reads p*, q*: a pure protocol's estimate only
        return dataclasses.replace(super().tags(), requires_pure=True)

    def apply(self, estimate: Estimate, rng: np.random.Generator) -> Estimate:
        p, q = estimate.p_star, estimate.q_star
        if p is None or q is None:
            raise NotApplicable(f"ldprecover needs a pure oracle's p* and q*, and '{estimate.mechanism}' gave none")
        out = ldprecover(np.asarray(estimate.frequencies, dtype=float), self.eta, p, q, self.fake_support)
        return estimate.replace(frequencies=out)


@hookimpl
def ldpbench_register_postprocessors(registry):
    registry.register(LDPRecover)
