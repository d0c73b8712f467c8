"""The kit's entry points: enumerate a plugin's checks, run them all, or parametrize pytest with
them; expected failures are listed with their reason, never skipped silently."""

from __future__ import annotations

import dataclasses
import functools
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ldpbench.boundary.failures import describe_exception
from ldpbench.testing.checks.machinery import CheckSkipped, Subject, _subject
from ldpbench.types.kinds import CHECKED_KINDS, KINDS

#: Check names renamed since a release; ``expected_failed_checks`` naming an old one still works,
#: with a DeprecationWarning (the post-processor checks had a prefix of their own, ``check_pp_``).
RENAMED_CHECKS = {
    f"check_pp_{rest}": f"check_postprocessor_{rest}"
    for rest in (
        "returns_estimate",
        "keeps_metadata",
        "does_not_mutate_input",
        "deterministic",
        "no_global_random_state",
        "info_jsonable",
        "query_answers",
    )
}


def _checks_module(kind: str) -> Any:
    """The module of ``kind``'s checks (``CHECKS``, ``CONFIG``, ``applies``), as the kind declares it."""
    declared = KINDS[kind]
    if declared.checks is None:
        raise TypeError(f"the conformance kit has no checks for {declared.noun} (it checks {', '.join(CHECKED_KINDS)})")
    return declared.resolve(declared.checks)


def plugin_checks(
    kind: str,
    plugin: Any,
    *,
    params: Mapping[str, Any] | None = None,
    plugins: Any = None,
    **config: Any,
) -> Iterator[tuple[str, Callable[[], None]]]:
    """Yield ``(check_name, check)`` for a plugin of ``kind``: the kind's checks, each bound to the
    plugin and to the kind's configuration (``config``: its fields, e.g. ``d``, ``epsilons``,
    ``seed``, ``n``; every field has a default). ``check()`` raises ``AssertionError`` on failure (or
    :class:`CheckSkipped` when it does not apply).

    :param plugin: a registered name (``"olh"``), a plugin class or instance, or
        ``(name_or_class, {"g": 2})``.
    :param params: the plugin's parameters (validated against the class's declaration).
    :param plugins: a :class:`~ldpbench.loading.manager.Plugins` (default: ``build_plugins()``).
    """
    module = _checks_module(kind)
    cfg = module.CONFIG(**_config(config))
    yield from _bound(plugin, kind, KINDS[kind].noun, plugins, params, module.CHECKS, cfg)


