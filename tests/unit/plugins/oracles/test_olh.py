"""Exact output tables: epsilon-LDP audit, support probabilities, FWHT, channels (docs/algorithms.md §8.1)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpbench_plugins.oracles._fwht import fwht, sylvester
from ldpbench_plugins.oracles.grr import GRR
from ldpbench_plugins.oracles.hr import HR
from ldpbench_plugins.oracles.olh import OLH
from ldpbench_plugins.oracles.oue import OUE

DOMAINS = (2, 3, 5, 8)
BUDGETS = (0.1, 1.0, 4.0)


def _audit(P: np.ndarray, eps: float) -> None:
    """A3: every ratio <= e^eps (1 + 1e-12), the bound attained, each P(.|v) sums to 1."""
    assert np.all(P >= 0)
    np.testing.assert_allclose(P.sum(axis=0), 1.0, rtol=0, atol=1e-12)
    live = P.max(axis=1) > 0
    assert np.all(P[live].min(axis=1) > 0), "an output possible for one value must be possible for all"
    ratio = (P[live].max(axis=1) / P[live].min(axis=1)).max()
    assert ratio <= math.exp(eps) * (1 + 1e-12)
    assert ratio >= math.exp(eps) * (1 - 1e-12)


def _support(P: np.ndarray, S: np.ndarray) -> np.ndarray:
    """M[w, v] = P(w in Support | v)."""
    return S.T.astype(float) @ P


def _check_support(oracle, P, S) -> None:
    """A4: P(v in Support | v) = p*, P(v in Support | v') = q*, to 1e-12."""
    M = _support(P, S)
    d = oracle.d
    np.testing.assert_allclose(np.diag(M), oracle.p_star, rtol=0, atol=1e-12)
    np.testing.assert_allclose(M[~np.eye(d, dtype=bool)], oracle.q_star, rtol=0, atol=1e-12)


@pytest.mark.parametrize("cls", [GRR, OUE, HR])
@pytest.mark.parametrize("d", DOMAINS)
@pytest.mark.parametrize("eps", BUDGETS)
def test_a3_a4_exact_tables(cls, d, eps):
    oracle = cls(d=d, epsilon=eps)
    P, S = oracle.output_table()
    expected_rows = {GRR: d, OUE: 2**d, HR: oracle.size if cls is HR else 0}[cls]
    assert P.shape == S.shape == (expected_rows, d)
    _audit(P, eps)
    _check_support(oracle, P, S)


@pytest.mark.parametrize("d", (2, 3, 5))
@pytest.mark.parametrize("g", (2, 3, 4))
@pytest.mark.parametrize("eps", BUDGETS)
def test_a3_a4_olh_full_hash_family(d, g, eps):
    """All g^d functions D -> [g] with uniform weight, times GRR over g (d <= 5, g <= 4)."""
    oracle = OLH(d=d, epsilon=eps, g=g)
    P, S = oracle.output_table()
    assert P.shape == (g**d * g, d)  # the full family, not the merged table
    _audit(P, eps)
    _check_support(oracle, P, S)
    # Every output (H, y) carries weight g^-d times a GRR probability over g values.
    q_g = 1 / (math.exp(eps) + g - 1)
    np.testing.assert_allclose(np.unique(np.round(P * g**d, 14)), np.unique(np.round([q_g, math.exp(eps) * q_g], 14)))


@pytest.mark.parametrize("d", DOMAINS)
@pytest.mark.parametrize("eps", BUDGETS)
def test_a3_a4_olh_default_range(d, eps):
    """Default g (2, 4 and 56 for these budgets); large families come as the merged-pattern table."""
    oracle = OLH(d=d, epsilon=eps)
    P, S = oracle.output_table()
    _audit(P, eps)
    _check_support(oracle, P, S)


def test_olh_merged_table_is_the_full_table_grouped_by_support_pattern():
    full = OLH(d=3, epsilon=1.0, g=4)
    P_full, S_full = full.output_table()
    pattern = (S_full.astype(np.int64) << np.arange(3)).sum(axis=1)
    grouped = np.zeros((8, 3))
    np.add.at(grouped, pattern, P_full)
    P_m, S_m = full.output_table(merged=True)
    np.testing.assert_allclose(P_m, grouped, atol=1e-15)
    np.testing.assert_array_equal(S_m, ((np.arange(8)[:, None] >> np.arange(3)) & 1).astype(bool))


def test_a4_hadamard_sets():
    for d in (3, 7, 30, 100):
        hr = HR(d=d, epsilon=1.0)
        _, S = hr.output_table()
        K = hr.size
        assert np.all(S.sum(axis=0) == K // 2)
        inter = S.T.astype(int) @ S.astype(int)
        assert np.all(inter[~np.eye(d, dtype=bool)] == K // 4)


@pytest.mark.parametrize("K", [2**j for j in range(1, 11)])
def test_a5_fwht_is_the_sylvester_matrix(K):
    rng = np.random.default_rng(K)
    H = sylvester(K)
    Hf = H.astype(float)  # BLAS; exact for these small integers
    assert np.array_equal(H, H.T) and np.array_equal(Hf @ Hf, K * np.eye(K))
    x = rng.integers(-1000, 1000, K)
    np.testing.assert_allclose(fwht(x), Hf @ x, rtol=0, atol=1e-9)
    assert fwht(x).dtype == np.int64
    np.testing.assert_array_equal(fwht(fwht(x)), K * x)
    xf = rng.normal(size=(3, K))
    np.testing.assert_allclose(fwht(xf), xf @ Hf.T, rtol=0, atol=1e-9)  # batched along the last axis
    np.testing.assert_allclose(fwht(fwht(xf)), K * xf, rtol=1e-12, atol=1e-9)


def test_fwht_entries_are_parities_and_bad_lengths_fail():
    H = sylvester(16)
    r, y = np.meshgrid(np.arange(16), np.arange(16), indexing="ij")
    np.testing.assert_array_equal(H, np.where(np.bitwise_count(r & y) % 2 == 0, 1, -1))
    with pytest.raises(ValueError):
        fwht(np.ones(6))


@pytest.mark.parametrize("cls", [GRR, HR])
@pytest.mark.parametrize("eps", (0.5, 3.0))
def test_channels_equal_the_exact_tables(cls, eps):
    oracle = cls(d=5, epsilon=eps)
    P, _ = oracle.output_table()
    channel = oracle.channel()
    np.testing.assert_allclose(channel.dense(), P, atol=1e-15)
    rng = np.random.default_rng(3)
    theta, w = rng.random((5, 2)), rng.random((channel.n_reports, 2))
    np.testing.assert_allclose(channel.forward(theta), P @ theta, atol=1e-14)
    np.testing.assert_allclose(channel.backward(w), P.T @ w, atol=1e-14)


def test_hr_large_channel_uses_the_transform():
    hr = HR(d=1000, epsilon=1.0)  # K d = 1024 * 1000 > 2^16: matrix-free
    channel = hr.channel()
    assert channel._matrix is None
    rng = np.random.default_rng(0)
    theta, w = rng.dirichlet(np.ones(1000)), rng.random(1024)
    fwd = channel.forward(theta)
    assert fwd.sum() == pytest.approx(1.0, rel=1e-12) and np.all(fwd > 0)
    # adjoint: <w, A theta> = <A^T w, theta>
    assert np.dot(w, fwd) == pytest.approx(np.dot(channel.backward(w), theta), rel=1e-12)
    # spot check against the table's formula P(y | v) = (1 + delta H[v + 1, y]) / K
    delta = 2 * hr.p_star - 1
    v, y = 17, 300
    e_v = np.zeros(1000)
    e_v[v] = 1
    sign = 1 - 2 * (bin((v + 1) & y).count("1") % 2)
    assert channel.forward(e_v)[y] == pytest.approx((1 + delta * sign) / 1024, rel=1e-12)


@pytest.mark.parametrize("cls", [GRR, OUE, OLH, HR])
def test_output_rows_match_the_table_supports(cls):
    """The report -> table row hook agrees with support_counts on the same reports."""
    rng = np.random.default_rng(5)
    oracle = cls(d=4, epsilon=1.0)
    _, S = oracle.output_table()
    values = rng.integers(0, 4, 500)
    reports = oracle.perturb(values, rng)
    rows = oracle.output_rows(reports)
    np.testing.assert_array_equal(S[rows].sum(axis=0), oracle.support_counts(reports))
    if cls is OLH:
        _, S_m = oracle.output_table(merged=True)
        np.testing.assert_array_equal(S_m[oracle.output_rows(reports, merged=True)], S[rows])
