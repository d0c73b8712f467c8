"""The oracle checks: constants, the exact output table, the exact law of both simulation paths,
unbiasedness and variance by repeated simulation, hygiene and declared tags (what each establishes
is listed in :mod:`ldpbench.testing.checks`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ldpbench.boundary.values import readonly
from ldpbench.engine.simulate import aggregate_draw
from ldpbench.testing import stats
from ldpbench.testing.checks.machinery import CheckSkipped, Subject, _global_state, _rng, _same_state, _simulate, _where
from ldpbench.types import Channel, Estimate, Oracle, OracleTags, implements


@dataclass(frozen=True)
class OracleCheckConfig:
    """Sizes of the oracle checks (defaults run in a few seconds per oracle)."""

    d: int = 16  #: domain of the repeated-simulation checks
    epsilons: tuple[float, ...] = (0.5, 1.0, 4.0)
    seed: int = 0
    n: int = 3000  #: users per simulated trial
    trials: int = 200  #: trials of the unbiasedness / variance checks
    table_domains: tuple[int, ...] = (2, 3)  #: domains of the exact output-table audit
    law_samples: int = 5000  #: draws of the exact-law tests (docs/algorithms.md §8.2 uses 200,000)
    law_counts: tuple[int, ...] = (2, 1, 1)  #: the tiny population of the exact-law tests
    #: Total-variation deviation of the reports' law per item that ``check_reports_follow_table`` is
    #: sized to catch with probability 0.9 (``ldpbench audit``: 0.05, four times the draws).
    reports_delta: float = 0.1


def _items(values: np.ndarray) -> np.ndarray:
    """Users' items as every ``perturb`` is handed them in a run: int64 and read-only (an oracle that
    sorts or overwrites its input fails here as it would in a run)."""
    return readonly(np.asarray(values, dtype=np.int64))


def _fmt(x: object) -> str:
    """A number or array, short (a few values), for a failure message."""
    a = np.asarray(x, dtype=float) if not isinstance(x, np.ndarray) or x.dtype.kind in "biuf" else np.asarray(x)
    if a.ndim == 0:
        return f"{float(a):.12g}"
    return np.array2string(a, precision=6, threshold=8, edgeitems=3, max_line_width=200)


def _nonfinite(x: object) -> str:
    """``" (it holds 2 NaN, 1 inf)"`` when that is the cause of a mismatch, else ``""``."""
    a = np.asarray(x, dtype=float)
    nan, inf = int(np.isnan(a).sum()), int(np.isinf(a).sum())
    parts = [f"{nan} NaN"] * bool(nan) + [f"{inf} inf"] * bool(inf)
    return f" (it holds {', '.join(parts)})" if parts else ""


def _vs(got: object, want: object) -> str:
    """``"got G, expected W"``, naming NaN/inf in either."""
    return f"got {_fmt(got)}{_nonfinite(got)}, expected {_fmt(want)}{_nonfinite(want)}"


def _paths(oracle: Oracle) -> tuple[str, ...]:
    """The simulation paths the oracle declares (per-user always: ``perturb`` is required)."""
    return ("per-user", "aggregate") if oracle.tags().aggregate else ("per-user",)


def _skip_without_aggregate(oracle: Oracle, name: str) -> None:
    if not oracle.tags().aggregate:
        raise CheckSkipped(
            f"{name} declares no aggregate path (tags().aggregate is False: neither sample_support_counts "
            f"nor a report-histogram sampler); specs must use simulation: per-user"
        )


def _skip_without_table(oracle: Oracle, name: str) -> None:
    if not oracle.tags().output_table:
        raise CheckSkipped(f"{name} declares no exact output table at d={oracle.d} (tags().output_table is False)")


def _truth(cfg: OracleCheckConfig) -> np.ndarray:
    """A fixed skewed population: a Dirichlet(0.5) draw over d items, n users."""
    rng = np.random.default_rng(np.random.SeedSequence([int(cfg.seed), 7]))
    return rng.multinomial(cfg.n, rng.dirichlet(np.full(cfg.d, 0.5)))


def _table(oracle: Oracle, where: str) -> tuple[np.ndarray, np.ndarray]:
    _skip_without_table(oracle, where)
    try:
        P, S = oracle.output_table()
    except NotImplementedError:
        raise AssertionError(f"{where}: tags() declare output_table, but output_table() is not implemented") from None
    P, S = np.asarray(P, dtype=float), np.asarray(S).astype(bool)
    d = oracle.d
    assert P.ndim == 2 and P.shape[1] == d, f"{where}: output_table P must be (n_outputs, {d}), got {P.shape}"
    assert S.shape == P.shape, f"{where}: output_table S has shape {S.shape}, P has {P.shape}"
    return P, S


def check_constants(subject: Subject, cfg: OracleCheckConfig) -> None:
    """p*, q* valid; estimate = (c/n - q*)/(p* - q*); variance = (V-exact); noise variance = (V-approx).

    (V-exact) is the variance of a pure protocol, whose support law is p* / q*; an oracle declared
    biased is not one (its bias comes from its support law), so only the shape of its variance is
    checked here and its moments by ``check_output_table_moments`` and the simulations."""
    rng = _rng(cfg, "constants")
    for eps in cfg.epsilons:
        o = subject.oracle(cfg.d, eps)
        where = _where(subject, d=cfg.d, epsilon=eps)
        p, q = float(o.p_star), float(o.q_star)
        assert math.isfinite(p) and math.isfinite(q), f"{where}: p*={p}, q*={q} must be finite"
        assert 0 <= q < p <= 1, f"{where}: need 0 <= q* < p* <= 1, got p*={p}, q*={q}"
        n = 1000
        c = rng.integers(0, n + 1, size=cfg.d)
        est = o.estimate(c, n)
        want = (c / n - q) / (p - q)
        f = np.asarray(est.frequencies, dtype=float)
        assert np.allclose(f, want, rtol=1e-12, atol=1e-12), (
            f"{where}: estimate() is not (c/n - q*)/(p* - q*): {_vs(f, want)}"
        )
        assert np.allclose(est.counts, n * want, rtol=1e-12, atol=1e-9), (
            f"{where}: count scale != n x fraction: {_vs(est.counts, n * want)}"
        )
        truth = rng.dirichlet(np.ones(cfg.d))
        got = np.asarray(o.variance(n, truth), dtype=float)
        if o.tags().real_valued_counts or not o.tags().unbiased:
            # Real-valued reports (SHE): p*, q* are expected contributions, not support
            # probabilities, so (V-exact) does not apply; the repeated simulations check the variance.
            # A biased oracle (Apple's fixed hash family) is not a pure protocol either.
            assert got.shape == (cfg.d,) and np.all(np.isfinite(got)) and np.all(got > 0), (
                f"{where}: variance(n, f) must be {cfg.d} finite positive numbers, got {_fmt(got)}{_nonfinite(got)}"
            )
            noise = o.noise_variance(n)
            assert math.isfinite(noise) and noise > 0, (
                f"{where}: noise_variance(n) must be finite and positive, got {noise}"
            )
            continue
        exact = (q * (1 - q) + truth * (p - q) * (1 - p - q)) / (n * (p - q) ** 2)
        assert np.allclose(got, exact, rtol=1e-12, atol=0), (
            f"{where}: variance(n, f) differs from (V-exact) [q*(1-q*) + f (p*-q*)(1-p*-q*)]/(n (p*-q*)^2): "
            f"max relative error {np.max(np.abs(got / exact - 1)):.3g}; {_vs(got, exact)}"
        )
        approx = q * (1 - q) / (n * (p - q) ** 2)
        assert math.isclose(o.noise_variance(n), approx, rel_tol=1e-12), (
            f"{where}: noise_variance != (V-approx): {_vs(o.noise_variance(n), approx)}"
        )


def check_estimate_fields(subject: Subject, cfg: OracleCheckConfig) -> None:
    """The Estimate of each path carries n, epsilon, p*, q*, a variance and the support counts."""
    counts = _truth(cfg)
    n = int(counts.sum())
    eps = cfg.epsilons[0]
    o = subject.oracle(cfg.d, eps)
    for path in _paths(o):
        where = _where(subject, path=path, epsilon=eps)
        est = _simulate(o, counts, _rng(cfg, "fields", path), path)
        assert isinstance(est, Estimate), f"{where}: estimate() must return an Estimate, got {type(est).__name__}"
        f = np.asarray(est.frequencies)
        assert f.shape == (cfg.d,) and np.all(np.isfinite(f)), (
            f"{where}: frequencies must be {cfg.d} finite numbers, got {_fmt(f)}{_nonfinite(f)}"
        )
        assert est.n == n, f"{where}: Estimate.n = {est.n}, expected {n}"
        assert est.epsilon == eps, f"{where}: Estimate.epsilon = {est.epsilon}, expected {eps}"
        real = o.tags().real_valued_counts
        if real:
            assert est.p_star is None and est.q_star is None, (
                f"{where}: an oracle with real-valued sums is not pure: its Estimate must carry no p*/q*"
            )
        else:
            assert est.p_star == o.p_star and est.q_star == o.q_star, (
                f"{where}: Estimate p*/q* differ from the oracle's: Estimate ({est.p_star}, {est.q_star}), "
                f"oracle ({o.p_star}, {o.q_star})"
            )
        assert est.mechanism, f"{where}: Estimate.mechanism is empty"
        var = None if est.variance is None else np.asarray(est.variance, dtype=float)
        assert var is not None and var.shape == (cfg.d,), f"{where}: Estimate.variance must have length {cfg.d}"
        assert np.all(np.isfinite(var)) and np.all(var >= 0), (
            f"{where}: Estimate.variance must be finite, >= 0, got {_fmt(var)}{_nonfinite(var)}"
        )
        sc = None if est.support_counts is None else np.asarray(est.support_counts)
        assert sc is not None and sc.shape == (cfg.d,), f"{where}: Estimate.support_counts must have length {cfg.d}"
        if real:
            assert np.all(np.isfinite(sc)), f"{where}: support sums must be finite, got {_fmt(sc)}{_nonfinite(sc)}"
        else:
            assert np.all((sc >= 0) & (sc <= n)), f"{where}: support counts must lie in [0, n = {n}], got {_fmt(sc)}"
        if o.tags().finite_output and (path == "per-user" or o.tags().aggregate_histogram):
            assert est.report_histogram is not None and est.channel is not None, (
                f"{where}: a finite-output estimate must carry its report histogram and channel"
            )
            hist = np.asarray(est.report_histogram)
            assert int(hist.sum()) == n, f"{where}: the report histogram sums to {hist.sum()}, not n = {n}"


def check_output_table_ldp(subject: Subject, cfg: OracleCheckConfig) -> None:
    """Exact epsilon-LDP: P(y|v) <= e^eps (1 + 1e-12) P(y|v') for all y, v, v'; bound attained; laws sum to 1;
    then every likelihood ratio at d = 2..8 (while the table is enumerable) and over sampled declared
    parameters (:func:`ldpbench.audit.exact_audit`)."""
    for d in cfg.table_domains:
        for eps in cfg.epsilons:
            o = subject.oracle(d, eps)
            where = _where(subject, d=d, epsilon=eps)
            P, _ = _table(o, where)
            assert np.all(P >= 0), (
                f"{where}: negative probabilities in output_table (min {_fmt(P.min())}){_nonfinite(P)}"
            )
            sums = P.sum(axis=0)
            assert np.allclose(sums, 1, rtol=0, atol=1e-12), (
                f"{where}: P(. | v) must sum to 1 for every v, got sums {sums.tolist()}"
            )
            live = P.max(axis=1) > 0
            hi, lo = P[live].max(axis=1), P[live].min(axis=1)
            with np.errstate(divide="ignore"):
                ratio = np.where(lo > 0, hi / np.where(lo > 0, lo, 1), np.inf)
            worst = float(ratio.max())
            bound = math.exp(eps)
            assert worst <= bound * (1 + 1e-12), (
                f"{where}: not epsilon-LDP: max_y P(y|v)/P(y|v') = {worst:.12g} > e^eps = {bound:.12g}"
            )
            assert worst >= bound * (1 - 1e-12) or not o.tags().attains_epsilon, (
                f"{where}: the privacy bound is not attained: max ratio {worst:.12g} < e^eps = {bound:.12g} "
                f"(the oracle spends less budget than it declares)"
            )
    # Beyond d = 2, 3 and the given parameters: a leak may need k >= 2 items in a report, or a
    # parameter value the user did not pick (ldpbench.audit.exact).
    audit = _exact_audit(subject, cfg)
    assert audit.passed, (
        f"{subject.label}: not epsilon-LDP ({len(audit.failures)} of {len(audit.findings)} tables): "
        f"{audit.failures[0].describe()}"
    )


def _exact_audit(subject: Subject, cfg: OracleCheckConfig, **law: Any) -> Any:
    """The exact audit over the kit's domains and d = 2..8 and the plugin's parameters, as
    ``check_output_table_ldp`` and ``check_reports_follow_table`` both run it (``law``: the
    reports test's options)."""
    from ldpbench.audit import exact_audit
    from ldpbench.audit.exact import DEFAULT_DOMAINS

    return exact_audit(
        subject.cls,
        cfg.epsilons,
        values=subject._values(),
        fixed=tuple(subject.params),
        domains=tuple(sorted(set(cfg.table_domains) | set(DEFAULT_DOMAINS))),
        seed=cfg.seed,
        **law,
    )


def check_reports_follow_table(subject: Subject, cfg: OracleCheckConfig) -> None:
    """What a client sends follows the table the exact audit proved: at every point it enumerates
    (d = 2..8, each budget, each sampled parameter setting), ``perturb``'s reports encoded by
    ``encode_reports`` are tested against ``P(. | v)`` row by row, and within each row the message
    sent must not depend on the item (item order, extra fields, dtype): :mod:`ldpbench.audit.law`,
    family-wise level 0.05, power 0.9 against a total-variation deviation of ``reports_delta`` (0.1)
    per item (``ldpbench audit``: 0.05)."""
    if not subject.oracle(min(cfg.table_domains), cfg.epsilons[0]).tags().output_rows:
        raise CheckSkipped(
            f"{subject.label} has an output table but no output_rows: its reports cannot be tied to the "
            "table's rows, so the exact audit proves nothing about what perturb sends"
        )
    audit = _exact_audit(subject, cfg, law=True, delta=cfg.reports_delta)
    law = audit.law
    assert law is not None and law.available, f"{subject.label}: reports not tested: {law.summary() if law else ''}"
    assert law.passed, f"{subject.label}: {law.summary()}"


def check_output_table_support(subject: Subject, cfg: OracleCheckConfig) -> None:
    """From the table: P(v in Support | v) = p* and P(v in Support | v') = q* for v' != v (1e-12)."""
    for d in cfg.table_domains:
        for eps in cfg.epsilons:
            o = subject.oracle(d, eps)
            where = _where(subject, d=d, epsilon=eps)
            P, S = _table(o, where)
            # M[w, v] = P(w in Support | user holds v)
            M = S.T.astype(float) @ P
            diag = np.diag(M)
            off = M[~np.eye(d, dtype=bool)]
            assert np.allclose(diag, o.p_star, rtol=0, atol=1e-12), (
                f"{where}: P(v in Support | v) = {diag.tolist()} from the table, but p* = {o.p_star}"
            )
            assert np.allclose(off, o.q_star, rtol=0, atol=1e-12), (
                f"{where}: P(v in Support | v') ranges over [{off.min()}, {off.max()}] from the table, "
                f"but q* = {o.q_star}"
            )


def check_output_table_moments(subject: Subject, cfg: OracleCheckConfig) -> None:
    """A biased oracle's declared moments follow from its table: with M[w, v] = P(w in Support | v),
    expected_estimate(f) = (M f - q*)/(p* - q*) and variance(n, f) = sum_v f_v M[w, v] (1 - M[w, v])
    / (n (p* - q*)^2) (users independent), for random f (1e-9)."""
    rng = _rng(cfg, "moments")
    for d in cfg.table_domains:
        for eps in cfg.epsilons:
            o = subject.oracle(d, eps)
            where = _where(subject, d=d, epsilon=eps)
            P, S = _table(o, where)
            M = S.T.astype(float) @ P
            p, q = float(o.p_star), float(o.q_star)
            n = 1000
            for f in (rng.dirichlet(np.ones(d)), np.eye(d)[int(rng.integers(d))]):
                mean = (M @ f - q) / (p - q)
                declared = np.asarray(o.expected_estimate(f), dtype=float)
                assert declared.shape == (d,) and np.allclose(declared, mean, rtol=1e-9, atol=1e-12), (
                    f"{where}: expected_estimate(f) differs from the table's (M f - q*)/(p* - q*) by up to "
                    f"{np.max(np.abs(declared - mean)):.3g}"
                )
                var = (M * (1 - M)) @ f / (n * (p - q) ** 2)
                got = np.asarray(o.variance(n, f), dtype=float)
                assert np.allclose(got, var, rtol=1e-9, atol=0), (
                    f"{where}: variance(n, f) differs from the table's sum_v f_v M(1 - M) / (n (p* - q*)^2): "
                    f"max relative error {np.max(np.abs(got / var - 1)):.3g}"
                )


def check_perturb_follows_output_table(subject: Subject, cfg: OracleCheckConfig) -> str | None:
    """perturb() draws from output_table(): chi-square of the table rows (or binomial tests of the
    support counts when the oracle has no ``output_rows`` hook); support_counts agrees with the table.

    Returns a note when it passed by the binomial fallback: that tests each item's support count
    alone, not the law of the reports."""
    d = max(cfg.table_domains)
    m = cfg.law_samples
    fallback: set[str] = set()
    for eps in cfg.epsilons:
        o = subject.oracle(d, eps)
        tags = o.tags()
        if tags.real_valued_counts and not tags.output_table:
            raise CheckSkipped(
                f"{subject.label} has real-valued reports and no output table: there is no "
                "support law to test (the repeated simulations test its moments)"
            )
        # Without a table (or without output_rows) the support counts' binomial laws are still tested.
        P, S = _table(o, _where(subject, d=d, epsilon=eps)) if tags.output_table else (None, None)
        for v in range(d):
            where = _where(subject, d=d, epsilon=eps, item=v)
            reports = o.perturb(_items(np.full(m, v)), _rng(cfg, "follows", eps, v))
            support = np.asarray(o.support_counts(reports))
            if tags.output_table and tags.output_rows:
                rows = np.asarray(o.output_rows(reports), dtype=np.int64)
                assert rows.shape == (m,), (
                    f"{where}: output_rows must give one row per report: got shape {rows.shape}, expected ({m},)"
                )
                law = {(int(y),): float(P[y, v]) for y in range(P.shape[0]) if P[y, v] > 0}
                stats.exact_distribution_test(rows[:, None], law, label=f" of the reports, {where}").check()
                want = S[rows].sum(axis=0)
                assert np.array_equal(support, want), (
                    f"{where}: support_counts(reports) = {support.tolist()} but the table's supports of the "
                    f"same reports give {want.tolist()}"
                )
            else:
                fallback.add("no output table" if not tags.output_table else "no output_rows")
                probs = np.where(np.arange(d) == v, o.p_star, o.q_star)
                sd = np.sqrt(m * probs * (1 - probs))
                z = (support - m * probs) / np.where(sd > 0, sd, 1)
                assert np.all(np.abs(z) <= stats.Z_LIMIT), (
                    f"{where}: support counts {support.tolist()} of {m} reports are off p*/q* (max |z| = "
                    f"{np.abs(z).max():.2f})"
                )
    if fallback:
        return (
            f"by binomial tests of each item's support count ({' and '.join(sorted(fallback))} at d = {d}): "
            "the law of the reports themselves was not tested"
        )
    return None


def check_channel(subject: Subject, cfg: OracleCheckConfig) -> None:
    """Finite-output oracles: the channel is a stochastic matrix, forward/backward are adjoint, it is
    the law of perturb()'s reports, and histogram -> support counts agrees with support_counts()."""
    d = max(cfg.table_domains)
    m = cfg.law_samples
    for eps in cfg.epsilons:
        o = subject.oracle(d, eps)
        if not o.tags().finite_output:
            raise CheckSkipped(f"{subject.label} declares no finite report space (tags().finite_output is False)")
        ch = o.channel()
        where = _where(subject, d=d, epsilon=eps)
        assert isinstance(ch, Channel), f"{where}: tags() declare finite_output, so channel() must return a Channel"
        A = np.asarray(ch.dense(), dtype=float)
        assert A.shape == (ch.n_reports, d), f"{where}: channel is {A.shape}, expected ({ch.n_reports}, {d})"
        assert np.all(A >= 0) and np.allclose(A.sum(axis=0), 1, atol=1e-12), (
            f"{where}: columns must be laws, column sums {_fmt(A.sum(axis=0))}{_nonfinite(A)}"
        )
        rng = _rng(cfg, "channel", eps)
        theta, w = rng.random(d), rng.random(ch.n_reports)
        assert np.allclose(ch.forward(theta), A @ theta, atol=1e-12), (
            f"{where}: forward != dense @ theta: {_vs(ch.forward(theta), A @ theta)}"
        )
        assert np.allclose(ch.backward(w), A.T @ w, atol=1e-12), (
            f"{where}: backward != dense.T @ w: {_vs(ch.backward(w), A.T @ w)}"
        )
        for v in range(d):
            reports = o.perturb(_items(np.full(m, v)), rng)
            hist = np.asarray(o.report_histogram(reports))
            assert hist.shape == (ch.n_reports,) and int(hist.sum()) == m, (
                f"{where}: bad report histogram: shape {hist.shape} (expected ({ch.n_reports},)), total {hist.sum()} (expected {m})"
            )
            law = {(y,): float(A[y, v]) for y in range(ch.n_reports) if A[y, v] > 0}
            samples = np.repeat(np.arange(ch.n_reports), hist)[:, None]
            stats.exact_distribution_test(samples, law, label=f" of reports vs channel, {where}, item {v}").check()
            via_hist = np.asarray(o.support_counts_from_histogram(hist))
            assert np.array_equal(via_hist, np.asarray(o.support_counts(reports))), (
                f"{where}: support_counts_from_histogram(report_histogram(r)) != support_counts(r): "
                f"{_vs(via_hist, o.support_counts(reports))}"
            )


def _support_law(oracle: Oracle, counts: Sequence[int], where: str) -> dict[tuple[int, ...], float]:
    P, S = _table(oracle, where)
    per_item = [stats.categorical_law(S.astype(np.int64), P[:, v]) for v in range(oracle.d)]
    return stats.law_of_sum(per_item[v] for v, c in enumerate(counts) for _ in range(c))


def _histogram_law(oracle: Oracle, counts: Sequence[int]) -> dict[tuple[int, ...], float]:
    A = np.asarray(oracle.channel().dense(), dtype=float)
    eye = np.eye(A.shape[0], dtype=np.int64)
    per_item = [stats.categorical_law(eye, A[:, v]) for v in range(oracle.d)]
    return stats.law_of_sum(per_item[v] for v, c in enumerate(counts) for _ in range(c))


def _law_epsilons(cfg: OracleCheckConfig) -> tuple[float, ...]:
    return tuple(sorted({min(cfg.epsilons), max(cfg.epsilons)}))


def check_exact_law_aggregate(subject: Subject, cfg: OracleCheckConfig) -> None:
    """The aggregate path draws the support counts (and report histogram) from their exact law,
    enumerated from output_table() (channel()) for a tiny population (docs/algorithms.md §8.2). Draws go
    through the engine's own aggregate_draw() (what simulate() runs), so what is tested is what a
    run uses. Not applicable to an oracle whose tags declare the aggregate path approximate."""
    counts = np.asarray(cfg.law_counts, dtype=np.int64)
    d = counts.size
    for eps in _law_epsilons(cfg):
        o = subject.oracle(d, eps)
        _skip_without_aggregate(o, subject.label)
        if not o.tags().exact_aggregate:
            raise CheckSkipped(
                f"{subject.label} declares its aggregate path approximate (tags().exact_aggregate is False); "
                f"its moments are still checked (check_unbiased_aggregate, check_variance_aggregate)"
            )
        where = _where(subject, d=d, n=int(counts.sum()), epsilon=eps, path="aggregate")
        rng = _rng(cfg, "law-aggregate", eps)
        law = _support_law(o, counts, where)
        tags = o.tags()
        runs = [aggregate_draw(o, counts, rng, tags) for _ in range(cfg.law_samples)]
        draws = np.array([support for _, support in runs])
        stats.exact_distribution_test(draws, law, label=f" of aggregate support counts, {where}").check()
        if tags.aggregate_histogram:
            hists = np.array([hist for hist, _ in runs])
            stats.exact_distribution_test(hists, _histogram_law(o, counts), label=f" of histograms, {where}").check()


def check_exact_law_per_user(subject: Subject, cfg: OracleCheckConfig) -> None:
    """perturb() + support_counts() give support counts with the exact law of a tiny population."""
    counts = np.asarray(cfg.law_counts, dtype=np.int64)
    d, n = counts.size, int(counts.sum())
    values = np.repeat(np.arange(d), counts)
    for eps in _law_epsilons(cfg):
        o = subject.oracle(d, eps)
        where = _where(subject, d=d, n=n, epsilon=eps, path="per-user")
        rng = _rng(cfg, "law-per-user", eps)
        law = _support_law(o, counts, where)
        if o.tags().output_rows:
            m = cfg.law_samples
            _, S = _table(o, where)
            rows = np.asarray(o.output_rows(o.perturb(_items(np.tile(values, m)), rng)), dtype=np.int64)
            draws = S[rows].reshape(m, n, d).sum(axis=1)
        else:
            m = max(1000, cfg.law_samples // 5)
            draws = np.array([np.asarray(o.support_counts(o.perturb(_items(values), rng))) for _ in range(m)])
        stats.exact_distribution_test(draws, law, label=f" of per-user support counts, {where}").check()


def _trial_estimates(subject: Subject, cfg: OracleCheckConfig, path: str) -> dict[float, np.ndarray]:
    key = ("trials", path, cfg)
    if key not in subject.cache:
        counts = _truth(cfg)
        out = {}
        for eps in cfg.epsilons:
            o = subject.oracle(cfg.d, eps)
            if path == "aggregate":
                _skip_without_aggregate(o, subject.label)
            rng = _rng(cfg, "trials", path, eps)
            out[eps] = np.array([_simulate(o, counts, rng, path).frequencies for _ in range(cfg.trials)])
        subject.cache[key] = out
    return subject.cache[key]


def _mean(subject: Subject, cfg: OracleCheckConfig, path: str, *, declared: bool) -> None:
    """The trials' mean against the truth (``declared=False``) or against the oracle's declared
    ``expected_estimate`` (a biased oracle)."""
    counts = _truth(cfg)
    n = int(counts.sum())
    for eps, est in _trial_estimates(subject, cfg, path).items():
        o = subject.oracle(cfg.d, eps)
        where = _where(subject, d=cfg.d, n=n, epsilon=eps, path=path, trials=cfg.trials)
        f = counts / n
        target = np.asarray(o.expected_estimate(f), dtype=float) if declared else f
        stats.z_test(est, target, o.variance(n, f), label=f", {where}").check()


def _variance(subject: Subject, cfg: OracleCheckConfig, path: str) -> None:
    counts = _truth(cfg)
    n = int(counts.sum())
    for eps, est in _trial_estimates(subject, cfg, path).items():
        o = subject.oracle(cfg.d, eps)
        where = _where(subject, d=cfg.d, n=n, epsilon=eps, path=path, trials=cfg.trials)
        var = o.variance(n, counts / n)
        stats.variance_ratio_test(est, var, label=f", {where}").check()
        stats.per_value_variance_test(est, var, label=f", {where}").check()


def check_unbiased_aggregate(subject: Subject, cfg: OracleCheckConfig) -> None:
    """Aggregate path: the estimate's mean over trials matches the truth (max |z| <= 5.5)."""
    _mean(subject, cfg, "aggregate", declared=False)


def check_declared_mean_aggregate(subject: Subject, cfg: OracleCheckConfig) -> None:
    """Aggregate path of an oracle declared biased: the mean over trials matches its
    expected_estimate(f) (max |z| <= 5.5)."""
    _mean(subject, cfg, "aggregate", declared=True)


def check_variance_aggregate(subject: Subject, cfg: OracleCheckConfig) -> None:
    """Aggregate path: sample variances match variance(n, f) (ratio and per-value chi-square bounds)."""
    _variance(subject, cfg, "aggregate")


def check_unbiased_per_user(subject: Subject, cfg: OracleCheckConfig) -> None:
    """Per-user path (users in several chunks): unbiased (max |z| <= 5.5)."""
    _mean(subject, cfg, "per-user", declared=False)


def check_declared_mean_per_user(subject: Subject, cfg: OracleCheckConfig) -> None:
    """Per-user path of an oracle declared biased: the mean matches its expected_estimate(f)."""
    _mean(subject, cfg, "per-user", declared=True)


def check_variance_per_user(subject: Subject, cfg: OracleCheckConfig) -> None:
    """Per-user path: sample variances match variance(n, f)."""
    _variance(subject, cfg, "per-user")


def check_chunks(subject: Subject, cfg: OracleCheckConfig) -> None:
    """Any chunk of users works: empty and one-user chunks, integer support counts of length d."""
    o = subject.oracle(cfg.d, cfg.epsilons[0])
    where = _where(subject, d=cfg.d, epsilon=cfg.epsilons[0])
    rng = _rng(cfg, "chunks")
    empty = np.asarray(o.support_counts(o.perturb(_items(np.zeros(0)), rng)))
    assert empty.shape == (cfg.d,) and not empty.any(), (
        f"{where}: an empty chunk must give {cfg.d} zero support counts, got {_fmt(empty)} of shape {empty.shape}"
    )
    one = np.asarray(o.support_counts(o.perturb(_items(np.array([cfg.d - 1])), rng)))
    if o.tags().real_valued_counts:
        assert empty.dtype.kind in "iuf", f"{where}: support sums must be real numbers, got dtype {empty.dtype}"
        assert one.shape == (cfg.d,) and np.all(np.isfinite(one)), (
            f"{where}: one user's sums must be finite, got {_fmt(one)}{_nonfinite(one)}"
        )
    else:
        assert empty.dtype.kind in "iu", f"{where}: support counts must be integers, got dtype {empty.dtype}"
        assert one.shape == (cfg.d,) and np.all((one >= 0) & (one <= 1)), (
            f"{where}: one user supports each value 0/1 times, got {_fmt(one)}{_nonfinite(one)}"
        )
    if o.tags().finite_output:
        hist = np.asarray(o.report_histogram(o.perturb(_items(np.zeros(0)), rng)))
        assert hist.shape == (o.channel().n_reports,) and not hist.any(), (
            f"{where}: an empty chunk's histogram must be {o.channel().n_reports} zeros, got {_fmt(hist)}"
        )
    chunk = o.tags().chunk_users
    if chunk is not None:
        assert int(chunk) == chunk and chunk >= 1, f"{where}: chunk_users must be a positive int, got {chunk!r}"


def check_bernoulli_support(subject: Subject, cfg: OracleCheckConfig) -> None:
    """A declared ``bernoulli_support``: on every path the support counts are integers in [0, n]
    (sums of n bits; the engine's boundary already refuses fractional ones) and the estimate
    carries the declaration to the post-processors (ibu).

    The law of those bits is tested elsewhere: their probabilities p*/q* against the output table
    (``check_output_table_support``), the counts' mean and Binomial-sum variance by simulation
    (``check_unbiased_*``, ``check_variance_*``: V-exact is the variance of a sum of such bits).
    """
    counts = _truth(cfg)
    n = int(counts.sum())
    for eps in cfg.epsilons:
        o = subject.oracle(cfg.d, eps)
        if not o.tags().bernoulli_support:
            raise CheckSkipped(f"{subject.label} does not declare bernoulli_support (its tags)")
        for path in _paths(o):
            where = _where(subject, path=path, epsilon=eps)
            est = _simulate(o, counts, _rng(cfg, "bernoulli", path, eps), path)
            c = np.asarray(est.support_counts)
            assert np.all(np.isfinite(c)) and np.array_equal(c, np.round(c)), (
                f"{where}: bernoulli_support is declared, so support counts must be integers (sums of bits), "
                f"got {_fmt(c)}{_nonfinite(c)}"
            )
            assert np.all((c >= 0) & (c <= n)), f"{where}: support counts outside [0, n={n}]: {_fmt(c)}"
            assert est.bernoulli_support, f"{where}: the estimate does not carry the declared bernoulli_support"


def check_reproducible(subject: Subject, cfg: OracleCheckConfig) -> None:
    """The same seed gives the same output on both paths."""
    counts = _truth(cfg)
    o = subject.oracle(cfg.d, cfg.epsilons[0])
    for path in _paths(o):
        a = _simulate(o, counts, np.random.default_rng(cfg.seed), path)
        b = _simulate(o, counts, np.random.default_rng(cfg.seed), path)
        assert np.array_equal(a.support_counts, b.support_counts), (
            f"{_where(subject, path=path)}: the same seed gave different support counts: "
            f"{_fmt(a.support_counts)} and {_fmt(b.support_counts)}"
        )


def check_no_global_random_state(subject: Subject, cfg: OracleCheckConfig) -> None:
    """Nothing draws from (or reseeds) numpy's or the stdlib's global random state."""
    counts = _truth(cfg)
    before = _global_state()
    o = subject.oracle(cfg.d, cfg.epsilons[0])
    for path in _paths(o):
        _simulate(o, counts, _rng(cfg, "global"), path)
    small = subject.oracle(min(cfg.table_domains), cfg.epsilons[0])
    if small.tags().output_table:
        small.output_table()
    assert _same_state(before, _global_state()), (
        f"{subject.label}: the global random state changed; plugins must draw only from the "
        f"numpy.random.Generator they are given"
    )


def check_tags(subject: Subject, cfg: OracleCheckConfig) -> None:
    """The declared tags() are an OracleTags backed by what the class implements, consistent with
    each other, and the support matrix (when declared) agrees with support_counts()."""
    rng = _rng(cfg, "tags")
    for d in sorted({min(cfg.table_domains), cfg.d}):
        o = subject.oracle(d, cfg.epsilons[0])
        where = _where(subject, d=d, epsilon=cfg.epsilons[0])
        tags = o.tags()
        assert isinstance(tags, OracleTags), f"{where}: tags() must return an OracleTags, got {type(tags).__name__}"
        cls = type(o)
        finite_methods = [
            m
            for m in ("channel", "report_histogram", "support_counts_from_histogram")
            if not implements(cls, Oracle, m)
        ]
        claims = {
            "aggregate": tags.aggregate
            and not (
                implements(cls, Oracle, "sample_support_counts")
                or (tags.aggregate_histogram and implements(cls, Oracle, "sample_report_histogram"))
            ),
            "finite_output": tags.finite_output and bool(finite_methods),
            "aggregate_histogram": tags.aggregate_histogram
            and not (tags.finite_output and implements(cls, Oracle, "sample_report_histogram")),
            "output_table": tags.output_table and not implements(cls, Oracle, "output_table"),
            "output_rows": tags.output_rows and not (tags.output_table and implements(cls, Oracle, "output_rows")),
            "support_matrix": tags.support_matrix and not implements(cls, Oracle, "support_matrix"),
            # a biased oracle must say how: its exact mean
            "unbiased=False": not tags.unbiased and not implements(cls, Oracle, "expected_estimate"),
        }
        wrong = [k for k, bad in claims.items() if bad]
        assert not wrong, f"{where}: tags() declare {', '.join(wrong)} without the methods behind them"
        if tags.unbiased:
            f = rng.dirichlet(np.ones(d))
            assert np.allclose(np.asarray(o.expected_estimate(f), dtype=float), f, rtol=1e-12, atol=1e-15), (
                f"{where}: tags() declare the oracle unbiased, but expected_estimate(f) is not f: "
                f"{_vs(o.expected_estimate(f), f)}"
            )
        if tags.finite_output:
            ch = o.channel()
            assert isinstance(ch, Channel) and ch.n_items == d, (
                f"{where}: finite_output is declared but channel() is not a Channel over {d} items"
            )
        chunk = tags.chunk_users
        assert chunk is None or (isinstance(chunk, (int, np.integer)) and not isinstance(chunk, bool) and chunk >= 1), (
            f"{where}: the chunk_users tag must be None or a positive int, got {chunk!r}"
        )
        assert isinstance(tags.exact_aggregate, bool), f"{where}: exact_aggregate must be a bool"
        if tags.support_matrix:
            values = rng.integers(0, d, size=50)
            reports = o.perturb(_items(values), rng)
            M = np.asarray(o.support_matrix(reports))
            assert M.shape == (values.size, d) and M.dtype == bool, (
                f"{where}: support_matrix must be a boolean ({values.size}, {d}) array, got {M.dtype} {M.shape}"
            )
            assert np.array_equal(M.sum(axis=0), np.asarray(o.support_counts(reports))), (
                f"{where}: support_matrix(reports) summed over users != support_counts(reports): "
                f"{_vs(M.sum(axis=0), o.support_counts(reports))}"
            )


#: The tags a check needs; without them it is not applicable (and pytest does not collect it).
_ORACLE_NEEDS: dict[Callable[..., None], tuple[str, ...]] = {
    check_output_table_ldp: ("output_table",),
    check_reports_follow_table: ("output_table",),
    check_output_table_support: ("output_table", "unbiased"),
    check_output_table_moments: ("output_table", "biased"),
    check_channel: ("finite_output",),
    check_bernoulli_support: ("bernoulli_support",),
    check_exact_law_aggregate: ("aggregate", "exact_aggregate", "output_table"),
    check_exact_law_per_user: ("output_table",),
    # Real-valued reports without a table (SHE) have no support law to test: moments are tested.
    check_perturb_follows_output_table: ("support_law",),
    check_unbiased_aggregate: ("aggregate", "unbiased"),
    check_declared_mean_aggregate: ("aggregate", "biased"),
    check_variance_aggregate: ("aggregate",),
    check_unbiased_per_user: ("unbiased",),
    check_declared_mean_per_user: ("biased",),
}


#: The oracle checks, in the order they run.
CHECKS: tuple[Callable[[Subject, OracleCheckConfig], None], ...] = (
    check_constants,
    check_tags,
    check_estimate_fields,
    check_output_table_ldp,
    check_reports_follow_table,
    check_output_table_support,
    check_output_table_moments,
    check_perturb_follows_output_table,
    check_channel,
    check_exact_law_aggregate,
    check_exact_law_per_user,
    check_unbiased_aggregate,
    check_declared_mean_aggregate,
    check_variance_aggregate,
    check_unbiased_per_user,
    check_declared_mean_per_user,
    check_variance_per_user,
    check_chunks,
    check_bernoulli_support,
    check_reproducible,
    check_no_global_random_state,
)
#: Their configuration (:class:`OracleCheckConfig`).
CONFIG = OracleCheckConfig


def applies(check: Callable[..., None], subject: Subject, cfg: OracleCheckConfig) -> bool:
    """Whether ``check`` concerns the oracle at all, read from its declared tags (pytest collects
    only those: OUE has no finite channel). Run directly, such a check is "not applicable"."""
    return not missing(check, subject, cfg)


#: How :func:`missing` names a need the oracle lacks (its tag, or what the tags imply).
_NEED_TEXT = {
    "aggregate": "tags().aggregate",
    "exact_aggregate": "tags().exact_aggregate",
    "finite_output": "tags().finite_output",
    "output_table": "tags().output_table",
    "bernoulli_support": "tags().bernoulli_support",
    "support_law": "a support law (tags().output_table, or counts that are not real-valued)",
    "unbiased": "tags().unbiased = True",
    "biased": "an oracle declared biased (tags().unbiased = False)",
}


def missing(check: Callable[..., None], subject: Subject, cfg: OracleCheckConfig) -> list[str]:
    """What ``check`` needs from the oracle's declared tags and does not get (empty: it applies)."""
    tags = subject.oracle(min(cfg.table_domains), cfg.epsilons[0]).tags()
    have = {
        "aggregate": tags.aggregate,
        "exact_aggregate": tags.exact_aggregate,
        "finite_output": tags.finite_output,
        "output_table": tags.output_table,
        "bernoulli_support": tags.bernoulli_support,
        "support_law": tags.output_table or not tags.real_valued_counts,
        "unbiased": tags.unbiased,
        "biased": not tags.unbiased,
    }
    return [_NEED_TEXT[n] for n in _ORACLE_NEEDS.get(check, ()) if not have[n]]