def _config(config: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(config)
    if "epsilons" in out:
        out["epsilons"] = tuple(float(e) for e in out["epsilons"])
    return out


def oracle_checks(oracle: Any, **config: Any) -> Iterator[tuple[str, Callable[[], None]]]:
    """Yield ``(check_name, check)`` for an oracle (:func:`plugin_checks`; the configuration is
    :class:`~ldpbench.testing.checks.oracle.OracleCheckConfig`: ``d`` of the repeated-simulation
    checks, ``epsilons``, ``seed``, ``n``, ``trials``, ``table_domains`` of the exact audits ...)."""
    return plugin_checks("oracle", oracle, **config)


def postprocessor_checks(postprocessor: Any, **config: Any) -> Iterator[tuple[str, Callable[[], None]]]:
    """Yield ``(check_name, check)`` for a post-processor (:func:`plugin_checks`; configuration
    :class:`~ldpbench.testing.checks.postprocessor.PostprocessorCheckConfig`). The inputs are
    estimates from every oracle of the ldpbench distribution at each epsilon (their aggregate
    path) and a bare hand-built estimate; ``n`` or ``oracles`` may be set."""
    return plugin_checks("postprocessor", postprocessor, **config)


def metric_checks(metric: Any, **config: Any) -> Iterator[tuple[str, Callable[[], None]]]:
    """Yield ``(check_name, check)`` for a metric (:func:`plugin_checks`; configuration
    :class:`~ldpbench.testing.checks.metric.MetricCheckConfig`). The metric scores the raw
    estimates of every oracle of the ldpbench distribution at each epsilon on a fixed skewed
    population of ``d`` items, and the exact estimate; ``n`` or ``oracles`` may be set."""
    return plugin_checks("metric", metric, **config)


def dataset_checks(dataset: Any, **config: Any) -> Iterator[tuple[str, Callable[[], None]]]:
    """Yield ``(check_name, check)`` for a dataset (:func:`plugin_checks`; configuration
    :class:`~ldpbench.testing.checks.dataset.DatasetCheckConfig`: ``seed``)."""
    return plugin_checks("dataset", dataset, **config)


def protocol_checks(protocol: Any, **config: Any) -> Iterator[tuple[str, Callable[[], None]]]:
    """Yield ``(check_name, check)`` for a heavy-hitter protocol (:func:`plugin_checks`;
    configuration :class:`~ldpbench.testing.checks.protocol.ProtocolCheckConfig`): each round's
    oracle audited, the accounting across rounds, identification of a planted set."""
    return plugin_checks("protocol", protocol, **config)


def attack_checks(attack: Any, **config: Any) -> Iterator[tuple[str, Callable[[], None]]]:
    """Yield ``(check_name, check)`` for a poisoning attack (:func:`plugin_checks`; configuration
    :class:`~ldpbench.testing.checks.attack.AttackCheckConfig`): its reports crafted for every
    built-in oracle it declares, aggregated by the oracle, promoting the targets (docs/poisoning.md)."""
    return plugin_checks("attack", attack, **config)


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

    fn: Callable[[Subject, Any], str | None]
    subject: Subject
    cfg: Any

    def __call__(self) -> str | None:
        """Run the check; a check that passed by a weaker route than its name promises returns a
        note saying which (``check-plugin`` shows it beside "passed"). A check that does not
        concern the subject (what pytest does not collect, :func:`_applies`) raises
        :class:`CheckSkipped` before it runs: "not applicable", never "passed", so that
        ``check-plugin`` and the pytest kit run the same checks."""
        lacking = _lacking(self)
        if lacking:
            raise CheckSkipped(
                f"does not apply to {self.subject.label}: it needs {', '.join(lacking)} (pytest does not collect it)"
            )
        return self.fn(self.subject, self.cfg)


def _lacking(check: _Check) -> list[str]:
    """What ``check`` needs from its subject's declared tags and does not get, where the kind's
    checks module says (``missing``: the oracle checks); the other kinds' checks that do not
    apply raise :class:`CheckSkipped` themselves. A broken plugin is for the check to report."""
    module = _checks_module(check.subject.kind)
    if not hasattr(module, "missing"):
        return []
    try:
        return list(module.missing(check.fn, check.subject, check.cfg))
    except Exception:  # noqa: BLE001
        return []


def _applies(check: Callable[[], None]) -> bool:
    """Whether a check concerns its subject at all, read from the subject's declared tags by its
    kind's checks module (pytest collects only those, so a test run has no skips for checks that
    can never apply: OUE has no finite channel, Norm-Sub no query answers). Run directly, such a
    check is "not applicable"."""
    if not isinstance(check, _Check):
        return True
    try:
        return bool(_checks_module(check.subject.kind).applies(check.fn, check.subject, check.cfg))
    except Exception:  # noqa: BLE001 - a broken plugin is for the checks themselves to report
        return True


def _expected(expected: Mapping[str, str] | None) -> dict[str, str]:
    """``expected_failed_checks`` with renamed checks under their new names (and a warning)."""
    out = {}
    for name, reason in dict(expected or {}).items():
        if name in RENAMED_CHECKS:
            warnings.warn(
                f"expected_failed_checks: {name} is now {RENAMED_CHECKS[name]}", DeprecationWarning, stacklevel=4
            )
            name = RENAMED_CHECKS[name]
        out[name] = reason
    return out


def _run(checks: Iterable[tuple[str, Callable[[], None]]], expected: Mapping[str, str] | None) -> dict[str, str]:
    expected = _expected(expected)
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


def check_plugin(
    kind: str,
    plugin: Any,
    *,
    expected_failed_checks: Mapping[str, str] | None = None,
    plugins: Any = None,
    params: Mapping[str, Any] | None = None,
    **config: Any,
) -> dict[str, str]:
    """Run every check of a plugin of ``kind``; raise ``AssertionError`` naming the first failing check.

    ``expected_failed_checks`` maps check names to the reason they are known to fail; such checks
    still run, and their failure is recorded instead of raised. Returns ``{check: outcome}``.
    ``config``: the kind's configuration fields (:func:`plugin_checks`).
    """
    checks = plugin_checks(kind, plugin, params=params, plugins=plugins, **config)
    return _run(checks, expected_failed_checks)


def check_oracle(oracle: Any, **kwargs: Any) -> dict[str, str]:
    """Run every oracle check (:func:`check_plugin`; e.g. ``check_oracle("olh", params={"g": 2},
    d=8, epsilons=(1.0,))``)."""
    return check_plugin("oracle", oracle, **kwargs)


def check_postprocessor(postprocessor: Any, **kwargs: Any) -> dict[str, str]:
    """Run every post-processor check (:func:`check_plugin`)."""
    return check_plugin("postprocessor", postprocessor, **kwargs)


def check_metric(metric: Any, **kwargs: Any) -> dict[str, str]:
    """Run every metric check (:func:`check_plugin`)."""
    return check_plugin("metric", metric, **kwargs)


def check_dataset(dataset: Any, **kwargs: Any) -> dict[str, str]:
    """Run every dataset check (:func:`check_plugin`)."""
    return check_plugin("dataset", dataset, **kwargs)


def check_protocol(protocol: Any, **kwargs: Any) -> dict[str, str]:
    """Run every protocol check (:func:`check_plugin`)."""
    return check_plugin("protocol", protocol, **kwargs)


def check_attack(attack: Any, **kwargs: Any) -> dict[str, str]:
    """Run every attack check (:func:`check_plugin`)."""
    return check_plugin("attack", attack, **kwargs)


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

    params = []
    for item in plugins_to_check:
        subject = _subject(item, plugins)
        if expected_failed_checks is None:
            expected: Mapping[str, str] = {}
        elif callable(expected_failed_checks):
            expected = expected_failed_checks(subject) or {}
        else:
            expected = expected_failed_checks.get(subject.label, {})
        expected = _expected(expected)
        keys = {f.name for f in dataclasses.fields(_checks_module(subject.kind).CONFIG)}
        checks = plugin_checks(subject.kind, subject, **{k: v for k, v in config.items() if k in keys})
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
