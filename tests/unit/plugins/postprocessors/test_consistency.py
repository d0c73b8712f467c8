"""Acceptance A8 (and A9, A11's Post-Pos part): deterministic properties of [W20]'s consistency methods.

Run on 1,000 random vectors, d in {1, 2, 7, 100, 1000}, entries N(1/d, (3/d)^2), plus all-negative
and all-positive cases, wrapped in hand-built Estimates with OUE's constants (the oracles are other
plugins; these tests need none of them). The vectors, the estimates and the methods by [W20]'s
names are in tests/support.py, shared with tests/statistical/test_consistency.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import lsq_linear
from support import (
    EPS,
    N_USERS,
    RNG_UNUSED,
    BaseCut,
    BasePos,
    MLEApx,
    Norm,
    NormCut,
    NormMul,
    NormSub,
    PostPos,
    builtin_plugins,
    make_estimate,
    method_id,
    oue_constants,
    random_vectors,
    run_method,
)

from ldpbench.engine.pipeline import apply_pipeline
from ldpbench.errors import NotApplicable
from ldpbench.types import Estimate
from ldpbench_plugins.numerics.noise import significance_quantile, significance_threshold
from ldpbench_plugins.numerics.simplex import (
    project_to_simplex,
)
from ldpbench_plugins.postprocessors._mle_apx import mle_apx_generic, mle_apx_grr
from ldpbench_plugins.postprocessors.consistency import norm_cut_paper, support_fractions

RNG = np.random.default_rng(20200223)


PLUGINS = builtin_plugins()


def grr_constants(d: int, epsilon: float = EPS) -> tuple[float, float]:
    e = math.exp(epsilon)
    return e / (e + d - 1), 1.0 / (e + d - 1)


VECTORS = random_vectors(RNG)


assert len(VECTORS) == 1000


NON_NEGATIVE = [
    BasePos(),
    BaseCut(alpha=0.05),
    NormMul(),
    NormCut(variant="paper"),
    NormCut(variant="code"),
    NormSub(algorithm="sort"),
    NormSub(algorithm="iterative"),
    MLEApx(variant="generic"),
]


SUM_TO_ONE = [
    Norm(),
    NormMul(),
    NormSub(algorithm="sort"),
    NormSub(algorithm="iterative"),
    MLEApx(variant="generic"),
    NormCut(variant="code"),
]


# -- A8: the properties on 1,000 vectors ---------------------------------------------------------


@pytest.mark.parametrize("pp", NON_NEGATIVE, ids=method_id)
def test_outputs_are_non_negative(pp):
    for f in VECTORS:
        assert run_method(pp, f).min() >= 0.0


@pytest.mark.parametrize("pp", SUM_TO_ONE, ids=method_id)
def test_outputs_sum_to_one(pp):
    for f in VECTORS:
        assert abs(run_method(pp, f).sum() - 1.0) <= 1e-9


def test_mle_apx_grr_is_non_negative_and_sums_to_one():
    pp = MLEApx(variant="grr")
    for f in VECTORS:
        out = run_method(pp, f, p=grr_constants(f.size)[0], q=grr_constants(f.size)[1])
        assert out.min() >= 0.0
        assert abs(out.sum() - 1.0) <= 1e-9


def test_norm_cut_paper_keeps_a_prefix_with_sum_at_most_one():
    for f in VECTORS:
        out = norm_cut_paper(f)
        assert out.sum() <= 1.0 + 1e-12
        kept = out > 0
        np.testing.assert_array_equal(out[kept], f[kept])  # kept values unchanged
        order = np.argsort(-f, kind="stable")
        m = int(kept.sum())
        assert set(order[:m]) == set(np.nonzero(kept)[0])  # a prefix of the descending order
        # ... and the longest one: adding the next positive value would pass 1.
        if m < f.size and f[order[m]] > 0:
            assert np.cumsum(f[order[: m + 1]])[-1] > 1.0 + 1e-12


def test_norm_cut_paper_edge_cases():
    np.testing.assert_array_equal(norm_cut_paper(np.array([1.5, 0.2, -0.1])), [0, 0, 0])  # top value > 1
    np.testing.assert_array_equal(norm_cut_paper(np.array([0.2, 0.3, -0.1])), [0.2, 0.3, 0])  # = Base-Pos
    np.testing.assert_array_equal(norm_cut_paper(np.array([0.5, 0.3, 0.25, 0.1])), [0.5, 0.3, 0, 0])


def test_norm_cut_code_keeps_the_element_that_passes_one_and_rescales():
    out = run_method(NormCut(variant="code"), np.array([0.5, 0.3, 0.25, 0.1, -0.2]))
    np.testing.assert_allclose(out, np.array([0.5, 0.3, 0.25, 0, 0]) / 1.05, rtol=0, atol=1e-15)
    # Positives never reach 1: negatives dropped first, i.e. Norm-Mul.
    f = np.array([0.2, -0.3, 0.3, 0.1])
    np.testing.assert_allclose(
        out := run_method(NormCut(variant="code"), f), run_method(NormMul(), f), rtol=0, atol=1e-15
    )
    assert abs(out.sum() - 1) < 1e-15


def test_norm_mul_and_norm_cut_code_fall_back_to_uniform_without_positives():
    for pp in (NormMul(), NormCut(variant="code")):
        est = pp.apply(make_estimate(np.array([-0.1, -0.2, 0.0, -1.0])), RNG_UNUSED)
        np.testing.assert_array_equal(est.frequencies, np.full(4, 0.25))
        assert est.info[pp.name]["uniform"] is True


def test_norm_adds_a_constant_and_sums_to_one():
    for f in VECTORS:
        out = run_method(Norm(), f)
        diff = out - f
        np.testing.assert_allclose(diff, np.full(f.size, diff[0]), rtol=0, atol=1e-15)
        assert abs(out.sum() - 1) <= 1e-12


def test_norm_is_a_no_op_on_a_vector_summing_to_one():
    f = RNG.dirichlet(np.ones(50)) - 0.01
    f = f + (1 - f.sum()) / f.size
    np.testing.assert_allclose(run_method(Norm(), f), f, rtol=0, atol=1e-15)


# -- Norm-Sub = the Euclidean projection onto the simplex ----------------------------------------


def _generic_projection(y: np.ndarray) -> np.ndarray:
    """The projection by a generic solver, independent of the closed form.

    Bounded-variable least squares (an active-set QP solver) on min ||x - y||^2 + w^2 (sum x - 1)^2,
    x >= 0: with w = 1e5 the penalty moves the solution by O(1/w^2), far below the 1e-8 tolerance.
    (SLSQP fails its line search on some of these vectors.)
    """
    w = 1e5
    a = np.vstack([np.eye(y.size), w * np.ones((1, y.size))])
    res = lsq_linear(a, np.r_[y, w], bounds=(0.0, np.inf), method="bvls", tol=1e-15)
    assert res.success, res.message
    return res.x


def test_norm_sub_equals_a_generic_solver_projection():
    small = [f for f in VECTORS if f.size <= 50][::4]
    assert len(small) > 100
    for f in small:
        np.testing.assert_allclose(run_method(NormSub(), f), _generic_projection(f), rtol=0, atol=1e-8)


def test_norm_sub_is_shift_invariant_and_order_preserving():
    for f in VECTORS[::3]:
        out = run_method(NormSub(), f)
        for c in (-0.37, 1e-3, 5.0):
            np.testing.assert_allclose(run_method(NormSub(), f + c), out, rtol=0, atol=1e-12)
        order = np.argsort(f, kind="stable")
        assert np.all(np.diff(out[order]) >= 0)


def test_norm_sub_toy_example_of_the_slides():
    # [W20] slides, "Toy example": Base-Pos then Norm-Sub on a small vector.
    f = np.array([0.40, 0.35, 0.24, 0.05, 0.03, -0.02, -0.02, -0.03])
    out = run_method(NormSub(), f)
    lam = (0.40 + 0.35 + 0.24 + 0.05 + 0.03 - 1.0) / 5
    np.testing.assert_allclose(out, np.r_[f[:5] - lam, 0, 0, 0], atol=1e-15)


# -- MLE-Apx ------------------------------------------------------------------------------------


def test_mle_apx_generic_residual_over_variance_is_constant_on_the_support():
    p, q = oue_constants()
    a, b = p * (1 - p), q * (1 - q)
    for f in VECTORS:
        est = make_estimate(f)
        out = np.asarray(MLEApx().apply(est, RNG_UNUSED).frequencies)
        y = support_fractions(est)
        on = out > 0
        ratio = (y[on] - q - (p - q) * out[on]) / (b + out[on] * (a - b))
        assert np.ptp(ratio) <= 1e-9


def test_mle_apx_grr_formula_on_the_support():
    for f in VECTORS:
        d = f.size
        p, q = grr_constants(d)
        est = make_estimate(f, p=p, q=q)
        out = np.asarray(MLEApx(variant="grr").apply(est, RNG_UNUSED).frequencies)
        y = support_fractions(est)
        on = out > 0
        m = int(on.sum())
        expected = ((y[on] / y[on].sum()) * (m * q + p - q) - q) / (p - q)
        np.testing.assert_allclose(out[on], expected, rtol=0, atol=1e-12)


def test_mle_apx_generic_is_norm_sub_without_the_f_term():
    # When p*(1-p*) = q*(1-q*) (SUE: p* + q* = 1) the variance has no f_v term, and the same
    # derivation gives exactly Norm-Sub ([W20] §IV; docs/algorithms.md §2.9).
    e = math.exp(EPS / 2)
    p, q = e / (e + 1), 1 / (e + 1)
    # MLE-Apx starts from the positive estimates and only drops items, so this holds when the
    # positives sum to at least 1 (Norm-Sub's lambda >= 0); otherwise Norm-Sub also lifts
    # non-positive estimates, which MLE-Apx never does.
    cases = [f for f in VECTORS if np.maximum(f, 0).sum() >= 1.0]
    assert len(cases) > 300
    for f in cases:
        out = run_method(MLEApx(), f, p=p, q=q)
        np.testing.assert_allclose(out, run_method(NormSub(), f), rtol=0, atol=1e-12)


def test_mle_apx_generic_is_close_to_norm_sub_at_moderate_epsilon():
    # docs/algorithms.md §2.9: with OUE's p*, q* it differs from Norm-Sub by less than sigma per entry.
    d, n = 1024, 1_000_000
    truth = (np.arange(1, d + 1) ** -1.5) / np.sum(np.arange(1, d + 1) ** -1.5)
    for eps in (0.5, 1.0, 2.0):
        p, q = oue_constants(eps)
        sigma = math.sqrt(q * (1 - q) / (n * (p - q) ** 2))
        f = truth + RNG.normal(0, sigma, d)
        out = run_method(MLEApx(), f, p=p, q=q, n=n)
        assert np.max(np.abs(out - run_method(NormSub(), f, p=p, q=q, n=n))) < sigma


def test_mle_apx_uses_support_counts_only_while_they_match_the_vector():
    p, q = oue_constants()
    f = RNG.normal(0.01, 0.03, 100)
    counts = N_USERS * (q + (p - q) * f)
    est = make_estimate(f, support_counts=counts)
    np.testing.assert_array_equal(support_fractions(est), counts / N_USERS)
    stale = est.replace(frequencies=np.maximum(f, 0))  # an earlier step changed the vector
    np.testing.assert_allclose(support_fractions(stale), q + (p - q) * np.maximum(f, 0), rtol=1e-15)


def test_mle_apx_pass_counter_and_helpers():
    p, q = oue_constants()
    f = np.array([0.6, 0.5, 0.01, -0.2])
    out, passes = mle_apx_generic(q + (p - q) * f, f, p, q)
    assert passes >= 1 and abs(out.sum() - 1) < 1e-12 and out.min() >= 0
    pg, qg = grr_constants(4)
    out, passes = mle_apx_grr(qg + (pg - qg) * f, f, pg, qg)
    assert abs(out.sum() - 1) < 1e-12 and out.min() >= 0


def test_mle_apx_refuses_what_it_cannot_do():
    est = make_estimate(np.array([0.5, 0.5, 0.0]))  # OUE constants: not GRR-like
    with pytest.raises(NotApplicable, match="GRR-like"):
        MLEApx(variant="grr").apply(est, RNG_UNUSED)
    with pytest.raises(NotApplicable, match="p\\* and q\\*"):
        MLEApx().apply(est.replace(p_star=None, q_star=None), RNG_UNUSED)


# -- Base-Cut threshold (A9) ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "d", "quantile", "thetas"),
    [
        (8_019_015, 41_270, 4.7145, {1: 25_620.0, 4: 3_681.0, 5: 2_206.6}),  # Kosarak
        (908_576, 16_470, 4.5239, {1: 8_275.1, 4: 1_188.9, 5: 712.7}),  # Retail
    ],
)
def test_base_cut_threshold_matches_the_documented_values(n, d, quantile, thetas):
    assert significance_quantile(d, 0.05) == pytest.approx(quantile, abs=5e-5)
    for eps, theta in thetas.items():
        p, q = oue_constants(eps)
        est = make_estimate(np.zeros(d), p=p, q=q, n=n)
        # BaseCut() with its default: alpha = 0.05 is part of the method ([W20]; docs/algorithms.md §2.4)
        assert BaseCut().threshold(est)[0] * n == pytest.approx(theta, abs=0.1)
        sigma_count = math.sqrt(n * q * (1 - q)) / (p - q)
        assert significance_threshold(sigma_count, d) == pytest.approx(theta, abs=0.1)


def test_base_cut_cuts_below_theta():
    # [W20] and [JG19] Eq. 22 (OUE-Zero): estimates *smaller than* the threshold go; one equal to it stays
    est = make_estimate(np.zeros(10))
    theta = BaseCut().threshold(est)[0]
    f = np.array([theta * 1.0001, theta, theta * 0.9999, -theta, 0.2, 0, 0, 0, 0, 0])
    out = np.asarray(BaseCut().apply(make_estimate(f), RNG_UNUSED).frequencies)
    np.testing.assert_array_equal(out, [f[0], f[1], 0, 0, 0.2, 0, 0, 0, 0, 0])


def test_base_cut_needs_a_variance():
    with pytest.raises(NotApplicable, match="noise variance"):
        BaseCut().apply(make_estimate(np.ones(3) / 3).replace(variance=None), RNG_UNUSED)


# -- Post-Pos (A11) and chaining -----------------------------------------------------------------


def test_post_pos_clips_answers_and_equals_base_pos_on_single_values():
    f = RNG.normal(0.01, 0.05, 200)
    est = PostPos().apply(make_estimate(f), RNG_UNUSED)
    np.testing.assert_array_equal(est.frequencies, f)  # the vector is untouched
    np.testing.assert_array_equal(est.item_answers(), run_method(BasePos(), f))
    sums = np.array([-0.3, 0.0, 0.2])
    np.testing.assert_array_equal(est.answer(sums), [0.0, 0.0, 0.2])


def test_methods_chain_through_apply_pipeline():
    f = RNG.normal(0.01, 0.05, 100)
    out = apply_pipeline([BasePos(), NormSub()], make_estimate(f), RNG_UNUSED)
    assert out.steps == ("base-pos", "norm-sub")
    np.testing.assert_allclose(out.frequencies, project_to_simplex(np.maximum(f, 0)), atol=1e-15)
    out = apply_pipeline([PostPos(), Norm()], make_estimate(f), RNG_UNUSED)
    np.testing.assert_allclose(out.frequencies, f + (1 - f.sum()) / f.size, atol=1e-15)
    assert out.answer(np.array([-1.0]))[0] == 0.0  # Post-Pos still clips after a later step
    out = apply_pipeline([MLEApx(), NormCut(), BaseCut()], make_estimate(f), RNG_UNUSED)
    assert out.info["mle-apx"]["passes"] >= 1 and out.frequencies.min() >= 0


def test_every_method_is_registered_with_a_description_and_a_cost():
    plugins = PLUGINS
    for name in (
        "base",
        "base-pos",
        "post-pos",
        "base-cut",
        "norm",
        "norm-mul",
        "norm-cut",
        "norm-sub",
        "mle-apx",
        "power",
        "power-ns",
    ):
        info = plugins.get("postprocessor", name)
        assert "[W20]" in info.summary and "O(" in info.summary, info.summary
    assert plugins.get("postprocessor", "norm-cut").cls.params[0].default == "paper"
    assert plugins.get("postprocessor", "mle-apx").cls.params[0].default == "generic"
    assert plugins.get("postprocessor", "post-pos").cls.acts_on == "queries"


def test_base_cut_says_so_when_an_estimated_variance_is_negative():
    # Blender estimates its variances from the data; one below zero must not make a NaN threshold.
    from ldpbench_plugins.postprocessors.consistency import BaseCut

    est = Estimate(
        frequencies=np.array([0.5, -0.01, 0.3, 0.21]),
        n=1000,
        epsilon=1.0,
        mechanism="x",
        variance=np.array([1e-4, -1e-5, 1e-4, 1e-4]),
    )
    out = BaseCut().apply(est, np.random.default_rng(0))
    assert np.all(np.isfinite(out.frequencies))
    assert out.frequencies[1] == 0.0  # threshold 0: a negative estimate is cut
    assert any("negative estimated variance" in w for w in out.warnings)
    with pytest.raises(NotApplicable, match="NaN or inf"):
        BaseCut().apply(est.replace(variance=np.array([1e-4, np.nan, 1e-4, 1e-4])), np.random.default_rng(0))
