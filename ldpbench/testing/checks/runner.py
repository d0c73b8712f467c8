"""The kit's entry points: enumerate a plugin's checks, run them all, or parametrize pytest with
them; expected failures are listed with their reason, never skipped silently."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ldpbench.boundary.failures import describe_exception
from ldpbench.testing.checks.dataset import DATASET_CHECKS, DatasetCheckConfig
from ldpbench.testing.checks.machinery import CheckSkipped, Subject, _subject
from ldpbench.testing.checks.metric import METRIC_CHECKS, MetricCheckConfig
from ldpbench.testing.checks.oracle import _ORACLE_NEEDS, ORACLE_CHECKS, OracleCheckConfig
from ldpbench.testing.checks.postprocessor import POSTPROCESSOR_CHECKS, PostprocessorCheckConfig, check_pp_query_answers


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
    :param plugins: a :class:`~ldpbench.loading.manager.Plugins` (default: ``build_plugins()``).
    :param sizes: further :class:`OracleCheckConfig` fields (``n``, ``trials``, ``law_samples`` ...).
    """
    cfg = OracleCheckConfig(d=d, epsilons=tuple(float(e) for e in epsilons), seed=seed, **sizes)
    yield from _bound(oracle, "oracle", "an oracle", plugins, params, ORACLE_CHECKS, cfg)


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
    cfg = PostprocessorCheckConfig(d=d, epsilons=tuple(float(e) for e in epsilons), seed=seed, **sizes)
    yield from _bound(postprocessor, "postprocessor", "a post-processor", plugins, params, POSTPROCESSOR_CHECKS, cfg)


def metric_checks(
    metric: Any,
    *,
    d: int = 16,
    epsilons: Sequence[float] = (1.0, 4.0),
    seed: int = 0,
    params: Mapping[str, Any] | None = None,
    plugins: Any = None,
    **sizes: Any,
) -> Iterator[tuple[str, Callable[[], None]]]:
    """Yield ``(check_name, check)`` for a metric (same conventions as :func:`oracle_checks`).

    The metric scores the raw estimates of every oracle of the ldpbench distribution at each
    epsilon on a fixed skewed population of ``d`` items, and the exact estimate; ``sizes`` may set
    ``n`` or ``oracles``.
    """
    cfg = MetricCheckConfig(d=d, epsilons=tuple(float(e) for e in epsilons), seed=seed, **sizes)
    yield from _bound(metric, "metric", "a metric", plugins, params, METRIC_CHECKS, cfg)


def dataset_checks(
    dataset: Any,
    *,
    seed: int = 0,
    params: Mapping[str, Any] | None = None,
    plugins: Any = None,
) -> Iterator[tuple[str, Callable[[], None]]]:
    """Yield ``(check_name, check)`` for a dataset (same conventions as :func:`oracle_checks`)."""
    yield from _bound(dataset, "dataset", "a dataset", plugins, params, DATASET_CHECKS, DatasetCheckConfig(seed=seed))


def _bound(
    plugin: Any,
    kind: str,
    noun: str,
    plugins: Any,
    params: Mapping[str, Any] | None,
    checks: Sequence[Callable[[Subject, Any], None]],
    cfg: Any,
) -> Iterator[tuple[str, Callable[[], None]]]:
    """``(name, check)`` for each of ``checks`` bound to ``plugin`` (which must be of ``kind``)."""
    subject = _subject(plugin, plugins, params, kind=kind)
    if subject.kind != kind:
        raise TypeError(f"{subject.label} is a {subject.kind}, not {noun}")
    for fn in checks:
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
        if check.subject.kind != "oracle":
            return True
        cfg = check.cfg
        tags = check.subject.oracle(min(cfg.table_domains), cfg.epsilons[0]).tags()
    except Exception:  # noqa: BLE001 - a broken plugin is for the checks themselves to report
        return True
    needs = _ORACLE_NEEDS.get(check.fn, ())
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


def check_metric(
    metric: Any,
    *,
    d: int = 16,
    epsilons: Sequence[float] = (1.0, 4.0),
    seed: int = 0,
    expected_failed_checks: Mapping[str, str] | None = None,
    plugins: Any = None,
    params: Mapping[str, Any] | None = None,
    **sizes: Any,
) -> dict[str, str]:
    """Run every metric check (see :func:`check_oracle`)."""
    checks = metric_checks(metric, d=d, epsilons=epsilons, seed=seed, params=params, plugins=plugins, **sizes)
    return _run(checks, expected_failed_checks)


def check_dataset(
    dataset: Any,
    *,
    seed: int = 0,
    expected_failed_checks: Mapping[str, str] | None = None,
    plugins: Any = None,
    params: Mapping[str, Any] | None = None,
) -> dict[str, str]:
    """Run every dataset check (see :func:`check_oracle`)."""
    return _run(dataset_checks(dataset, seed=seed, params=params, plugins=plugins), expected_failed_checks)


def parametrize_with_checks(
    plugins_to_check: Sequence[Any],
    *,
    expected_failed_checks: Callable[[Subject], Mapping[str, str] | None]
    | Mapping[str, Mapping[str, str]]
    | None = None,
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

    enumerate_checks = {
        "oracle": (oracle_checks, OracleCheckConfig),
        "postprocessor": (postprocessor_checks, PostprocessorCheckConfig),
        "metric": (metric_checks, MetricCheckConfig),
        "dataset": (dataset_checks, DatasetCheckConfig),
    }
    params = []
    for item in plugins_to_check:
        subject = _subject(item, plugins)
        if expected_failed_checks is None:
            expected: Mapping[str, str] = {}
        elif callable(expected_failed_checks):
            expected = expected_failed_checks(subject) or {}
        else:
            expected = expected_failed_checks.get(subject.label, {})
        enumerate_kind, cfg_class = enumerate_checks[subject.kind]
        keys = {f.name for f in cfg_class.__dataclass_fields__.values()}
        checks = enumerate_kind(subject, **{k: v for k, v in config.items() if k in keys})
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
