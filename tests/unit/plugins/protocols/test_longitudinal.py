"""The two-layer chain of the longitudinal protocols (plugins/protocols/_longitudinal.py)."""

from __future__ import annotations

import numpy as np
import pytest

from ldpbench_plugins.protocols import _longitudinal as lg


def test_composite_probabilities_and_the_papers_approximate_variance():
    c = lg.Chain("grr", 5, 0.6, 0.1, 0.5, 0.125)
    assert c.p_star == pytest.approx(0.6 * 0.5 + 0.4 * 0.125)
    assert c.q_star == pytest.approx(0.1 * 0.5 + 0.9 * 0.125)
    assert c.p_star - c.q_star == pytest.approx((0.6 - 0.1) * (0.5 - 0.125))
    # Arcolezi et al.'s Var* = gamma (1 - gamma) / (n (p1 - q1)^2 (p2 - q2)^2), gamma = q1 (p2 - q2) + q2
    gamma = 0.1 * (0.5 - 0.125) + 0.125
    assert c.approx_variance(1000) == pytest.approx(gamma * (1 - gamma) / (1000 * 0.5**2 * 0.375**2))
    assert c.variance(1000, 0.0) == pytest.approx(c.approx_variance(1000))
    assert c.estimate(np.array([1000 * c.q_star, 1000 * c.p_star]), 1000) == pytest.approx([0.0, 1.0])


def test_pattern_counting_keeps_returning_values_apart():
    # user 0 holds 1, 2, 1: one pair (0, 1) active in rounds 0 and 2, one (0, 2) in round 1
    items = np.array([[1, 0], [2, 0], [1, 0]])
    values, inverse = lg._pairs(items, 3)
    assert inverse[0, 0] == inverse[2, 0] != inverse[1, 0]
    assert sorted(values.tolist()) == [0, 1, 2]
    # PRR that is the identity, IRR that is the identity: supports are the true histograms
    exact = lg.Chain("ue", 3, 1.0, 0.0, 1.0, 0.0)
    support = lg.aggregate_support(exact, items, 3, np.random.default_rng(0))
    assert support.tolist() == [[1, 1, 0], [1, 0, 1], [1, 1, 0]]
    exact_grr = lg.Chain("grr", 3, 1.0, 0.0, 1.0, 0.0)
    assert lg.per_user_support(exact_grr, items, 3, np.random.default_rng(0)).tolist() == support.tolist()


def test_the_averaging_attack_grows_against_the_naive_protocol_and_not_past_eps_inf_against_l_grr():
    """ldpbench.audit.averaging on the protocols' own draws (static_supports); alpha = 1e-3."""
    import functools

    from ldpbench.audit.averaging import averaging_attack

    d, eps = 8, 1.0
    naive = lg.Chain("grr", d, 1.0, 0.0, *lg.grr_layer(d, eps))
    p1, q1 = lg.grr_layer(d, eps)
    memo = lg.solve_irr("grr", d, p1, q1, "grr", 0.5)
    rng = np.random.default_rng(5)
    grows = averaging_attack(functools.partial(lg.static_supports, naive), d, [1, 64], 3000, rng, alpha=1e-3)
    bounded = averaging_attack(functools.partial(lg.static_supports, memo), d, [1, 64], 3000, rng, alpha=1e-3)
    assert grows[1].epsilon_lower > 3 * eps > grows[0].epsilon_lower
    assert all(pt.epsilon_lower <= memo.eps_inf for pt in bounded)


@pytest.mark.parametrize("name", ["l-grr", "l-osue", "l-olh", "rappor", "dbitflip-pm", "l-naive"])
def test_static_supports_feed_the_averaging_audit(plugins, name):
    """Every built-in longitudinal protocol draws its T reports for the audit: shape, counts in
    [0, T], and (1500 users, alpha 0.05 over 2 points) no loss above what it claims."""
    from ldpbench.audit.averaging import rounds_audit

    proto = plugins.create("protocol", name)
    sup = proto.static_supports(8, 1.0, np.arange(40) % 8, 5, np.random.default_rng(1))
    assert sup.shape == (40, 8) and sup.min() >= 0 and sup.max() <= 5
    out = rounds_audit(proto, d=8, epsilons=[1.0], rounds=[1, 16], users=1500, seed=3)
    assert not out.failed and out.audited, out.lines()


