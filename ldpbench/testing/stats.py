"""Statistical helpers for testing estimators by repeated simulation (docs/algorithms.md §8).

Written once, reused by the conformance kit and by every statistical test. Each test returns a
:class:`StatResult`; call :meth:`StatResult.check` to raise ``AssertionError`` with a readable
message. Thresholds default to the margins of docs/algorithms.md §8: a correct implementation fails with
probability well below 1e-5 per test, a wrong constant fails almost surely.

- :func:`z_test` — unbiasedness, ``max_v |z_v| <= 5.5``.
- :func:`variance_ratio_test` — ``R = mean_v(s_v^2 / Var_v)`` within ``1 +- tol``.
- :func:`chi2_variance_bounds` / :func:`per_value_variance_test` — each ``s_v^2 / Var_v`` inside
  the chi-square quantiles at ``alpha`` and ``1 - alpha``.
- :func:`exact_distribution_test` — Pearson chi-square of samples against an exact law (cells
  with expected count < 5 merged), pass if ``p >= 1e-6``; :func:`law_of_sum` builds the exact law of
  a sum of independent discrete vectors.
- :func:`mean_test` — a scalar mean against its expectation within ``k`` standard errors.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as _st

#: Default |z| limit: two-sided normal tail 3.8e-8 per value (docs/algorithms.md §8).
Z_LIMIT = 5.5
#: Default per-value tail probability of the chi-square variance bounds.
CHI2_ALPHA = 1e-7
#: Default minimum p-value of the exact-distribution test.
P_MIN = 1e-6


@dataclass(frozen=True)
class StatResult:
    """The outcome of one statistical test."""

    name: str
    passed: bool
    statistic: float
    message: str

    def check(self) -> StatResult:
        """Raise ``AssertionError(message)`` unless the test passed; return self otherwise."""
        if not self.passed:
            raise AssertionError(f"{self.name}: {self.message}")
        return self

    def __str__(self) -> str:
        return f"{self.name}: {'pass' if self.passed else 'FAIL'} — {self.message}"


def _trials(samples: np.ndarray) -> np.ndarray:
    x = np.asarray(samples, dtype=float)
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2 or x.shape[0] < 2:
        raise ValueError(f"samples must be (trials >= 2, values), got shape {np.shape(samples)}")
    return x


def z_test(
    samples: np.ndarray, truth: np.ndarray, variance: np.ndarray, *, limit: float = Z_LIMIT, label: str = ""
) -> StatResult:
    """Unbiasedness: ``z_v = (mean_T(x_v) - truth_v) / sqrt(Var_v / T)``, pass if ``max |z_v| <= limit``.

    :param samples: ``(T, d)`` estimates from T independent trials.
    :param truth: the expectation of each column (length d).
    :param variance: the theoretical per-trial variance of each column (length d); columns with
        zero variance must match the truth exactly.
    """
    x = _trials(samples)
    t = x.shape[0]
    truth = np.broadcast_to(np.asarray(truth, dtype=float), x.shape[1:])
    var = np.broadcast_to(np.asarray(variance, dtype=float), x.shape[1:])
    diff = x.mean(axis=0) - truth
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(var > 0, diff / np.sqrt(var / t), np.where(np.abs(diff) > 1e-9, np.inf, 0.0))
    worst = int(np.argmax(np.abs(z)))
    zmax = float(np.abs(z[worst]))
    msg = (
        f"max |z| = {zmax:.2f} (limit {limit}) at value {worst}: mean {x.mean(axis=0)[worst]:.6g} vs "
        f"expected {truth[worst]:.6g}, sd of the mean {math.sqrt(var[worst] / t):.3g}, T = {t}"
    )
    return StatResult(f"unbiasedness{label}", zmax <= limit, zmax, msg)


def variance_ratio_test(
    samples: np.ndarray, variance: np.ndarray, *, tol: float | None = None, sigmas: float = 7.8, label: str = ""
) -> StatResult:
    """Variance formula on average: ``R = mean_v(s_v^2 / Var_v)``, pass if ``|R - 1| <= tol``.

    Default ``tol = sigmas * sqrt(2 / ((T - 1) d))``, the standard deviation of R for independent
    normal estimates (cross-value correlations of a frequency oracle are O(1/d)); with T = 400 and
    d = 64 it is 0.07, the margin of docs/algorithms.md §8.2. Columns with zero variance are skipped.
    """
    x = _trials(samples)
    t = x.shape[0]
    var = np.broadcast_to(np.asarray(variance, dtype=float), x.shape[1:])
    live = var > 0
    if not live.any():
        raise ValueError("variance_ratio_test needs at least one value with positive variance")
    ratios = x.var(axis=0, ddof=1)[live] / var[live]
    r = float(ratios.mean())
    if tol is None:
        tol = sigmas * math.sqrt(2.0 / ((t - 1) * ratios.size))
    msg = f"R = mean(s^2/Var) = {r:.4f} (allowed 1 +- {tol:.4f}; T = {t}, {ratios.size} values)"
    return StatResult(f"variance ratio{label}", abs(r - 1) <= tol, r, msg)


def chi2_variance_bounds(trials: int, alpha: float = CHI2_ALPHA) -> tuple[float, float]:
    """Bounds on ``s^2 / sigma^2`` for ``trials`` normal draws: chi2_{T-1} quantiles / (T - 1).

    For T = 400 and alpha = 1e-7 this is [0.674, 1.413] (docs/algorithms.md §8.2).
    """
    dof = trials - 1
    return float(_st.chi2.ppf(alpha, dof) / dof), float(_st.chi2.isf(alpha, dof) / dof)


def per_value_variance_test(
    samples: np.ndarray, variance: np.ndarray, *, alpha: float = CHI2_ALPHA, label: str = ""
) -> StatResult:
    """Every ``s_v^2 / Var_v`` inside :func:`chi2_variance_bounds` (zero-variance values skipped)."""
    x = _trials(samples)
    var = np.broadcast_to(np.asarray(variance, dtype=float), x.shape[1:])
    live = np.flatnonzero(var > 0)
    ratios = x.var(axis=0, ddof=1)[live] / var[live]
    lo, hi = chi2_variance_bounds(x.shape[0], alpha)
    bad = np.flatnonzero((ratios < lo) | (ratios > hi))
    worst = int(np.argmax(np.abs(np.log(ratios)))) if ratios.size else 0
    msg = f"s^2/Var in [{ratios.min():.3f}, {ratios.max():.3f}], allowed [{lo:.3f}, {hi:.3f}]"
    if bad.size:
        msg += f"; out of bounds at values {live[bad][:10].tolist()}"
    return StatResult(f"per-value variance{label}", bad.size == 0, float(ratios[worst]) if ratios.size else 1.0, msg)


def mean_test(
    values: np.ndarray, expected: float, sd: float | None = None, *, limit: float = Z_LIMIT, label: str = ""
) -> StatResult:
    """A scalar mean against its expectation: ``|mean - expected| <= limit * sd / sqrt(T)``.

    ``sd`` is the per-draw standard deviation (default: the sample standard deviation).
    """
    v = np.asarray(values, dtype=float).ravel()
    sd = float(v.std(ddof=1)) if sd is None else float(sd)
    se = sd / math.sqrt(v.size)
    z = (float(v.mean()) - expected) / se if se > 0 else (0.0 if v.mean() == expected else math.inf)
    msg = f"mean {v.mean():.6g} vs expected {expected:.6g}: z = {z:.2f} (limit {limit}, T = {v.size})"
    return StatResult(f"mean{label}", abs(z) <= limit, z, msg)


# ----------------------------------------------------------------------------------------------
# Exact laws of small discrete vectors
# ----------------------------------------------------------------------------------------------

Law = Mapping[tuple[int, ...], float]


def categorical_law(patterns: np.ndarray, probs: np.ndarray) -> dict[tuple[int, ...], float]:
    """The law of a random vector that equals ``patterns[i]`` with probability ``probs[i]``
    (identical patterns merged)."""
    law: dict[tuple[int, ...], float] = {}
    for row, p in zip(np.asarray(patterns, dtype=np.int64), np.asarray(probs, dtype=float)):
        if p > 0:
            key = tuple(int(x) for x in row)
            law[key] = law.get(key, 0.0) + float(p)
    return law


def law_of_sum(laws: Iterable[Law]) -> dict[tuple[int, ...], float]:
    """The exact law of the sum of independent random vectors with the given laws (convolution)."""
    total: dict[tuple[int, ...], float] | None = None
    for law in laws:
        if total is None:
            total = dict(law)
            continue
        nxt: dict[tuple[int, ...], float] = {}
        for a, pa in total.items():
            for b, pb in law.items():
                key = tuple(x + y for x, y in zip(a, b))
                nxt[key] = nxt.get(key, 0.0) + pa * pb
        total = nxt
    if total is None:
        raise ValueError("law_of_sum needs at least one law")
    return total


def _count_rows(obs: np.ndarray, law: Law) -> dict[tuple[int, ...], int]:
    """Occurrences of each distinct row of ``obs`` (a mixed-radix code per row keeps this a 1-D
    ``np.unique``, far faster than ``np.unique(axis=0)``)."""
    keys = np.array(list(law), dtype=np.int64).reshape(len(law), obs.shape[1]) if law else obs[:0]
    lo = np.minimum(obs.min(axis=0), keys.min(axis=0, initial=np.iinfo(np.int64).max))
    hi = np.maximum(obs.max(axis=0), keys.max(axis=0, initial=np.iinfo(np.int64).min))
    base = (hi - lo + 1).astype(object)
    if np.prod(base) >= 2**62:
        rows, counts = np.unique(obs, axis=0, return_counts=True)
        return {tuple(int(x) for x in r): int(c) for r, c in zip(rows, counts)}
    radix = np.cumprod([1, *base[:-1]]).astype(np.int64)
    codes, counts = np.unique((obs - lo) @ radix, return_counts=True)
    out = {}
    for code, c in zip(codes.tolist(), counts.tolist()):
        digits = []
        for b in base.tolist():
            code, r = divmod(code, b)
            digits.append(r)
        out[tuple(int(x + y) for x, y in zip(digits, lo.tolist()))] = int(c)
    return out


def exact_distribution_test(
    samples: np.ndarray | Sequence[Sequence[int]],
    law: Law,
    *,
    min_expected: float = 5.0,
    p_min: float = P_MIN,
    label: str = "",
) -> StatResult:
    """Pearson chi-square of observed vectors against their exact law (docs/algorithms.md §8).

    Cells with expected count below ``min_expected`` are merged into one; if that merged cell is
    still below, it joins the smallest other cell. An observation outside the law's support fails
    at once. Pass if the p-value is at least ``p_min`` (1e-6).
    """
    obs = np.asarray(samples, dtype=np.int64)
    if obs.ndim == 1:
        obs = obs[:, None]
    m = obs.shape[0]
    observed = _count_rows(obs, law)
    impossible = [k for k in observed if law.get(k, 0.0) <= 0]
    if impossible:
        return StatResult(
            f"exact distribution{label}",
            False,
            math.inf,
            f"{sum(observed[k] for k in impossible)} of {m} samples are impossible under the exact law, "
            f"e.g. {impossible[0]}",
        )
    cells = sorted(law, key=lambda k: -law[k])
    expected = np.array([law[k] * m for k in cells])
    got = np.array([observed.get(k, 0) for k in cells], dtype=float)
    big = expected >= min_expected
    exp_cells = list(expected[big])
    obs_cells = list(got[big])
    rest_e, rest_o = float(expected[~big].sum()), float(got[~big].sum())
    if rest_e > 0:
        if rest_e >= min_expected or not exp_cells:
            exp_cells.append(rest_e)
            obs_cells.append(rest_o)
        else:
            exp_cells[-1] += rest_e
            obs_cells[-1] += rest_o
    e, o = np.array(exp_cells), np.array(obs_cells)
    dof = e.size - 1
    if dof < 1:
        return StatResult(f"exact distribution{label}", True, 0.0, "a single cell: nothing to test")
    stat = float(((o - e) ** 2 / e).sum())
    p = float(_st.chi2.sf(stat, dof))
    msg = f"chi2 = {stat:.1f} on {dof} dof, p = {p:.3g} (need >= {p_min:g}; {m} samples, {len(law)} outcomes)"
    return StatResult(f"exact distribution{label}", p >= p_min, p, msg)
