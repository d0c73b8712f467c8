"""Projective Geometry Response (plugins/oracles/pgr.py): the field, the constants and the variance,
checked exactly against enumeration on small spaces, and its parameters refused where they must be."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpbench.errors import ParamError
from ldpbench_plugins.oracles._projective import points
from ldpbench_plugins.oracles.pgr import PGR, default_field, dimension


def _noise(oracle: PGR) -> float:
    p, q = oracle.p_star, oracle.q_star
    return q * (1 - q) / (p - q) ** 2


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.0, 3.0, 4.0, 6.0])
@pytest.mark.parametrize("d", [2, 256, 5_000])
def test_default_q_is_the_better_prime_around_e_eps_plus_one(eps, d):
    target = math.exp(eps) + 1
    below = max((c for c in range(2, math.floor(target) + 1) if _prime(c)), default=None)
    above = min(c for c in range(math.ceil(target), 2 * math.ceil(target) + 2) if _prime(c))
    chosen = default_field(eps, d)
    assert chosen in {below, above}
    others = {below, above} - {chosen, None}
    assert all(_noise(PGR(d=d, epsilon=eps)) <= _noise(PGR(d=d, epsilon=eps, q=c)) for c in others)


def _prime(n: int) -> bool:
    return n >= 2 and all(n % f for f in range(2, int(n**0.5) + 1))


def test_known_parameters():
    assert [default_field(e, 4_096) for e in (0.5, 1, 2, 4)] == [3, 3, 7, 53]
    assert dimension(256, 5) == 5 and points(5, 5) == 781
    oracle = PGR(d=41_270, epsilon=1.0)
    assert (oracle.space.q, oracle.space.t, oracle.space.size) == (3, 11, 88_573)


@pytest.mark.parametrize(("d", "q"), [(2, 0), (3, 0), (5, 0), (8, 0), (8, 2), (7, 3), (6, 7), (4, 13)])
@pytest.mark.parametrize("eps", [0.3, 1.0, 4.0])
def test_table_gives_p_star_q_star_and_the_variance_exactly(d, q, eps):
    """From the enumerated table: P(v in S | v) = p*, P(v in S | w) = q*, and the exact variance of
    each estimate for a population (a sum of independent Bernoullis per user) = variance(n, f)."""
    oracle = PGR(d=d, epsilon=eps, q=q)
    P, S = oracle.output_table()
    assert P.shape == S.shape == (oracle.space.size, d)
    np.testing.assert_allclose(P.sum(axis=0), 1, rtol=0, atol=1e-12)
    ratio = (P.max(axis=1) / P.min(axis=1)).max()
    assert ratio == pytest.approx(math.exp(eps), rel=1e-12)
    M = S.T.astype(float) @ P  # M[w, v] = P(w in Support | user holds v)
    np.testing.assert_allclose(np.diag(M), oracle.p_star, rtol=0, atol=1e-13)
    np.testing.assert_allclose(M[~np.eye(d, dtype=bool)], oracle.q_star, rtol=0, atol=1e-13)
    counts = np.arange(1, d + 1) * 7
    n = int(counts.sum())
    var_counts = (M * (1 - M)) @ counts
    exact = var_counts / (n * (oracle.p_star - oracle.q_star)) ** 2
    np.testing.assert_allclose(oracle.variance(n, counts / n), exact, rtol=1e-12)


def test_infinite_budget_reports_uniformly_on_the_hyperplane():
    oracle = PGR(d=5, epsilon=math.inf, q=3)
    P, S = oracle.output_table()
    np.testing.assert_allclose(P[S], 1 / oracle.space.on_hyperplane)
    assert np.all(P[~S] == 0) and oracle.p_star == 1.0


def test_mixture_weight_reproduces_the_law():
    """rho / c_set + (1 - rho) / K = e^eps / Z on the hyperplane, (1 - rho) / K = 1 / Z off it."""
    for eps in (0.5, 1.0, 4.0):
        oracle = PGR(d=100, epsilon=eps)
        P, S = oracle.output_table()
        rho, space = oracle.hyperplane_weight, oracle.space
        np.testing.assert_allclose(P[S], rho / space.on_hyperplane + (1 - rho) / space.size, rtol=1e-12)
        np.testing.assert_allclose(P[~S], (1 - rho) / space.size, rtol=1e-12)


@pytest.mark.parametrize("q", [2, 3, 5, 11])
def test_sampler_lands_on_or_off_the_hyperplane_as_told(q):
    oracle = PGR(d=40, epsilon=1.0, q=q)
    rng = np.random.default_rng(q)
    values = rng.integers(0, oracle.d, 20_000)
    inside = rng.random(values.size) < 0.5
    reports = oracle.space.sample(values, inside, rng)
    on = oracle.support_matrix(reports)[np.arange(values.size), values]
    assert np.array_equal(on, inside)
    assert reports.min() >= 0 and reports.max() < oracle.space.size


def test_support_counts_agree_with_the_support_matrix():
    oracle = PGR(d=300, epsilon=2.0)
    rng = np.random.default_rng(1)
    reports = oracle.perturb(rng.integers(0, oracle.d, 5_000), rng)
    assert np.array_equal(oracle.support_counts(reports), oracle.support_matrix(reports).sum(axis=0))


@pytest.mark.parametrize("q", [4, 9, 15, 1])
def test_q_must_be_a_prime(q):
    with pytest.raises(ParamError, match="prime"):
        PGR(d=10, epsilon=1.0, q=q)


def test_errors_name_the_remedy():
    with pytest.raises(ParamError, match="give a prime q explicitly"):
        PGR(d=10, epsilon=math.inf)
    with pytest.raises(ParamError, match="smaller prime q"):
        PGR(d=10**6, epsilon=1.0, q=65_521)
    with pytest.raises(ParamError, match="decoding takes about"):
        PGR(d=41_270, epsilon=8.0)


SPEC = """\
name: pgr-q
datasets:
  - zipf: {d: 64, n: 5000, s: 1.1}
