"""The stated level and power of the reports-follow-the-table test (ldpbench.audit.law, docs/audit.md).

Counts are drawn straight from multinomials (what ``perturb`` + ``output_rows`` produce for one item),
so thousands of replications take seconds. The claims measured:

- under the null, the row test and the homogeneity test fire at most at their level (measured at
  level 0.05, where a rate is visible in 1,000 replications: bound 0.05 + 3 sigma = 0.071);
- at the draws :func:`draws_for_power` chooses for the audit's level, a law at total-variation
  distance 0.05 from the table, spread to have the least chi-square divergence (4 x 0.05^2), is
  caught with probability at least 0.9 (bound 0.9 - 3 sigma over 400 replications = 0.855);
- the audit's rule, a rejection confirmed by a second independent sample, each sized for power
  sqrt(0.9): still power at least 0.9 against that deviation, and under the null a false-alarm
  rate of about level^2 (measured at level 0.05: at most 0.0025 + 3 sigma over 4,000 pairs).
"""

from __future__ import annotations

import numpy as np
import pytest

from ldpbench.audit.law import DELTA, POWER, chi_square_test, draws_for_power, homogeneity_test

#: The strictest per-test level of a built-in's audit: alpha = 0.05 over 630 tests (olh, the).
AUDIT_LEVEL = 0.05 / 630


def _table(rows: int, rng: np.random.Generator) -> np.ndarray:
    """A skewed law over ``rows`` outputs, as output tables are (no output below 1/(4 rows))."""
    p = 0.25 / rows + 0.75 * rng.dirichlet(np.full(rows, 2.0))
    return p / p.sum()


def _least_favourable(p: np.ndarray, delta: float) -> np.ndarray:
    """``p`` moved by total variation ``delta``, proportionally to ``p`` (mass from one half of the
    outputs to the other): the deviation of least chi-square divergence, ``delta^2 (1/p(A) + 1/p(B))``."""
    order = np.argsort(p)
    first = np.cumsum(p[order]) <= 0.5
    a = np.zeros(p.size, dtype=bool)
    a[order[first]] = True
    pa = p[a].sum()
    return p + delta * (np.where(a, p / pa, 0) - np.where(~a, p / (1 - pa), 0))


@pytest.mark.parametrize("rows", [3, 20, 70, 256])
def test_the_row_test_keeps_its_level(rows):
    rng = np.random.default_rng(rows)
    p = _table(rows, rng)
    m = draws_for_power(rows - 1, AUDIT_LEVEL)
    fired = np.mean([chi_square_test(rng.multinomial(m, p), p)[2] <= 0.05 for _ in range(1000)])
    assert fired <= 0.071, f"false-alarm rate {fired:.3f} at level 0.05 ({rows} outputs, {m} draws)"


@pytest.mark.parametrize("rows", [3, 20, 70, 256])
def test_the_row_test_has_its_stated_power_at_tv_005(rows):
    rng = np.random.default_rng(100 + rows)
    p = _table(rows, rng)
    q = _least_favourable(p, DELTA)
    assert np.isclose(0.5 * np.abs(q - p).sum(), DELTA) and np.all(q >= 0)
    m = draws_for_power(rows - 1, AUDIT_LEVEL)
    power = np.mean([chi_square_test(rng.multinomial(m, q), p)[2] <= AUDIT_LEVEL for _ in range(400)])
    assert power >= 0.855, f"power {power:.3f} against TV {DELTA} ({rows} outputs, {m} draws)"


def test_the_homogeneity_test_keeps_its_level():
    rng = np.random.default_rng(7)
    fired = []
    for _ in range(1000):
        items = np.repeat(np.arange(4), 1500)
        rows = rng.integers(0, 3, items.size)
        messages = rows * 10 + rng.integers(0, 3, items.size)  # 3 messages per row, whatever the item
        fired.append(homogeneity_test(rows, messages, items)[2] <= 0.05)
    assert np.mean(fired) <= 0.071, f"false-alarm rate {np.mean(fired):.3f} at level 0.05"


def _confirmed(rng: np.random.Generator, m: int, law: np.ndarray, table: np.ndarray, level: float) -> bool:
    """law_audit's rule: a rejection counts only if a second, independent sample rejects too."""
    return all(chi_square_test(rng.multinomial(m, law), table)[2] <= level for _ in range(2))


@pytest.mark.parametrize("rows", [3, 70])
def test_a_confirmed_rejection_keeps_the_stated_power_and_squares_the_level(rows):
    rng = np.random.default_rng(300 + rows)
    p = _table(rows, rng)
    q = _least_favourable(p, DELTA)
    m = draws_for_power(rows - 1, AUDIT_LEVEL, power=np.sqrt(POWER))
    power = np.mean([_confirmed(rng, m, q, p, AUDIT_LEVEL) for _ in range(400)])
    assert power >= 0.855, f"confirmed power {power:.3f} against TV {DELTA} ({rows} outputs, {m} draws)"
    fired = np.mean([_confirmed(rng, m, p, p, 0.05) for _ in range(4000)])
    assert fired <= 0.0025 + 3 * np.sqrt(0.0025 / 4000), f"confirmed false-alarm rate {fired:.4f} at level 0.05"
