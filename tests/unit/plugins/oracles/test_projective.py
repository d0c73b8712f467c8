"""The projective geometry behind PGR (plugins/oracles/_projective.py): points, hyperplanes and the
fast decoder, checked exactly against enumeration on small spaces."""

from __future__ import annotations

import numpy as np
import pytest

from ldpbench_plugins.oracles._projective import ProjectiveSpace, incidence_sums, points
from ldpbench_plugins.oracles.pgr import PGR

#: (q, t) pairs covering q = 2 (characteristic 2), t = 2 (one DP level) up to t = 6
SPACES = [(2, 2), (2, 3), (2, 5), (3, 2), (3, 3), (3, 4), (3, 6), (5, 3), (5, 4), (7, 3), (11, 2), (13, 3)]


@pytest.mark.parametrize(("q", "t"), SPACES)
def test_ranks_name_every_point_once(q, t):
    space = ProjectiveSpace(q, t)
    ranks = np.arange(space.size)
    x = space.vectors(ranks)
    lead = x[np.arange(space.size), np.argmax(x != 0, axis=1)]
    assert np.all(lead == 1), "canonical vectors start with a 1"
    assert len({tuple(row) for row in x}) == space.size
    for g in range(1, q):  # every nonzero multiple names the same point
        assert np.array_equal(space.ranks((g * x) % q), ranks)


@pytest.mark.parametrize(("q", "t"), SPACES)
def test_hyperplanes_have_the_sizes_of_the_paper(q, t):
    space = ProjectiveSpace(q, t)
    x = space.vectors(np.arange(space.size))
    incident = (x @ x.T) % q == 0
    assert space.on_hyperplane == points(q, t - 1) and space.on_two_hyperplanes == points(q, t - 2)
    assert np.all(incident.sum(axis=0) == space.on_hyperplane)
    both = incident.T.astype(int) @ incident
    off = both[~np.eye(space.size, dtype=bool)]
    assert np.all(off == space.on_two_hyperplanes)


@pytest.mark.parametrize(("q", "t"), SPACES)
def test_fast_decoder_equals_the_direct_sums(q, t):
    """The dynamic program gives exactly the sums taken by the definition, for every prefix of items."""
    space = ProjectiveSpace(q, t)
    rng = np.random.default_rng([q, t])
    for y in (rng.integers(0, 1000, space.size), rng.poisson(0.3, space.size), np.eye(space.size, dtype=np.int64)[-1]):
        direct = space.incidence_direct(y, space.size)
        for items in sorted({1, 2, space.size // 2 + 1, space.size}):
            assert np.array_equal(incidence_sums(space, y, items), direct[:items])
            assert np.array_equal(space.incidence(y, items), direct[:items])


def test_fast_decoder_on_floats_and_large_counts():
    space = ProjectiveSpace(5, 4)
    rng = np.random.default_rng(3)
    y = rng.random(space.size)
    np.testing.assert_allclose(incidence_sums(space, y, 100), space.incidence_direct(y, 100), rtol=1e-12)
    big = rng.integers(2**40, 2**41, space.size)
    assert np.array_equal(incidence_sums(space, big, space.size), space.incidence_direct(big, space.size))


def test_decoder_at_a_realistic_size_matches_sampled_direct_sums():
    """d = 5,000, eps = 4 (q = 53, t = 4, K = 151,740): the DP path, checked on 40 items."""
    oracle = PGR(d=5_000, epsilon=4.0)
    space = oracle.space
    assert (space.q, space.t) == (53, 4)
    rng = np.random.default_rng(5)
    y = rng.integers(0, 50, space.size)
    T = incidence_sums(space, y, oracle.d)
    items = rng.choice(oracle.d, 40, replace=False)
    u = space.vectors(np.arange(space.size))
    direct = y @ ((u @ space.vectors(items).T) % space.q == 0)
    assert np.array_equal(T[items], direct)


@pytest.mark.parametrize(("q", "t"), SPACES)
def test_hyperplane_points_are_exactly_the_points_on_each_hyperplane(q, t):
    space = ProjectiveSpace(q, t)
    x = space.vectors(np.arange(space.size))
    incident = (x @ x.T) % q == 0
    listed = space.hyperplane_points(np.arange(space.size))
    assert listed.shape == (space.size, space.on_hyperplane)
    for v in range(space.size):
        assert np.array_equal(np.sort(listed[v]), np.flatnonzero(incident[:, v]))
