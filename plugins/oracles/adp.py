"""Adaptive frequency oracle (ADP): GRR or OUE, whichever has the smaller variance at (d, eps).

[W17] §4 gives the approximate (f-free) variances of its protocols:
GRR's (direct encoding's) ``(e^eps + d - 2) / (n (e^eps - 1)^2)`` and OUE's ``4 e^eps / (n (e^eps - 1)^2)``,
and recommends GRR when ``d < 3 e^eps + 2`` and OUE otherwise. ADP applies that rule per run
(the "ADP" protocol of Arcolezi et al.'s library, "Multi-Freq-LDPy: multiple frequency estimation
under local differential privacy in Python", ESORICS 2022), and then *is* the chosen oracle for
every method.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar

import numpy as np

from ldpbench import hookimpl
from ldpbench.types import Estimate, Oracle, OracleTags

from ._common import check_domain, check_epsilon
from .grr import GRR
from .oue import OUE


def prefers_grr(d: int, epsilon: float) -> bool:
    """``d < 3 e^eps + 2``: GRR's approximate variance is the smaller one ([W17] §4)."""
    # In logs, so that a large or infinite eps cannot overflow e^eps.
    return d <= 2 or math.log((d - 2) / 3) < epsilon


class Adaptive(Oracle):
    """GRR when ``d < 3 e^eps + 2``, else OUE; every method delegates to the chosen oracle.

    Both paths, p*, q*, the estimate, the variance, the output table, the output rows and the
    support matrix are the delegate's, so the conformance kit and the audits examine GRR or OUE
    themselves (both exact on the aggregate path). The estimate names the choice in
    ``info["diagnostics"]`` (``{"chose": "grr"}`` or ``{"chose": "oue"}``), which the result rows
    keep in their ``info`` column.

    Departure: ADP declares no finite report space even when it runs GRR (OUE has none), so
    EM-family post-processors, which need one, are refused with ``adp``: use ``grr`` for them.
    """

    name = "adp"
    exact_aggregate: ClassVar[bool] = True

    def __init__(self, d: int, epsilon: float, **params):
        super().__init__(d=d, epsilon=epsilon, **params)
        self.d = check_domain(d, self.name, minimum=2)
        self.epsilon = check_epsilon(epsilon, self.name)
        chosen = GRR if prefers_grr(self.d, self.epsilon) else OUE
        #: The oracle ADP runs at this (d, eps).
        self.delegate: Oracle = chosen(d=self.d, epsilon=self.epsilon)

    @property
    def chosen(self) -> str:
        """The delegate's registered name (``"grr"`` or ``"oue"``)."""
        return self.delegate.name

    def tags(self) -> OracleTags:
        return dataclasses.replace(self.delegate.tags(), finite_output=False, aggregate_histogram=False, default=False)

    @property
    def chunk_users(self) -> int | None:
        return self.delegate.tags().chunk_users

    @property
    def p_star(self) -> float:
        return self.delegate.p_star

    @property
    def q_star(self) -> float:
        return self.delegate.q_star

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> Any:
        return self.delegate.perturb(values, rng)

    def encode_reports(self, reports: Any, n_users: int) -> Any:
        return self.delegate.encode_reports(reports, n_users)

    def support_counts(self, reports: Any) -> np.ndarray:
        return self.delegate.support_counts(reports)

    def sample_support_counts(self, true_counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return self.delegate.sample_support_counts(true_counts, rng)

    def estimate(self, support_counts: np.ndarray, n: int) -> Estimate:
        est = self.delegate.estimate(support_counts, n)
        diagnostics = {**est.info.get("diagnostics", {}), "chose": self.chosen}
        return est.replace(mechanism=self.name, info={**est.info, "diagnostics": diagnostics})

    def variance(self, n: int, f: np.ndarray) -> np.ndarray:
        return self.delegate.variance(n, f)

    def noise_variance(self, n: int) -> float:
        return self.delegate.noise_variance(n)

    def output_table(self) -> tuple[np.ndarray, np.ndarray]:
        return self.delegate.output_table()

    def output_rows(self, reports: Any) -> np.ndarray:
        return self.delegate.output_rows(reports)

    def support_matrix(self, reports: Any) -> np.ndarray:
        return self.delegate.support_matrix(reports)


@hookimpl
def ldpbench_register_oracles(registry):
    registry.register(Adaptive)