epsilons: [1]
oracles:
  - grr
  - pgr:
      q: 4
"""


def test_a_spec_with_a_composite_q_is_refused_at_its_line(tmp_path, plugins):
    from ldpbench.errors import SpecError
    from ldpbench.spec.validate import load_spec

    path = tmp_path / "spec.yaml"
    path.write_text(SPEC)
    with pytest.raises(SpecError) as info:
        load_spec(path, plugins)
    (msg,) = info.value.problems
    assert msg.startswith(f"{path}:8: ") and "q must be 0 (automatic) or a prime" in msg
    path.write_text(SPEC.replace("q: 4", "q: 7"))
    assert [m.name for m in load_spec(path, plugins).mechanisms] == ["grr", "pgr"]


def test_q_above_the_largest_feasible_prime_is_refused_by_the_declaration():
    from ldpbench.params import resolve

    with pytest.raises(ParamError):
        resolve(PGR.params, {"q": 65_537}, owner="oracle 'pgr'")
    assert PGR(d=8, epsilon=11.0, q=65_521).space.size == 65_522


@pytest.mark.parametrize(("d", "eps"), [(5, 1.0), (8, 4.0), (300, 2.0)])
def test_channel_is_the_output_table_and_its_maps_are_adjoint(d, eps, monkeypatch):
    """forward/backward through the incidence sums (the DP at d = 300) against the dense table."""
    oracle = PGR(d=d, epsilon=eps)
    channel = oracle.channel()
    P, _ = oracle.output_table()
    if d == 300:  # through the incidence sums, not the dense matrix
        monkeypatch.setattr(type(channel), "_DENSE_MAX", 0)
        channel = oracle.channel()
    assert (channel.n_reports, channel.n_items) == P.shape
    rng = np.random.default_rng(d)
    theta, w = rng.random(d), rng.random(channel.n_reports)
    np.testing.assert_allclose(channel.forward(theta), P @ theta, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(channel.backward(w), P.T @ w, rtol=1e-12, atol=1e-15)


def test_em_runs_after_pgr_per_user_and_is_refused_on_the_aggregate_path(tmp_path, plugins):
    from ldpbench.errors import SpecError
    from ldpbench.spec.validate import load_spec

    text = (
        "name: pgr-em\ndatasets:\n  - zipf: {d: 64, n: 5000, s: 1.1}\nepsilons: [1]\noracles: [pgr]\npipelines: [em]\n"
    )
    path = tmp_path / "spec.yaml"
    path.write_text(text + "simulation: per-user\n")
    assert load_spec(path, plugins).simulation == "per-user"
    path.write_text(text)
    with pytest.raises(SpecError, match="set 'simulation: per-user'"):
        load_spec(path, plugins)


def test_construction_is_o1_the_item_table_is_built_on_first_use():
    # validate builds every oracle at every d and epsilon of a spec: the d x t table waits for a user
    oracle = PGR(d=41_270, epsilon=1.0)
    assert "_items" not in vars(oracle)
    reports = oracle.perturb(np.array([0, 41_269]), np.random.default_rng(0))
    assert "_items" in vars(oracle) and oracle._items.shape == (41_270, oracle.space.t)
    assert reports.shape == (2,)
