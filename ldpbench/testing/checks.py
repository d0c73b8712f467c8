"""The plugin conformance kit: named checks every oracle and post-processor must pass.

Shaped like scikit-learn's ``check_estimator``: :func:`oracle_checks` / :func:`postprocessor_checks`
yield ``(check_name, check)`` pairs (``check()`` raises ``AssertionError`` with a readable message);
:func:`check_oracle` / :func:`check_postprocessor` run them all; :func:`parametrize_with_checks`
turns a list of plugins into a ``pytest.mark.parametrize`` with readable ids. A plugin that knowingly
fails a check lists it in ``expected_failed_checks={"check_name": "reason"}`` instead of skipping
silently.

What the oracle checks establish (acceptance.md §A1-A7, §B1-B2, at sizes that run in seconds):

- the constants (0 <= q* < p* <= 1), the generic estimate ``(c/n - q*)/(p* - q*)`` and the exact
  variance formula (V-exact);
- the exact epsilon-LDP of :meth:`~ldpbench.types.Oracle.output_table` (every likelihood ratio at
  most ``e^eps (1 + 1e-12)``, the bound attained unless the tags say ``attains_epsilon = False``,
  each conditional law summing to 1) and p*, q* read off the table;
- for an oracle whose tags declare ``real_valued_counts`` (SHE), its sums checked as finite floats
  and its estimate carrying no p*/q*; its variance is tested by simulation only;
- that ``perturb`` follows the table (Pearson chi-square of the reports' table rows when the oracle
  declares ``output_rows``, else binomial tests of its support counts) and, for finite-output
  oracles, that ``channel()`` is the law of the reports;
- both simulation paths against the **exact law** of the support counts (and of the report
  histogram) for a tiny population, enumerated from the table;
- unbiasedness (Z-test) and the variance formula (variance ratio and per-value chi-square bounds)
  by repeated simulation on both paths;
- hygiene: no global random state touched, same seed => same output, empty and one-user chunks,
  the :class:`~ldpbench.types.Estimate` fields filled;
- that the oracle's declared :meth:`~ldpbench.types.Oracle.tags` are backed by what it implements.

Every simulation goes through the engine's own :func:`ldpbench.simulate.simulate`, and which
optional parts are exercised is read from the oracle's tags only, as the engine does: a check that
needs a capability the oracle does not declare (an aggregate path, a finite output, an output
table) is *not applicable* (:class:`CheckSkipped`, reported as such), never silently passed, and
the spec validator refuses specs that would need it.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import random
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ldpbench.errors import LdpbenchError
from ldpbench.params import resolve
from ldpbench.simulate import aggregate_draw, simulate
from ldpbench.types import Channel, Estimate, Oracle, OracleTags, PostProcessor, implements

from . import stats
from .raised import describe_exception

__all__ = [
    "CheckSkipped",
    "OracleCheckConfig",
    "PostprocessorCheckConfig",
    "check_oracle",
    "check_postprocessor",
    "oracle_checks",
    "parametrize_with_checks",
    "postprocessor_checks",
]


class CheckSkipped(Exception):
    """Raised by a check that does not apply to the plugin: it needs a capability the plugin's
    tags do not declare (e.g. no aggregate path). Reported as "not applicable"."""


# ----------------------------------------------------------------------------------------------
# The plugin under test
# ----------------------------------------------------------------------------------------------


@dataclass
class Subject:
    """A plugin class plus its parameters, able to build instances; caches shared simulations."""

    kind: str
    name: str
    cls: type
    params: dict[str, Any] = field(default_factory=dict)
    plugins: Any = None
    cache: dict[Any, Any] = field(default_factory=dict, repr=False)

    @property
    def label(self) -> str:
        if not self.params:
            return self.name
        return f"{self.name}({','.join(f'{k}={v}' for k, v in sorted(self.params.items()))})"

    def __repr__(self) -> str:
        return self.label

    def _values(self) -> dict[str, Any]:
        values = resolve(self.cls.params, self.params, owner=f"{self.kind} '{self.name}'").values
        for p in self.cls.params:
            if p.plugin_kind and isinstance(values.get(p.name), str):
                values[p.name] = self.get_plugins().create(p.plugin_kind, values[p.name])
        return values

    def get_plugins(self) -> Any:
        if self.plugins is None:
            from ldpbench.pluginmanager import build_plugins

            self.plugins = build_plugins()
        return self.plugins

    def oracle(self, d: int, epsilon: float) -> Oracle:
        return self.cls(d=d, epsilon=epsilon, **self._values())

    def postprocessor(self) -> PostProcessor:
        return self.cls(**self._values())


def _subject(obj: Any, plugins: Any = None, params: Mapping[str, Any] | None = None, kind: str | None = None) -> Subject:
    """Resolve a name, a class, an instance, or ``(any of those, params)`` to a :class:`Subject`."""
    if isinstance(obj, Subject):
        return obj
    if isinstance(obj, tuple) and len(obj) == 2 and isinstance(obj[1], Mapping):
        return _subject(obj[0], plugins, {**dict(obj[1]), **dict(params or {})}, kind)
    params = dict(params or {})
    if isinstance(obj, str):
        if plugins is None:
            from ldpbench.pluginmanager import build_plugins

            plugins = build_plugins()
        kinds = [kind] if kind else ["oracle", "postprocessor"]
        found = [k for k in kinds if obj in plugins.registry(k)]
        if not found:
            other = [k for k in ("oracle", "postprocessor") if k not in kinds and obj in plugins.registry(k)]
            if other:
                raise TypeError(f"{obj!r} is a {other[0]}, not a {kinds[0]}")
            raise ValueError(f"no {' or '.join(kinds)} plugin named {obj!r}")
        if len(found) > 1:
            raise ValueError(f"{obj!r} names both an oracle and a post-processor: pass the class instead")
        return Subject(found[0], obj, plugins.get(found[0], obj).cls, params, plugins)
    if isinstance(obj, (Oracle, PostProcessor)):
        return _subject(type(obj), plugins, {**obj.get_params(), **params}, kind)
    if isinstance(obj, type) and issubclass(obj, Oracle):
        return Subject("oracle", obj.name or obj.__name__, obj, params, plugins)
    if isinstance(obj, type) and issubclass(obj, PostProcessor):
        return Subject("postprocessor", obj.name or obj.__name__, obj, params, plugins)
    raise TypeError(f"cannot check {obj!r}: give a plugin name, an Oracle/PostProcessor class or instance")


# ----------------------------------------------------------------------------------------------
# Shared machinery
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OracleCheckConfig:
    """Sizes of the oracle checks (defaults run in a few seconds per oracle)."""

    d: int = 16  #: domain of the repeated-simulation checks
    epsilons: tuple[float, ...] = (0.5, 1.0, 4.0)
    seed: int = 0
    n: int = 3000  #: users per simulated trial
    trials: int = 200  #: trials of the unbiasedness / variance checks
    table_domains: tuple[int, ...] = (2, 3)  #: domains of the exact output-table audit
    law_samples: int = 5000  #: draws of the exact-law tests (acceptance B2 uses 200,000)
    law_counts: tuple[int, ...] = (2, 1, 1)  #: the tiny population of the exact-law tests


def _rng(cfg: Any, *key: Any) -> np.random.Generator:
    """A stream keyed by the config seed and the check's identity (never by run order)."""
    words = [int(cfg.seed)] + [sum(ord(c) * 31**i for i, c in enumerate(str(k))) % (2**32) for k in key]
    return np.random.default_rng(np.random.SeedSequence(words))


