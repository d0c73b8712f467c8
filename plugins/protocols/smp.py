"""SMP: each user samples one attribute and reports it with the whole budget (docs/multidimensional.md).

User i draws ``J_i`` uniformly from the ``a`` attributes and sends ``(J_i, y_i)``, ``y_i`` the
oracle's report of ``x_{i, J_i}`` at ``epsilon`` (Wang et al., ICDE 2019, §IV, and Nguyên, Xiao,
Yang, Hui, Shin & Shin, arXiv:1606.05053, 2016; Arcolezi et al., CIKM 2021, §2.3 "Solution SMP").
The attribute index is sent in the clear: it depends on nothing the user holds, so the whole
report is epsilon-LDP (``P((j, y) | x) = M_j(y | x_j) / a``). The server estimates attribute j
from the ``n_j`` users who sampled it, with the oracle's estimator over ``n_j`` users: unbiased
(the sampling is independent of the values), of variance ``E[V_oracle(n_j, f)]``, about
``a * V_oracle(n, f)`` (``n_j ~ Binomial(n, 1/a)``).

Both paths: every user's ``J_i`` is drawn (O(n), vectorized); then each attribute's sampled users
go through the oracle's per-user path or its exact aggregate draw.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ldpbench import hookimpl
from ldpbench.engine.simulate import simulate
from ldpbench.params import Param
from ldpbench.types import Estimate, Population

from ._multidim import ORACLES, MultidimProtocol, attributes_of, oracle_matrix, relabelled


def sampled_histograms(rows: np.ndarray, sizes: tuple[int, ...], rng: np.random.Generator) -> list[np.ndarray]:
    """Each user samples one attribute uniformly; the histogram of attribute j's values among the
    users who sampled j, for every j."""
    n, a = rows.shape
    chosen = rng.integers(0, a, size=n)
    return [np.bincount(rows[chosen == j, j], minlength=sizes[j]).astype(np.int64) for j in range(a)]


class SMP(MultidimProtocol):
    """Sample one attribute per user, report it with the chosen oracle at epsilon."""

    name = "smp"
    params = (Param("oracle", str, "grr", "the frequency oracle of the sampled attribute", choices=tuple(ORACLES)),)

    def run(
        self, population: Population, epsilon: float, rng: np.random.Generator, *, simulation: str = "aggregate"
    ) -> Mapping[str, Estimate]:
        attrs = attributes_of(population)
        out = {}
        for j, counts in enumerate(sampled_histograms(attrs.rows, attrs.sizes, rng)):
            if counts.sum() == 0:
                raise ValueError(f"no user sampled attribute '{attrs.names[j]}': too few users for SMP")
            oracle = ORACLES[self.oracle](attrs.sizes[j], epsilon)
            out[attrs.names[j]] = relabelled(simulate(oracle, counts, rng, simulation), self.name, epsilon)
        return out

    def perturb_records(self, rows: np.ndarray, sizes: tuple[int, ...], epsilon: float, rng: np.random.Generator):
        """Whole reports, canonically encoded (small domains, the audit): ``(n, 2)``, the sampled
        attribute and the row of the oracle's ``output_table`` its report is."""
        n, a = rows.shape
        chosen = rng.integers(0, a, size=n)
        out = np.stack([chosen, np.zeros(n, dtype=np.int64)], axis=1)
        for j, d in enumerate(sizes):
            oracle, mine = ORACLES[self.oracle](d, epsilon), chosen == j
            out[mine, 1] = oracle.output_rows(oracle.perturb(rows[mine, j], rng))
        return out

    def report_columns(self, reports: np.ndarray, sizes: tuple[int, ...], epsilon: float) -> np.ndarray:
        """``(attribute, oracle row)`` pairs as ``report_table`` columns (attribute slowest)."""
        reports = np.asarray(reports, dtype=np.int64)
        widths = [oracle_matrix(ORACLES[self.oracle](d, epsilon)).shape[1] for d in sizes]
        return np.cumsum([0] + widths)[reports[:, 0]] + reports[:, 1]

    def report_table(self, sizes: tuple[int, ...], epsilon: float) -> np.ndarray:
        """``P[x, (j, y)] = M_j(y | x_j) / a``: reports are (attribute, oracle row), attribute slowest."""
        a = len(sizes)
        blocks = []
        for j, d in enumerate(sizes):
            M = oracle_matrix(ORACLES[self.oracle](d, epsilon))  # (d_j, Y_j)
            idx = np.array([rec[j] for rec in np.ndindex(*sizes)], dtype=np.int64)
            blocks.append(M[idx] / a)
        return np.concatenate(blocks, axis=1)


@hookimpl
def ldpbench_register_protocols(registry):
    registry.register(SMP)
