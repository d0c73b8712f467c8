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


def test_the_unary_per_user_draw_is_the_plain_comparison_bit_for_bit():
    # per_user_support compares each IRR uniform with lo or hi instead of building
    # np.where(bits, p2, q2): the same draws must give the same counts, with p2 above or below q2
    import numpy as np

    from ldpbench_plugins.protocols._longitudinal import Chain, _pairs, per_user_support

    items = np.random.default_rng(1).integers(0, 6, size=(3, 400))
    for p2, q2 in ((0.8, 0.3), (0.3, 0.8)):
        chain = Chain("ue", 6, 0.7, 0.2, p2, q2)
        got = per_user_support(chain, items, 6, np.random.default_rng(9))
        rng = np.random.default_rng(9)  # the reference, drawn in the same order
        values, inverse = _pairs(items, 6)
        prr = rng.random((values.size, 6)) < 0.2
        prr[np.arange(values.size), values] = rng.random(values.size) < 0.7
        want = [(rng.random((400, 6)) < np.where(prr[inverse[t]], p2, q2)).sum(axis=0) for t in range(3)]
        np.testing.assert_array_equal(got, np.array(want))