def _simulate(oracle: Oracle, counts: np.ndarray, rng: np.random.Generator, path: str) -> Estimate:
    """One trial through the engine's :func:`~ldpbench.simulate.simulate`; the per-user path walks
    the users in three chunks, so summing over chunks is exercised too."""
    n = int(np.sum(counts))
    return simulate(oracle, counts, rng, path, chunk_users=max(1, -(-n // 3)) if path == "per-user" else None)


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
        raise AssertionError(
            f"{where}: tags() declare output_table, but output_table() is not implemented"
        ) from None
    P, S = np.asarray(P, dtype=float), np.asarray(S).astype(bool)
    d = oracle.d
    assert P.ndim == 2 and P.shape[1] == d, f"{where}: output_table P must be (n_outputs, {d}), got {P.shape}"
    assert S.shape == P.shape, f"{where}: output_table S has shape {S.shape}, P has {P.shape}"
    return P, S


def _where(subject: Subject, **ctx: Any) -> str:
    return f"{subject.label} (" + ", ".join(f"{k}={v}" for k, v in ctx.items()) + ")"


# ----------------------------------------------------------------------------------------------
# Oracle checks
# ----------------------------------------------------------------------------------------------


def check_constants(subject: Subject, cfg: OracleCheckConfig) -> None:
    """p*, q* valid; estimate = (c/n - q*)/(p* - q*); variance = (V-exact); noise variance = (V-approx)."""
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
        assert np.allclose(f, want, rtol=1e-12, atol=1e-12), f"{where}: estimate() is not (c/n - q*)/(p* - q*)"
        assert np.allclose(est.counts, n * want, rtol=1e-12, atol=1e-9), f"{where}: count scale != n x fraction"
        truth = rng.dirichlet(np.ones(cfg.d))
        got = np.asarray(o.variance(n, truth), dtype=float)
        if o.tags().real_valued_counts:
            # Real-valued reports (SHE): p*, q* are expected contributions, not support
            # probabilities, so (V-exact) does not apply; the repeated simulations check the variance.
            assert got.shape == (cfg.d,) and np.all(np.isfinite(got)) and np.all(got > 0), (
                f"{where}: variance(n, f) must be {cfg.d} finite positive numbers"
            )
            noise = o.noise_variance(n)
            assert math.isfinite(noise) and noise > 0, f"{where}: noise_variance(n) must be finite and positive"
            continue
        exact = (q * (1 - q) + truth * (p - q) * (1 - p - q)) / (n * (p - q) ** 2)
        assert np.allclose(got, exact, rtol=1e-12, atol=0), (
            f"{where}: variance(n, f) differs from (V-exact) [q*(1-q*) + f (p*-q*)(1-p*-q*)]/(n (p*-q*)^2): "
            f"max relative error {np.max(np.abs(got / exact - 1)):.3g}"
        )
        approx = q * (1 - q) / (n * (p - q) ** 2)
        assert math.isclose(o.noise_variance(n), approx, rel_tol=1e-12), f"{where}: noise_variance != (V-approx)"


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
        assert f.shape == (cfg.d,) and np.all(np.isfinite(f)), f"{where}: frequencies must be {cfg.d} finite numbers"
        assert est.n == n, f"{where}: Estimate.n = {est.n}, expected {n}"
        assert est.epsilon == eps, f"{where}: Estimate.epsilon = {est.epsilon}, expected {eps}"
        real = o.tags().real_valued_counts
        if real:
            assert est.p_star is None and est.q_star is None, (
                f"{where}: an oracle with real-valued sums is not pure: its Estimate must carry no p*/q*"
            )
        else:
            assert est.p_star == o.p_star and est.q_star == o.q_star, (
                f"{where}: Estimate p*/q* differ from the oracle's"
            )
        assert est.mechanism, f"{where}: Estimate.mechanism is empty"
        var = None if est.variance is None else np.asarray(est.variance, dtype=float)
        assert var is not None and var.shape == (cfg.d,), f"{where}: Estimate.variance must have length {cfg.d}"
        assert np.all(np.isfinite(var)) and np.all(var >= 0), f"{where}: Estimate.variance must be finite, >= 0"
        sc = None if est.support_counts is None else np.asarray(est.support_counts)
        assert sc is not None and sc.shape == (cfg.d,), f"{where}: Estimate.support_counts must have length {cfg.d}"
        if real:
            assert np.all(np.isfinite(sc)), f"{where}: support sums must be finite"
        else:
            assert np.all((sc >= 0) & (sc <= n)), f"{where}: support counts must lie in [0, n]"
        if o.tags().finite_output and (path == "per-user" or o.tags().aggregate_histogram):
            assert est.report_histogram is not None and est.channel is not None, (
                f"{where}: a finite-output estimate must carry its report histogram and channel"
            )
            hist = np.asarray(est.report_histogram)
            assert int(hist.sum()) == n, f"{where}: the report histogram sums to {hist.sum()}, not n = {n}"


def check_output_table_ldp(subject: Subject, cfg: OracleCheckConfig) -> None:
    """Exact epsilon-LDP: P(y|v) <= e^eps (1 + 1e-12) P(y|v') for all y, v, v'; bound attained; laws sum to 1;
    then every likelihood ratio at d = 2..8 (while the table is enumerable) and over sampled declared
    parameters (:func:`ldpbench.audit.exact.exact_audit`)."""
    for d in cfg.table_domains:
        for eps in cfg.epsilons:
            o = subject.oracle(d, eps)
            where = _where(subject, d=d, epsilon=eps)
            P, _ = _table(o, where)
            assert np.all(P >= 0), f"{where}: negative probabilities in output_table"
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
    from ldpbench.audit.exact import DEFAULT_DOMAINS, exact_audit

    audit = exact_audit(
        subject.cls,
        cfg.epsilons,
        values=subject._values(),
        fixed=tuple(subject.params),
        domains=tuple(sorted(set(cfg.table_domains) | set(DEFAULT_DOMAINS))),
        seed=cfg.seed,
    )
    assert audit.passed, (
        f"{subject.label}: not epsilon-LDP ({len(audit.failures)} of {len(audit.findings)} tables): "
        f"{audit.failures[0].describe()}"
    )


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


def check_perturb_follows_output_table(subject: Subject, cfg: OracleCheckConfig) -> None:
    """perturb() draws from output_table(): chi-square of the table rows (or binomial tests of the
    support counts when the oracle has no ``output_rows`` hook); support_counts agrees with the table."""
    d = max(cfg.table_domains)
    m = cfg.law_samples
    for eps in cfg.epsilons:
        o = subject.oracle(d, eps)
        tags = o.tags()
        if tags.real_valued_counts and not tags.output_table:
            raise CheckSkipped(f"{subject.label} has real-valued reports and no output table: there is no "
                               "support law to test (the repeated simulations test its moments)")
        # Without a table (or without output_rows) the support counts' binomial laws are still tested.
        P, S = _table(o, _where(subject, d=d, epsilon=eps)) if tags.output_table else (None, None)
        for v in range(d):
            where = _where(subject, d=d, epsilon=eps, item=v)
            reports = o.perturb(np.full(m, v, dtype=np.int64), _rng(cfg, "follows", eps, v))
            support = np.asarray(o.support_counts(reports))
            if tags.output_table and tags.output_rows:
                rows = np.asarray(o.output_rows(reports), dtype=np.int64)
                assert rows.shape == (m,), f"{where}: output_rows must give one row per report"
                law = {(int(y),): float(P[y, v]) for y in range(P.shape[0]) if P[y, v] > 0}
                stats.exact_distribution_test(rows[:, None], law, label=f" of the reports, {where}").check()
                want = S[rows].sum(axis=0)
                assert np.array_equal(support, want), (
                    f"{where}: support_counts(reports) = {support.tolist()} but the table's supports of the "
                    f"same reports give {want.tolist()}"
                )
            else:
                probs = np.where(np.arange(d) == v, o.p_star, o.q_star)
                sd = np.sqrt(m * probs * (1 - probs))
                z = (support - m * probs) / np.where(sd > 0, sd, 1)
                assert np.all(np.abs(z) <= stats.Z_LIMIT), (
                    f"{where}: support counts {support.tolist()} of {m} reports are off p*/q* (max |z| = "
                    f"{np.abs(z).max():.2f})"
                )


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
        assert np.all(A >= 0) and np.allclose(A.sum(axis=0), 1, atol=1e-12), f"{where}: columns must be laws"
        rng = _rng(cfg, "channel", eps)
        theta, w = rng.random(d), rng.random(ch.n_reports)
        assert np.allclose(ch.forward(theta), A @ theta, atol=1e-12), f"{where}: forward != dense @ theta"
        assert np.allclose(ch.backward(w), A.T @ w, atol=1e-12), f"{where}: backward != dense.T @ w"
        for v in range(d):
            reports = o.perturb(np.full(m, v, dtype=np.int64), rng)
            hist = np.asarray(o.report_histogram(reports))
            assert hist.shape == (ch.n_reports,) and int(hist.sum()) == m, f"{where}: bad report histogram"
            law = {(y,): float(A[y, v]) for y in range(ch.n_reports) if A[y, v] > 0}
            samples = np.repeat(np.arange(ch.n_reports), hist)[:, None]
            stats.exact_distribution_test(samples, law, label=f" of reports vs channel, {where}, item {v}").check()
            via_hist = np.asarray(o.support_counts_from_histogram(hist))
            assert np.array_equal(via_hist, np.asarray(o.support_counts(reports))), (
                f"{where}: support_counts_from_histogram(report_histogram(r)) != support_counts(r)"
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
    enumerated from output_table() (channel()) for a tiny population (acceptance B2). Draws go
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
            rows = np.asarray(o.output_rows(o.perturb(np.tile(values, m), rng)), dtype=np.int64)
            draws = S[rows].reshape(m, n, d).sum(axis=1)
        else:
            m = max(1000, cfg.law_samples // 5)
            draws = np.array([np.asarray(o.support_counts(o.perturb(values, rng))) for _ in range(m)])
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


def _unbiased(subject: Subject, cfg: OracleCheckConfig, path: str) -> None:
    counts = _truth(cfg)
    n = int(counts.sum())
    for eps, est in _trial_estimates(subject, cfg, path).items():
        o = subject.oracle(cfg.d, eps)
        where = _where(subject, d=cfg.d, n=n, epsilon=eps, path=path, trials=cfg.trials)
        stats.z_test(est, counts / n, o.variance(n, counts / n), label=f", {where}").check()


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
    _unbiased(subject, cfg, "aggregate")


def check_variance_aggregate(subject: Subject, cfg: OracleCheckConfig) -> None:
    """Aggregate path: sample variances match variance(n, f) (ratio and per-value chi-square bounds)."""
    _variance(subject, cfg, "aggregate")


def check_unbiased_per_user(subject: Subject, cfg: OracleCheckConfig) -> None:
    """Per-user path (users in several chunks): unbiased (max |z| <= 5.5)."""
    _unbiased(subject, cfg, "per-user")


def check_variance_per_user(subject: Subject, cfg: OracleCheckConfig) -> None:
    """Per-user path: sample variances match variance(n, f)."""
    _variance(subject, cfg, "per-user")


def check_chunks(subject: Subject, cfg: OracleCheckConfig) -> None:
    """Any chunk of users works: empty and one-user chunks, integer support counts of length d."""
    o = subject.oracle(cfg.d, cfg.epsilons[0])
    where = _where(subject, d=cfg.d, epsilon=cfg.epsilons[0])
    rng = _rng(cfg, "chunks")
    empty = np.asarray(o.support_counts(o.perturb(np.zeros(0, dtype=np.int64), rng)))
    assert empty.shape == (cfg.d,) and not empty.any(), f"{where}: an empty chunk must give zero support counts"
    one = np.asarray(o.support_counts(o.perturb(np.array([cfg.d - 1]), rng)))
    if o.tags().real_valued_counts:
        assert empty.dtype.kind in "iuf", f"{where}: support sums must be real numbers, got dtype {empty.dtype}"
        assert one.shape == (cfg.d,) and np.all(np.isfinite(one)), f"{where}: one user's sums must be finite"
    else:
        assert empty.dtype.kind in "iu", f"{where}: support counts must be integers, got dtype {empty.dtype}"
        assert one.shape == (cfg.d,) and np.all((one >= 0) & (one <= 1)), (
            f"{where}: one user supports each value 0/1 times"
        )
    if o.tags().finite_output:
        hist = np.asarray(o.report_histogram(o.perturb(np.zeros(0, dtype=np.int64), rng)))
        assert hist.shape == (o.channel().n_reports,) and not hist.any(), f"{where}: empty chunk histogram"
    chunk = o.tags().chunk_users
    if chunk is not None:
        assert int(chunk) == chunk and chunk >= 1, f"{where}: chunk_users must be a positive int, got {chunk!r}"


def check_reproducible(subject: Subject, cfg: OracleCheckConfig) -> None:
    """The same seed gives the same output on both paths."""
    counts = _truth(cfg)
    o = subject.oracle(cfg.d, cfg.epsilons[0])
    for path in _paths(o):
        a = _simulate(o, counts, np.random.default_rng(cfg.seed), path)
        b = _simulate(o, counts, np.random.default_rng(cfg.seed), path)
        assert np.array_equal(a.support_counts, b.support_counts), (
            f"{_where(subject, path=path)}: the same seed gave different support counts"
        )


def _global_state() -> tuple[Any, ...]:
    state = np.random.get_state()
    return (state[0], state[1].copy(), *state[2:], random.getstate())


def _same_state(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    return a[0] == b[0] and np.array_equal(a[1], b[1]) and a[2:] == b[2:]


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
        finite_methods = [m for m in ("channel", "report_histogram", "support_counts_from_histogram")
                          if not implements(cls, Oracle, m)]
        claims = {
            "aggregate": tags.aggregate and not (
                implements(cls, Oracle, "sample_support_counts")
                or (tags.aggregate_histogram and implements(cls, Oracle, "sample_report_histogram"))
            ),
            "finite_output": tags.finite_output and bool(finite_methods),
            "aggregate_histogram": tags.aggregate_histogram and not (
                tags.finite_output and implements(cls, Oracle, "sample_report_histogram")
            ),
            "output_table": tags.output_table and not implements(cls, Oracle, "output_table"),
            "output_rows": tags.output_rows and not (tags.output_table and implements(cls, Oracle, "output_rows")),
            "support_matrix": tags.support_matrix and not implements(cls, Oracle, "support_matrix"),
        }
        wrong = [k for k, bad in claims.items() if bad]
        assert not wrong, f"{where}: tags() declare {', '.join(wrong)} without the methods behind them"
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
            reports = o.perturb(values, rng)
            M = np.asarray(o.support_matrix(reports))
            assert M.shape == (values.size, d) and M.dtype == bool, (
                f"{where}: support_matrix must be a boolean ({values.size}, {d}) array, got {M.dtype} {M.shape}"
            )
            assert np.array_equal(M.sum(axis=0), np.asarray(o.support_counts(reports))), (
                f"{where}: support_matrix(reports) summed over users != support_counts(reports)"
            )


#: The tags a check needs; without them it is not applicable (and pytest does not collect it).
_ORACLE_NEEDS: dict[Callable[..., None], tuple[str, ...]] = {
    check_output_table_ldp: ("output_table",),
    check_output_table_support: ("output_table",),
    check_channel: ("finite_output",),
    check_exact_law_aggregate: ("aggregate", "exact_aggregate", "output_table"),
    check_exact_law_per_user: ("output_table",),
    check_unbiased_aggregate: ("aggregate",),
    check_variance_aggregate: ("aggregate",),
}


ORACLE_CHECKS: tuple[Callable[[Subject, OracleCheckConfig], None], ...] = (
    check_constants,
    check_tags,
    check_estimate_fields,
    check_output_table_ldp,
    check_output_table_support,
    check_perturb_follows_output_table,
    check_channel,
    check_exact_law_aggregate,
    check_exact_law_per_user,
    check_unbiased_aggregate,
    check_variance_aggregate,
    check_unbiased_per_user,
    check_variance_per_user,
    check_chunks,
    check_reproducible,
    check_no_global_random_state,
)


# ----------------------------------------------------------------------------------------------
# Post-processor checks
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PostprocessorCheckConfig:
    """Sizes of the post-processor checks."""

    d: int = 16
    epsilons: tuple[float, ...] = (1.0, 4.0)
    seed: int = 0
    n: int = 5000
    #: oracles whose estimates are fed in; ``None`` = every oracle of the ldpbench distribution
    oracles: tuple[str, ...] | None = None


def _inputs(subject: Subject, cfg: PostprocessorCheckConfig) -> list[tuple[str, Estimate]]:
    """Estimates from every built-in oracle (aggregate path) plus a hand-built one, cached."""
    key = ("inputs", cfg)
    if key in subject.cache:
        return subject.cache[key]
    plugins = subject.get_plugins()
    names = cfg.oracles
    if names is None:
        names = tuple(i.name for i in plugins.registry("oracle") if i.origin.distribution == "ldpbench")
    rng = np.random.default_rng(np.random.SeedSequence([int(cfg.seed), 11]))
    weights = 1.0 / np.arange(1, cfg.d + 1) ** 1.1
    counts = rng.multinomial(cfg.n, weights / weights.sum())
    out = []
    for name in names:
        for eps in cfg.epsilons:
            o = plugins.create("oracle", name, d=cfg.d, epsilon=eps)
            path = "aggregate" if o.tags().aggregate else "per-user"
            out.append((f"{name}, epsilon={eps}", _simulate(o, counts, rng, path)))
    # A bare estimate: only the fields every oracle fills (no support counts, histogram or channel).
    p, q = 0.5, 1 / (math.e + 1)
    f = counts / cfg.n + rng.normal(0, 0.02, cfg.d)
    out.append(
        (
            "hand-built (OUE constants, no histogram)",
            Estimate(
                frequencies=f,
                n=cfg.n,
                epsilon=1.0,
                mechanism="hand-built",
                p_star=p,
                q_star=q,
                variance=np.full(cfg.d, q * (1 - q) / (cfg.n * (p - q) ** 2)),
            ),
        )
    )
    subject.cache[key] = out
    return out


@dataclass
class _Applied:
    """One pass of apply() over every input: outputs (or the error declining the input), and
    what the pass did to the inputs and to the global random state."""

    results: list[tuple[str, Estimate, Any]]
    mutated: list[str]
    global_state_changed: bool


def _apply_pass(
    subject: Subject, cfg: PostprocessorCheckConfig, seed: int, only: Iterable[str] | None = None
) -> _Applied:
    inputs = _inputs(subject, cfg)
    if only is not None:
        keep = set(only)
        inputs = [(label, est) for label, est in inputs if label in keep]
    results, mutated = [], []
    before_state = _global_state()
    for label, est in inputs:
        before = _snapshot(est)
        pp = subject.postprocessor()
        try:
            out: Any = pp.apply(est, np.random.default_rng(seed))
        except LdpbenchError as exc:
            out = exc
        after = _snapshot(est)
        for name, arr in before.items():
            if not np.array_equal(arr, after[name], equal_nan=arr.dtype.kind == "f"):
                mutated.append(f"{label}: {name}")
        results.append((label, est, out))
    return _Applied(results, mutated, not _same_state(before_state, _global_state()))


def _applied(subject: Subject, cfg: PostprocessorCheckConfig) -> _Applied:
    key = ("applied", cfg)
    if key not in subject.cache:
        subject.cache[key] = _apply_pass(subject, cfg, seed=0)
    return subject.cache[key]


def _accepted(subject: Subject, cfg: PostprocessorCheckConfig) -> list[tuple[str, Estimate, Estimate]]:
    results = _applied(subject, cfg).results
    accepted = [r for r in results if not isinstance(r[2], LdpbenchError)]
    assert accepted, f"{subject.label} declined every input: " + "; ".join(
        f"{label}: {out}" for label, _, out in results
    )
    return accepted


def check_pp_returns_estimate(subject: Subject, cfg: PostprocessorCheckConfig) -> None:
    """Returns an Estimate of the right length with finite values, on estimates of every built-in oracle.

    A post-processor may decline an input it cannot use (e.g. EM without a report histogram) by
    raising an ``ldpbench.errors`` exception with a clear message; anything else is a failure.
    """
    for label, est, out in _accepted(subject, cfg):
        where = f"{subject.label} on {label}"
        assert isinstance(out, Estimate), f"{where}: apply() returned {type(out).__name__}, not an Estimate"
        f = np.asarray(out.frequencies)
        assert f.shape == np.shape(est.frequencies), f"{where}: output length {f.shape}, input {np.shape(est.frequencies)}"
        assert np.all(np.isfinite(f)), f"{where}: non-finite frequencies in the output"
        if out.variance is not None:
            assert np.shape(out.variance) in ((), f.shape), f"{where}: variance has shape {np.shape(out.variance)}"


def check_pp_keeps_metadata(subject: Subject, cfg: PostprocessorCheckConfig) -> None:
    """Keeps n, epsilon, p*, q* and the item set; appends at most one step name to ``steps``."""
    for label, est, out in _accepted(subject, cfg):
        where = f"{subject.label} on {label}"
        assert out.n == est.n and out.epsilon == est.epsilon, f"{where}: n or epsilon changed"
        assert (out.p_star, out.q_star) == (est.p_star, est.q_star), f"{where}: p*/q* changed"
        same_items = (out.items is None and est.items is None) or (
            out.items is not None and est.items is not None and np.array_equal(out.items, est.items)
        )
        assert same_items, f"{where}: the item set changed"
        assert tuple(out.steps[: len(est.steps)]) == tuple(est.steps), f"{where}: earlier steps were rewritten"
        extra = tuple(out.steps[len(est.steps) :])
        assert len(extra) <= 1 and all(isinstance(s, str) and s for s in extra), (
            f"{where}: a post-processor appends at most one step name, got {extra!r}"
        )
        assert tuple(out.query_transforms[: len(est.query_transforms)]) == tuple(est.query_transforms), (
            f"{where}: earlier query transforms were dropped"
        )


def _snapshot(est: Estimate) -> dict[str, Any]:
    arrays = {
        "frequencies": est.frequencies,
        "variance": est.variance,
        "support_counts": est.support_counts,
        "report_histogram": est.report_histogram,
        "items": est.items,
    }
    return {name: copy.deepcopy(np.asarray(a)) for name, a in arrays.items() if a is not None}


def check_pp_does_not_mutate_input(subject: Subject, cfg: PostprocessorCheckConfig) -> None:
    """The input estimate's arrays are unchanged after apply()."""
    mutated = _applied(subject, cfg).mutated
    assert not mutated, f"{subject.label}: apply() modified its input ({'; '.join(mutated[:5])})"


def check_pp_deterministic(subject: Subject, cfg: PostprocessorCheckConfig) -> None:
    """The same rng seed gives the same output (re-run on the first and the last accepted input)."""
    accepted = _accepted(subject, cfg)
    first = {label: out for label, _, out in (accepted[0], accepted[-1])}
    for label, _, b in _apply_pass(subject, cfg, seed=0, only=first).results:
        a = first[label]
        assert not isinstance(b, LdpbenchError), f"{subject.label} on {label}: declined the second time only"
        assert np.array_equal(a.frequencies, b.frequencies), (
            f"{subject.label} on {label}: two runs with the same seed differ"
        )


def check_pp_no_global_random_state(subject: Subject, cfg: PostprocessorCheckConfig) -> None:
    """apply() draws only from the Generator it is given."""
    assert not _applied(subject, cfg).global_state_changed, (
        f"{subject.label}: the global random state changed during apply()"
    )


def check_pp_info_jsonable(subject: Subject, cfg: PostprocessorCheckConfig) -> None:
    """Estimate.info stays JSON-able (numbers, strings, lists, mappings; numpy scalars allowed)."""

    def default(obj: Any) -> Any:
        if isinstance(obj, np.generic):
            return obj.item()
        if isinstance(obj, np.ndarray):
            return obj.tolist()
        raise TypeError(f"{type(obj).__name__} is not JSON-able")

    for label, _, out in _accepted(subject, cfg):
        try:
            json.dumps(dict(out.info), default=default)
        except (TypeError, ValueError) as exc:
            raise AssertionError(f"{subject.label} on {label}: Estimate.info is not JSON-able: {exc}") from None


def check_pp_query_answers(subject: Subject, cfg: PostprocessorCheckConfig) -> None:
    """A query-time post-processor (``acts_on == "queries"``) implements answer(); answers are finite."""
    if subject.postprocessor().tags().acts_on != "queries":
        raise CheckSkipped(f"{subject.label} acts on the estimate, not on query answers")
    assert subject.cls.answer is not PostProcessor.answer, f"{subject.label}: acts_on='queries' needs answer()"
    rng = np.random.default_rng(cfg.seed)
    for label, _, out in _accepted(subject, cfg):
        sums = rng.normal(0, 0.1, 7)
        got = np.asarray(out.answer(sums))
        assert got.shape == sums.shape and np.all(np.isfinite(got)), (
            f"{subject.label} on {label}: answer() must return finite answers of the same shape"
        )
        items = np.asarray(out.item_answers())
        assert items.shape == np.shape(out.frequencies), f"{subject.label} on {label}: item_answers() length"


POSTPROCESSOR_CHECKS: tuple[Callable[[Subject, PostprocessorCheckConfig], None], ...] = (
    check_pp_returns_estimate,
    check_pp_keeps_metadata,
    check_pp_does_not_mutate_input,
    check_pp_deterministic,
    check_pp_no_global_random_state,
    check_pp_info_jsonable,
    check_pp_query_answers,
)


# ----------------------------------------------------------------------------------------------
# Public entry points
# ----------------------------------------------------------------------------------------------


def oracle_checks(
    oracle: Any,
    *,
    d: int = 16,
    epsilons: Sequence[float] = (0.5, 1.0, 4.0),
    seed: int = 0,
    params: Mapping[str, Any] | None = None,
    plugins: Any = None,
    **sizes: Any,
) -> Iterator[tuple[str, Callable[[], None]]]:
    """Yield ``(check_name, check)`` for an oracle; ``check()`` raises ``AssertionError`` on failure
    (or :class:`CheckSkipped` when it does not apply).

    :param oracle: a registered name (``"olh"``), an :class:`~ldpbench.types.Oracle` subclass or
        instance, or ``(name_or_class, {"g": 2})``.
    :param d: domain of the repeated-simulation checks (the exact audits use d in (2, 3)).
    :param epsilons: budgets to check.
    :param seed: seed of every check's random stream.
    :param params: oracle parameters (validated against the class's declaration).
    :param plugins: a :class:`~ldpbench.pluginmanager.Plugins` (default: ``build_plugins()``).
    :param sizes: further :class:`OracleCheckConfig` fields (``n``, ``trials``, ``law_samples`` ...).
    """
    subject = _subject(oracle, plugins, params, kind="oracle")
    if subject.kind != "oracle":
        raise TypeError(f"{subject.label} is a {subject.kind}, not an oracle")
    cfg = OracleCheckConfig(d=d, epsilons=tuple(float(e) for e in epsilons), seed=seed, **sizes)
    for fn in ORACLE_CHECKS:
        yield fn.__name__, _Check(fn, subject, cfg)


def postprocessor_checks(
    postprocessor: Any,
    *,
    d: int = 16,
    epsilons: Sequence[float] = (1.0, 4.0),
    seed: int = 0,
    params: Mapping[str, Any] | None = None,
    plugins: Any = None,
    **sizes: Any,
) -> Iterator[tuple[str, Callable[[], None]]]:
    """Yield ``(check_name, check)`` for a post-processor (same conventions as :func:`oracle_checks`).

    The inputs are estimates from every oracle of the ldpbench distribution at each epsilon (their
    aggregate path) and a bare hand-built estimate; ``sizes`` may set ``n`` or ``oracles``.
    """
    subject = _subject(postprocessor, plugins, params, kind="postprocessor")
    if subject.kind != "postprocessor":
        raise TypeError(f"{subject.label} is a {subject.kind}, not a post-processor")
    cfg = PostprocessorCheckConfig(d=d, epsilons=tuple(float(e) for e in epsilons), seed=seed, **sizes)
    for fn in POSTPROCESSOR_CHECKS:
        yield fn.__name__, _Check(fn, subject, cfg)


@dataclass(frozen=True)
class _Check:
    """One named check bound to its subject and config (what :func:`oracle_checks` yields)."""

    fn: Callable[[Subject, Any], None]
    subject: Subject
    cfg: Any

    def __call__(self) -> None:
        self.fn(self.subject, self.cfg)


def _applies(check: Callable[[], None]) -> bool:
    """Whether a check concerns its subject at all, read from the subject's declared tags (pytest
    collects only those, so a test run has no skips for checks that can never apply: OUE has no
    finite channel, Norm-Sub no query answers). Run directly, such a check is "not applicable"."""
    if not isinstance(check, _Check):
        return True
    try:
        if check.subject.kind == "postprocessor":
            if check.fn is check_pp_query_answers:
                return check.subject.postprocessor().tags().acts_on == "queries"
            return True
        cfg = check.cfg
        tags = check.subject.oracle(min(cfg.table_domains), cfg.epsilons[0]).tags()
    except Exception:  # noqa: BLE001 - a broken plugin is for the checks themselves to report
        return True
    needs = _ORACLE_NEEDS.get(check.fn, ())
    have = {"aggregate": tags.aggregate, "exact_aggregate": tags.exact_aggregate,
            "finite_output": tags.finite_output, "output_table": tags.output_table}
    return all(have[n] for n in needs)


def _run(checks: Iterable[tuple[str, Callable[[], None]]], expected: Mapping[str, str] | None) -> dict[str, str]:
    expected = dict(expected or {})
    outcome: dict[str, str] = {}
    for name, check in checks:
        try:
            check()
        except CheckSkipped as exc:
            outcome[name] = f"skipped: {exc}"
            continue
        except Exception as exc:  # noqa: BLE001 - a plugin that raises fails the check, like an assertion
            if name in expected:
                outcome[name] = f"expected failure: {expected[name]}"
                continue
            detail = str(exc) if isinstance(exc, AssertionError) else describe_exception(exc)
            raise AssertionError(f"{name} failed: {detail}") from exc
        outcome[name] = "passed" if name not in expected else f"passed unexpectedly (listed: {expected[name]})"
    unknown = set(expected) - set(outcome)
    if unknown:
        raise ValueError(f"expected_failed_checks names unknown checks: {sorted(unknown)}")
    return outcome


def check_oracle(
    oracle: Any,
    *,
    d: int = 16,
    epsilons: Sequence[float] = (0.5, 1.0, 4.0),
    seed: int = 0,
    expected_failed_checks: Mapping[str, str] | None = None,
    plugins: Any = None,
    params: Mapping[str, Any] | None = None,
    **sizes: Any,
) -> dict[str, str]:
    """Run every oracle check; raise ``AssertionError`` naming the first failing check.

    ``expected_failed_checks`` maps check names to the reason they are known to fail; such checks
    still run, and their failure is recorded instead of raised. Returns ``{check: outcome}``.
    """
    checks = oracle_checks(oracle, d=d, epsilons=epsilons, seed=seed, params=params, plugins=plugins, **sizes)
    return _run(checks, expected_failed_checks)


def check_postprocessor(
    postprocessor: Any,
    *,
    d: int = 16,
    epsilons: Sequence[float] = (1.0, 4.0),
    seed: int = 0,
    expected_failed_checks: Mapping[str, str] | None = None,
    plugins: Any = None,
    params: Mapping[str, Any] | None = None,
    **sizes: Any,
) -> dict[str, str]:
    """Run every post-processor check (see :func:`check_oracle`)."""
    checks = postprocessor_checks(
        postprocessor, d=d, epsilons=epsilons, seed=seed, params=params, plugins=plugins, **sizes
    )
    return _run(checks, expected_failed_checks)


def parametrize_with_checks(
    plugins_to_check: Sequence[Any],
    *,
    expected_failed_checks: Callable[[Subject], Mapping[str, str] | None] | Mapping[str, Mapping[str, str]] | None = None,
    plugins: Any = None,
    **config: Any,
) -> Any:
    """A ``pytest.mark.parametrize("plugin, check", ...)`` over every check of every plugin.

    Items are oracle or post-processor names, classes, instances or ``(name, params)`` pairs; ids
    read ``olh(g=2)-check_variance_per_user``. Use it as::

        @parametrize_with_checks(["grr", MyOracle, ("olh", {"g": 2})])
        def test_conformance(plugin, check):
            check()

    ``expected_failed_checks`` is ``{plugin label: {check: reason}}`` or a callable taking the
    subject; those checks are marked ``xfail`` with the reason. ``config`` goes to the checks
    (``d``, ``epsilons``, ``seed``, ``n``, ``trials`` ...; keys that do not apply to a kind are
    dropped).
    """
    import pytest

    oracle_keys = {f.name for f in OracleCheckConfig.__dataclass_fields__.values()}
    pp_keys = {f.name for f in PostprocessorCheckConfig.__dataclass_fields__.values()}
    params = []
    for item in plugins_to_check:
        subject = _subject(item, plugins)
        if expected_failed_checks is None:
            expected: Mapping[str, str] = {}
        elif callable(expected_failed_checks):
            expected = expected_failed_checks(subject) or {}
        else:
            expected = expected_failed_checks.get(subject.label, {})
        if subject.kind == "oracle":
            checks = oracle_checks(subject, **{k: v for k, v in config.items() if k in oracle_keys})
        else:
            checks = postprocessor_checks(subject, **{k: v for k, v in config.items() if k in pp_keys})
        for name, check in checks:
            if not _applies(check):
                continue
            marks = [pytest.mark.xfail(reason=expected[name], strict=False)] if name in expected else []
            params.append(pytest.param(subject, _pytest_check(check), id=f"{subject.label}-{name}", marks=marks))
    return pytest.mark.parametrize("plugin, check", params)


def _pytest_check(check: Callable[[], None]) -> Callable[[], None]:
    """Turn :class:`CheckSkipped` into ``pytest.skip``."""

    @functools.wraps(check)
    def run() -> None:
        import pytest

        try:
            check()
        except CheckSkipped as exc:
            pytest.skip(str(exc))

    return run
