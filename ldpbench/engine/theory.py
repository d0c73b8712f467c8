"""Theory beside measurement: the expected error of the unprocessed estimate.

An unbiased frequency oracle's estimate has the per-item variance of its own
:meth:`~ldpbench.types.Oracle.variance` ([W17] Eq. 2 for pure protocols; [W20] §III, with the
``f_v`` term); an oracle that declares itself biased (``OracleTags.unbiased = False``) adds the
square of its bias, ``expected_estimate(f) - f``, so that the expected squared error per item is
``variance + bias^2`` either way. A metric that can say what that implies for its own value (MSE:
the mean or sum over items, in its scale) declares :meth:`~ldpbench.types.Metric.theory`; the
engine stores it beside the measured value of every row whose pipeline left the oracle's vector
unchanged. A measured/theory ratio far from 1 is how a wrong oracle (a variance formula or a
sampler that disagree) is noticed without a dedicated test.

The users are the population itself, a sample of it (``sample: m``) or, under personalized
budgets, groups sampled from it. A metric compares with the *population*, so a sample adds its
sampling variance, by the law of total variance::

    Var[f'_v] = E[Oracle.variance(m, f_users)] + Var[f_users,v]
              ~ Oracle.variance(m, f) + f_v (1 - f_v) / m * (N - m) / (N - 1)

(hypergeometric sampling of m of N users). Groups combine with the fixed weights ``w_g`` of
:func:`ldpbench.engine.groups.group_weights`: ``Var = sum_g w_g^2 Var_g`` (independent groups); a group at
``epsilon = inf`` reports exactly and has the sampling term only.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ldpbench.types import Estimate, Oracle


def sampling_variance(f: np.ndarray, m: int, population: int) -> np.ndarray:
    """Variance of the frequencies of ``m`` users drawn without replacement from ``population``."""
    if m >= population or population <= 1:
        return np.zeros_like(f)
    return f * (1 - f) / m * (population - m) / (population - 1)


def expected_item_variance(
    make_oracle: Callable[[float], Oracle], estimate: Estimate, f: np.ndarray, population: int
) -> np.ndarray | None:
    """Per-item expected squared error ``E[(f_hat_v - f_v)^2]`` of an unprocessed oracle estimate of
    the population frequencies ``f``: its variance, plus its squared bias for a biased oracle.

    :param make_oracle: the cell's oracle at a given epsilon (at the cell's d).
    :param estimate: the unprocessed estimate (its ``parts`` when users have personalized budgets).
    :param f: the population's true frequencies.
    :param population: the population's user count (for the sampling term).
    :returns: ``None`` when the estimate is not a whole-domain oracle estimate.
    """
    if estimate.items is not None or estimate.d != f.size:
        return None
    if not estimate.parts:
        oracle = make_oracle(estimate.epsilon)
        var = np.asarray(oracle.variance(estimate.n, f), dtype=float) + sampling_variance(f, estimate.n, population)
        return var + _bias(oracle, f) ** 2
    from ldpbench.engine.groups import group_weights

    # Independent groups combined with fixed weights: variances add with w^2, biases with w.
    weights = group_weights(estimate.parts, f.size)
    total = np.zeros_like(f)
    bias = np.zeros_like(f)
    for w, part in zip(weights, estimate.parts):
        var = sampling_variance(f, part.n, population)
        if math.isfinite(part.epsilon):
            oracle = make_oracle(part.epsilon)
            var = var + np.asarray(oracle.variance(part.n, f), dtype=float)
            bias += w * _bias(oracle, f)
        total += w**2 * var
    return total + bias**2


def _bias(oracle: Oracle, f: np.ndarray) -> np.ndarray:
    """``E[f_hat] - f`` as the oracle declares it: zero unless its tags say it is biased."""
    if oracle.tags().unbiased:
        return np.zeros_like(f)
    return np.asarray(oracle.expected_estimate(f), dtype=float) - f
