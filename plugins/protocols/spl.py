"""SPL: split the budget across attributes (docs/multidimensional.md).

Every user reports each of their ``a`` attributes with a frequency oracle at ``epsilon / a``;
sequential composition makes the whole report epsilon-LDP (Wang, Xiao, Yang, Zhao, Hu & Yu,
"Collecting and Analyzing Multidimensional Data with Local Differential Privacy", ICDE 2019, §III
calls it the baseline; Arcolezi, Couchot, Al Bouna & Xiao, CIKM 2021, §2.3 "Solution SPL"). Each
attribute's estimate is the oracle's own unbiased estimate from all ``n`` users at ``epsilon / a``,
so its variance is the oracle's, ``Var = V_oracle(n, f; epsilon / a)`` (for GRR
``(e^{eps/a} + d_j - 2) / (n (e^{eps/a} - 1)^2)`` plus the ``f`` term).

Both paths: the attributes are perturbed independently, so each is the oracle's per-user path or
its exact aggregate draw on the attribute's histogram (exact in distribution, jointly too).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ldpbench import hookimpl
from ldpbench.engine.simulate import simulate
from ldpbench.params import Param
from ldpbench.types import Estimate, Population

from ._multidim import ORACLES, MultidimProtocol, attributes_of, kron_all, oracle_matrix, relabelled


class SPL(MultidimProtocol):
    """Report every attribute with the chosen oracle at epsilon / a."""

    name = "spl"
    params = (Param("oracle", str, "grr", "the frequency oracle of every attribute", choices=tuple(ORACLES)),)

    def run(
        self, population: Population, epsilon: float, rng: np.random.Generator, *, simulation: str = "aggregate"
    ) -> Mapping[str, Estimate]:
        attrs = attributes_of(population)
        share = epsilon / attrs.a
        out = {}
        for j, name in enumerate(attrs.names):
            oracle = ORACLES[self.oracle](attrs.sizes[j], share)
            est = simulate(oracle, attrs.marginal_counts(j), rng, simulation)
            out[name] = relabelled(est, self.name, epsilon)
        return out

    def perturb_records(self, rows: np.ndarray, sizes: tuple[int, ...], epsilon: float, rng: np.random.Generator):
        """Whole reports of the users' records, canonically encoded (small domains, the audit):
        ``(n, a)``, column j the row of the oracle's ``output_table`` its report is."""
        out = np.empty(rows.shape, dtype=np.int64)
        for j, d in enumerate(sizes):
            oracle = ORACLES[self.oracle](d, epsilon / len(sizes))
            out[:, j] = oracle.output_rows(oracle.perturb(rows[:, j], rng))
        return out

    def record_accounting(self, epsilon: float, sizes: tuple[int, ...]) -> dict[str, object]:
        """Every attribute at ``epsilon / a``; any two records ``epsilon`` (composition), one
        attribute ``epsilon / a``."""
        a = len(sizes)
        return {"per_attribute": [epsilon / a] * a, "any_records": float(epsilon), "one_attribute": epsilon / a}

    def report_widths(self, sizes: tuple[int, ...], epsilon: float) -> list[int]:
        return [oracle_matrix(ORACLES[self.oracle](d, epsilon / len(sizes))).shape[1] for d in sizes]

    def report_table(self, sizes: tuple[int, ...], epsilon: float) -> np.ndarray:
        """``P[x, y]``: the whole report is the a attributes' reports, independent given the
        record, so the law is the Kronecker product of the oracle's at epsilon / a (reports in
        row-major order of (y_1, ..., y_a), each ``y_j`` the row of the oracle's ``output_table``)."""
        return kron_all([oracle_matrix(ORACLES[self.oracle](d, epsilon / len(sizes))) for d in sizes])


@hookimpl
def ldpbench_register_protocols(registry):
    registry.register(SPL)
