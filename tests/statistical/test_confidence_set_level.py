"""The leaderboard's tied-with-best marks keep their level under selection (ldpbench/stats/mcs.py).

Groups of k rows with the same expected error, paired by repeat (a shared skewed error per repeat
plus each row's own skewed noise, lognormal or chi-square, as MSE is), are marked by
:func:`compare_with_best`; a group in which any row is called worse is a false "worse". The
model confidence set must keep that rate at most alpha = 0.05 at 2, 4, 10 and 48 rows. The
procedure it replaced, Holm over Wilcoxon tests against a best chosen from the same repeats,
kept here as :func:`holm_wilcoxon_worse` to measure it, does not (13-15% at 10 rows).

Monte Carlo error: with SIMS = 400 groups a true rate of 0.05 has standard deviation
sqrt(0.05 * 0.95 / 400) = 0.0109; the bound alpha + 3 sd = 0.083 is exceeded by a correct
procedure with probability about 0.1% per case (3 sigma), and by the old one at 10 rows (0.125)
and 48 rows (0.34-0.38). The 48-row case runs 200 groups (a group costs a quarter second):
sd 0.0154, bound alpha + 3 sd = 0.096.

``python tests/statistical/test_confidence_set_level.py`` prints the table of docs/statistics.md.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpbench.stats.paired import compare_with_best, holm

ALPHA = 0.05
SIMS = 400
MC_SD = math.sqrt(ALPHA * (1 - ALPHA) / SIMS)
BOUND = ALPHA + 3 * MC_SD  # 3 sigma


def paired_group(seed: int, rows: int, repeats: int, planted: float = 0.0, noise: str = "lognormal") -> np.ndarray:
    """``rows`` x ``repeats`` errors: one shared gamma error per repeat (the oracle's noise that
    every pipeline of a cell sees), times ``1 + planted`` for the last row, plus each row's own
    skewed noise (centred, scale 0.05 of the shared mean 1)."""
    rng = np.random.default_rng(seed)
    shared = rng.gamma(4.0, 0.25, repeats)
    if noise == "lognormal":
        own = rng.lognormal(0.0, 1.0, (rows, repeats)) - math.exp(0.5)
    else:
        own = rng.chisquare(1, (rows, repeats)) - 1.0
    values = shared * np.ones((rows, 1)) + 0.05 * own
    values[-1] += planted * shared
    return values


def opposite_skew_group(seed: int, rows: int, repeats: int) -> np.ndarray:
    """Rows with the same expected error but mirrored skew: even rows add the centred lognormal
    noise, odd rows subtract it, so a difference of an even and an odd row is skewed with mean 0
    (two different methods that are equally good on average)."""
    rng = np.random.default_rng(seed)
    shared = rng.gamma(4.0, 0.25, repeats)
    own = rng.lognormal(0.0, 1.0, (rows, repeats)) - math.exp(0.5)
    sign = np.where(np.arange(rows) % 2 == 0, 1.0, -1.0)[:, None]
    return shared + 0.05 * sign * own


def holm_wilcoxon_worse(values: np.ndarray, alpha: float = ALPHA) -> np.ndarray:
    """The replaced procedure, to measure it: each row against the best mean by a two-sided
    Wilcoxon signed-rank test, Holm-corrected over the k - 1 comparisons; True = called worse."""
    from scipy.stats import wilcoxon

    means = values.mean(axis=1)
    best = int(np.argmin(means))
    raw = np.full(len(values), np.nan)
    for i in range(len(values)):
        if i != best:
            raw[i] = wilcoxon(values[i] - values[best]).pvalue
    return np.nan_to_num(holm(raw), nan=1.0) < alpha


def confidence_set_worse(values: np.ndarray, alpha: float = ALPHA) -> np.ndarray:
    return np.array([r.tied_best is False for r in compare_with_best(values, False, alpha)])


def false_worse_rate(procedure, rows: int, repeats: int, noise: str, sims: int = SIMS) -> float:
    return float(np.mean([procedure(paired_group(s, rows, repeats, noise=noise)).any() for s in range(sims)]))


def power(procedure, rows: int, repeats: int, planted: float, sims: int = SIMS, noise: str = "lognormal") -> float:
    """Share of groups in which the planted (last) row is called worse."""
    return float(np.mean([procedure(paired_group(s, rows, repeats, planted, noise))[-1] for s in range(sims)]))


@pytest.mark.parametrize(("rows", "noise"), [(2, "lognormal"), (4, "chisquare"), (10, "lognormal"), (48, "chisquare")])
def test_identical_rows_are_called_worse_in_at_most_alpha_of_groups(rows, noise):
    sims = SIMS if rows < 48 else SIMS // 2
    bound = ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / sims)  # 3 sigma
    rate = false_worse_rate(confidence_set_worse, rows, 20, noise, sims)
    assert rate <= bound, f"{rows} identical rows: false worse in {rate:.3f} of {sims} groups (bound {bound:.3f})"


def test_equal_means_with_opposite_skew_at_100_repeats():
    """The set tests means: two rows equally good on average but skewed in opposite directions
    are called different at most alpha + 3 sd (300 groups: 0.088) of the time at 100 repeats
    (measured 0.057); the Wilcoxon test, which tests medians, in 0.553 of them. At 20 repeats the
    sign flips' symmetric null understates the skewed tail (0.100; docs/statistics.md)."""
    sims = 300
    bound = ALPHA + 3 * math.sqrt(ALPHA * (1 - ALPHA) / sims)
    groups = [opposite_skew_group(s, 2, 100) for s in range(sims)]
    assert np.mean([confidence_set_worse(g).any() for g in groups]) <= bound
    assert np.mean([holm_wilcoxon_worse(g).any() for g in groups]) > bound


