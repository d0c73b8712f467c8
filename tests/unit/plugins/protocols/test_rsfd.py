"""RS+FD (plugins/protocols/rsfd.py; Arcolezi et al., CIKM 2021): estimates against the paper's
variance, and the exact epsilon of the whole report (one real value, a - 1 fakes)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from support_multidim import SIZES, check_moments, moments, population

from ldpbench_plugins.protocols._multidim import attribute_log_ratio, max_log_ratio
from ldpbench_plugins.protocols.rsfd import RSFD, amplified_epsilon, mixture_probabilities, rsfd_variance

VARIANTS = ["grr", "oue-z", "oue-r"]


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize(("simulation", "repeats", "tol"), [("aggregate", 400, 0.3), ("per-user", 120, 0.55)])
def test_each_attribute_is_unbiased_with_the_papers_variance(variant, simulation, repeats, tol):
    # summed sample variance: sd <= 0.071 (R = 400), 0.13 (R = 120); tolerances > 4 sigma. A wrong
    # p' or q' (fakes left out of the estimator, or eps instead of eps') biases the mean by far more
    pop, eps = population(), 1.0
    found = moments(RSFD(oracle=variant), pop, eps, repeats, simulation)
    check_moments(pop, found, lambda j, f: rsfd_variance(variant, SIZES[j], 2, eps, pop.n, f), repeats, tol)


def test_the_grr_estimator_is_the_papers_closed_form():
    # CIKM 2021 §3.2: f = (C a k - n (a - 1 + q k)) / (n k (p - q)), p, q of GRR at eps' over k values
    a, k, n, eps = 3, 5, 1000, 1.0
    e1 = math.exp(amplified_epsilon(eps, a))
    p, q = e1 / (e1 + k - 1), 1 / (e1 + k - 1)
    C = np.array([300.0, 200.0, 180.0, 170.0, 150.0])
    p1, q1 = mixture_probabilities("grr", k, a, eps)
    np.testing.assert_allclose((C / n - q1) / (p1 - q1), (C * a * k - n * (a - 1 + q * k)) / (n * k * (p - q)))


def test_outputs_are_pure_estimates_post_processors_can_use():
    out = RSFD(oracle="grr").run(population(800), 1.0, np.random.default_rng(0))
    x = out["x"]
    assert x.n == 800 and x.bernoulli_support and x.report_histogram.sum() == 800 and x.channel is not None
    assert (x.p_star, x.q_star) == mixture_probabilities("grr", 3, 2, 1.0)


def direct_table(variant: str, sizes: tuple[int, ...], eps: float) -> np.ndarray:
    """P(whole report | record) written out term by term (no Kronecker products, no oracle code):
    reports are tuples of values (grr) or of bit vectors as integers (oue)."""
    a = len(sizes)
    e1 = math.exp(amplified_epsilon(eps, a))

    def real(d, x, y):
        if variant == "grr":
            return e1 / (e1 + d - 1) if y == x else 1 / (e1 + d - 1)
        p, q = 0.5, 1 / (e1 + 1)
        return math.prod((p if v == x else q) if (y >> v) & 1 else 1 - (p if v == x else q) for v in range(d))

    def fake(d, y):
        if variant == "grr":
            return 1 / d
        if variant == "oue-r":
            return sum(real(d, v, y) for v in range(d)) / d
        q = 1 / (e1 + 1)
        return math.prod(q if (y >> v) & 1 else 1 - q for v in range(d))

    outputs = [range(d) if variant == "grr" else range(1 << d) for d in sizes]
    records = list(itertools.product(*(range(d) for d in sizes)))
    reports = list(itertools.product(*outputs))
    P = np.zeros((len(records), len(reports)))
    for r, x in enumerate(records):
        for c, y in enumerate(reports):
            P[r, c] = (
                sum(
                    real(sizes[j], x[j], y[j]) * math.prod(fake(sizes[k], y[k]) for k in range(a) if k != j)
                    for j in range(a)
                )
                / a
            )
    return P


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("sizes", [(3, 3), (2, 3), (2, 2, 2)])
def test_the_report_table_is_the_law_written_out(variant, sizes):
    np.testing.assert_allclose(RSFD(oracle=variant).report_table(sizes, 1.0), direct_table(variant, sizes, 1.0))


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("sizes", [(3, 3), (2, 3), (2, 2, 2)])
def test_any_two_records_are_told_apart_at_the_amplified_epsilon(variant, sizes):
    # "all values real" against "none": the sampled attribute's e^eps' is not diluted by the fakes
    P = RSFD(oracle=variant).report_table(sizes, 1.0)
    assert max_log_ratio(P) == pytest.approx(amplified_epsilon(1.0, len(sizes)))


@pytest.mark.parametrize(
    ("variant", "sizes", "expected"),
    [
        ("grr", (3, 3), 1.0),  # the paper's amplification bound is met: one attribute differs, equal domains
        ("grr", (2, 2, 2), 1.0),
        ("oue-z", (3, 3), 1.0),  # OUE-z's fakes look like a real report of a value the user does not hold
        ("oue-z", (2, 3), 1.0),
        ("oue-r", (2, 2, 2), 1.0),
        ("grr", (2, 3), "closed"),  # unequal domains: a uniform fake on [2] is rarer than a GRR q on [3]
        ("oue-r", (3, 3), 1.1250385472198468),  # measured, and written out by direct_table above
    ],
)
def test_records_differing_in_one_attribute_at_the_papers_epsilon_or_where_it_is_exceeded(variant, sizes, expected):
    P = RSFD(oracle=variant).report_table(sizes, 1.0)
    if expected == "closed":
        # changing the d=3 attribute, the other (d=2) reported as a mismatch: ratio
        # (3 p_3 + 2 q_2) / (3 q_3 + 2 q_2), p_k, q_k of GRR at eps' over k values
        e1 = math.exp(amplified_epsilon(1.0, 2))
        p3, q3, q2 = e1 / (e1 + 2), 1 / (e1 + 2), 1 / (e1 + 1)
        expected = math.log((3 * p3 + 2 * q2) / (3 * q3 + 2 * q2))
        assert expected > 1.05
    assert attribute_log_ratio(P, sizes) == pytest.approx(expected)
