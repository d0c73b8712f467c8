"""Optimized unary encoding (OUE) ([W17] §4.3; [W20] §III-C; docs/algorithms.md §1.2).

One-hot encode the value, then perturb every bit independently: the user's own 1-bit stays 1
w.p. ``p* = 1/2``; every 0-bit becomes 1 w.p. ``q* = 1/(e^eps + 1)``. ``Support`` = the positions
of the ones. (Use q* = 1/(e^eps + 1): [W20] §III-C's "flip a 0 bit w.p. 1/e" is loose.) The
machinery shared with SUE is in :mod:`._unary`.
"""

from __future__ import annotations

import dataclasses

from ldpbench import hookimpl
from ldpbench.types import OracleTags

from ._common import exp_neg
from ._unary import UnaryEncoding, UnaryReports, bernoulli_positions

#: OUE's reports (the shared unary-encoding form), under the name earlier code imports.
OUEReports = UnaryReports

__all__ = ["OUE", "OUEReports", "bernoulli_positions"]


class OUE(UnaryEncoding):
    """Optimized unary encoding: keep the own bit w.p. 1/2, set each other bit w.p. 1/(e^eps+1).

    [W17] §4.3 chooses ``p = 1/2``, ``q = 1/(e^eps + 1)`` to minimise the approximate variance
    ``4 e^eps / (n (e^eps - 1)^2)``. Both paths are those of
    :class:`~._unary.UnaryEncoding`; the aggregate path is **exact in distribution**.
    ``epsilon = inf`` gives q* = 0 (only the own bit, still kept w.p. 1/2).
    """

    name = "oue"

    @classmethod
    def bit_probabilities(cls, epsilon: float) -> tuple[float, float]:
        t = exp_neg(epsilon)
        return 0.5, t / (1.0 + t)  # 1 / (e^eps + 1)

    def tags(self) -> OracleTags:
        # The oracle a bare vector is assumed to come from (ldpbench.postprocess): [W17]'s
        # recommended oracle for large domains.
        return dataclasses.replace(super().tags(), default=True)


@hookimpl
def ldpbench_register_oracles(registry):
    registry.register(OUE)