def test_the_replaced_procedure_exceeds_its_level_at_10_rows():
    """The reproduction of issue 22: what the confidence set fixes is really there."""
    rate = false_worse_rate(holm_wilcoxon_worse, 10, 20, "lognormal")
    assert rate > BOUND


def test_a_planted_ten_percent_difference_is_found_at_100_repeats():
    # The two procedures' power beside each other is in docs/statistics.md; at 2 rows the set's
    # sign-flip t test is at least as powerful as the Wilcoxon test here (1 - 0.02 below it at most).
    new = power(confidence_set_worse, 2, 100, 0.10, sims=100)
    old = power(holm_wilcoxon_worse, 2, 100, 0.10, sims=100)
    assert new >= 0.9 and new >= old - 0.02


def _table() -> None:  # pragma: no cover - prints the figures of docs/statistics.md
    print(f"false worse, alpha {ALPHA}, {SIMS} groups, 20 repeats (MC sd {MC_SD:.4f})")
    for rows in (2, 4, 10, 48):
        for noise in ("lognormal", "chisquare"):
            old = false_worse_rate(holm_wilcoxon_worse, rows, 20, noise)
            new = false_worse_rate(confidence_set_worse, rows, 20, noise)
            print(f"  {rows:2d} rows {noise:9s}: old {old:.3f}  new {new:.3f}", flush=True)
    print("equal means, opposite skew (300 groups)")
    for rows, repeats in ((2, 20), (2, 100), (4, 20), (4, 100)):
        groups = [opposite_skew_group(s, rows, repeats) for s in range(300)]
        old = np.mean([holm_wilcoxon_worse(g).any() for g in groups])
        new = np.mean([confidence_set_worse(g).any() for g in groups])
        print(f"  {rows} rows {repeats:3d} repeats: old {old:.3f}  new {new:.3f}")
    print("power on the planted row")
    for noise in ("lognormal", "chisquare"):
        for rows in (2, 10):
            for repeats in (20, 100):
                for planted in (0.01, 0.05, 0.10):
                    old = power(holm_wilcoxon_worse, rows, repeats, planted, noise=noise)
                    new = power(confidence_set_worse, rows, repeats, planted, noise=noise)
                    print(f"  {noise} {rows:2d} rows {repeats:3d} repeats +{planted:.0%}: old {old:.3f}  new {new:.3f}")


if __name__ == "__main__":
    _table()