@pytest.mark.parametrize(
    ("p_high", "p_low"),
    [
        (0.73, 0.2),
        (0.2, 0.73),  # the selected bits have the lower probability
        (128.999 / 256, 64.999 / 256),  # almost a whole byte's worth decided by the ties
        (1.0, 0.0),
        (3.3 / 256, 300.9 / 256 - 1),
    ],
)
def test_bernoulli_bits_have_the_law_of_a_uniform_compared_with_p(p_high, p_low):
    """Each class of bits is Binomial(count, p) within 5 sd (2,000,000 bits). Deciding by the byte
    alone (ignoring ties) would be off by (256 p - floor(256 p)) / 256 per bit: 0.999/256 in the third
    case, 7.6 and 8.1 sd at these counts, so a wrong tie rule fails."""
    rng = np.random.default_rng(20261128)
    high = rng.random((250_000, 8)) < 0.5
    bits = lg.bernoulli_bits(high, p_high, p_low, np.random.default_rng(1))
    assert bits.dtype == bool and bits.shape == high.shape
    for mask, p in ((high, p_high), (~high, p_low)):
        m = int(mask.sum())
        ones = int(bits[mask].sum())
        if p in (0.0, 1.0):
            assert ones == p * m
        else:
            assert abs(ones - m * p) < 5 * np.sqrt(m * p * (1 - p))


def test_bernoulli_bits_byte_ties_are_resolved_by_the_fraction():
    # p = 100.5/256: bytes below 100 give 1, byte 100 gives 1 half the time, above never
    high = np.ones((400_000,), dtype=bool)
    rng = np.random.default_rng(3)
    bits = lg.bernoulli_bits(high, 100.5 / 256, 0.0, rng)
    u = np.frombuffer(np.random.default_rng(3).bytes(high.size), dtype=np.uint8)
    assert bits[u < 100].all() and not bits[u > 100].any()
    tie = bits[u == 100]
    assert abs(tie.mean() - 0.5) < 5 * 0.5 / np.sqrt(tie.size)


def test_pairs_are_numbered_by_first_round_then_user_by_either_method(monkeypatch):
    """The per-user path draws PRRs in pair order: round comparison (T <= MASK_ROUNDS) and the key
    sort must number pairs alike, and every occurrence must point at its own (user, value)."""
    rng = np.random.default_rng(4)
    items = rng.integers(0, 5, size=(12, 300))
    values, inverse = lg._pairs(items, 5)
    assert (values[inverse] == items).all()
    first = np.array([[np.argmax(items[:, u] == items[t, u]) for u in range(300)] for t in range(12)])
    order = sorted({(first[t, u], u, items[t, u]) for t in range(12) for u in range(300)})
    assert values.tolist() == [v for _, _, v in order]
    assert [(first[t, u], u, items[t, u]) for t, u in [(5, 7), (11, 299)]] == [
        order[inverse[5, 7]],
        order[inverse[11, 299]],
    ]
    monkeypatch.setattr(lg, "MASK_ROUNDS", 0)
    by_sort = lg._pairs(items, 5)
    np.testing.assert_array_equal(by_sort[0], values)
    np.testing.assert_array_equal(by_sort[1], inverse)


@pytest.mark.parametrize("T", [1, 5, 16, 17, 40])
def test_pattern_counting_by_masks_or_by_sort_agrees(monkeypatch, T):  # noqa: N803
    rng = np.random.default_rng(T)
    items = rng.integers(0, 4, size=(T, 500))
    items[:, ::3] = items[0, ::3]  # some static users
    patterns, hist = lg.pattern_histogram(items, 4)
    # the definition: each (user, value) pair's set of rounds
    want: dict[int, np.ndarray] = {}
    for u in range(500):
        for v in np.unique(items[:, u]):
            mask = int(sum(1 << t for t in range(T) if items[t, u] == v))
            want.setdefault(mask, np.zeros(4, dtype=np.int64))[v] += 1
    assert patterns.tolist() == sorted(want)
    np.testing.assert_array_equal(hist, np.array([want[m] for m in sorted(want)]))
    monkeypatch.setattr(lg, "MASK_ROUNDS", 0)
    again = lg.pattern_histogram(items, 4)
    np.testing.assert_array_equal(again[0], patterns)
    np.testing.assert_array_equal(again[1], hist)
