"""Symmetric unary encoding (SUE, basic one-time RAPPOR) ([W17] §4.3; Erlingsson, Pihur, Korolova,
"RAPPOR", CCS 2014).

One-hot encode the value and flip every bit independently w.p. ``1/(e^(eps/2) + 1)``: the own bit
is 1 w.p. ``p* = e^(eps/2)/(e^(eps/2) + 1)``, every other bit w.p. ``q* = 1/(e^(eps/2) + 1)``
([W17] §4.3, "Symmetric UE"). Two inputs differ in two bits, each costing eps/2, so the report
is eps-LDP, with equality ([W17] §4.3). Shares all its machinery with OUE (:mod:`._unary`).
"""

from __future__ import annotations

from ldpbench import hookimpl

from ._common import exp_neg
from ._unary import UnaryEncoding


class SUE(UnaryEncoding):
    """Symmetric unary encoding: each bit of the one-hot vector flipped w.p. 1/(e^(eps/2) + 1).

    ``p* + q* = 1``. Approximate variance ``e^(eps/2) / (n (e^(eps/2) - 1)^2)`` ([W17] §4.3),
    larger than OUE's at every eps. Both paths are those of :class:`~._unary.UnaryEncoding`:
    sparse per-user reports (here q* is large, so a chunk holds about d/2 ones per user) and the
    aggregate path ``c_v ~ Binomial(n_v, p*) + Binomial(n - n_v, q*)``, **exact in distribution**.
    ``epsilon = inf`` gives p* = 1, q* = 0 (the true one-hot vector).
    """

    name = "sue"

    @classmethod
    def bit_probabilities(cls, epsilon: float) -> tuple[float, float]:
        half = exp_neg(epsilon / 2)  # e^(-eps/2): finite for eps = inf
        q = half / (1.0 + half)
        return 1.0 - q, q


@hookimpl
def ldpbench_register_oracles(registry):
    registry.register(SUE)
