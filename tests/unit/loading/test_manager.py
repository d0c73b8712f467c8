"""Registration hooks go through pluggy: its call order, hook wrappers, blocking and tracing."""

from __future__ import annotations

import types

import pytest

from ldpbench import build_plugins, hookimpl
from ldpbench.loading.manager import TRACE_ENV
from ldpbench.types import Metric


def _metric(metric_name: str) -> type[Metric]:
    class Named(Metric):
        name = metric_name

        def score(self, truth, estimate, rng):
            return 0.0

    Named.__doc__ = f"The {metric_name} test metric."
    return Named


def _module(name: str, **hooks) -> types.ModuleType:
    mod = types.ModuleType(name)
    for hook_name, fn in hooks.items():
        setattr(mod, hook_name, fn)
    return mod


def test_a_hook_wrapper_wraps_every_registration():
    seen = []

    @hookimpl(wrapper=True)
    def ldpbench_register_metrics(registry):
        seen.append(("before", registry.origin.plugin))
        result = yield
        seen.append(("after", registry.origin.plugin))
        return result

    @hookimpl
    def register_one(registry):
        registry.register(_metric("wrapped-metric"))

    wrapper = _module("wrapper_plugin", ldpbench_register_metrics=ldpbench_register_metrics)
    plain = _module("plain_plugin", ldpbench_register_metrics=register_one)
    plugins = build_plugins(extra=[wrapper, plain])
    assert "wrapped-metric" in plugins.registry("metric")
    # The wrapper saw the call of every plugin implementing the hook, each with its own origin.
    assert ("before", "plain_plugin") in seen and ("after", "plain_plugin") in seen
    assert seen.count(("before", "plain_plugin")) == 1


def test_tryfirst_is_honoured():
    order = []

    @hookimpl(tryfirst=True)
    def first(registry):
        order.append("first")

    @hookimpl
    def second(registry):
        order.append("second")

    # Registered first: without tryfirst pluggy would call it after `second` (last registered first).
    build_plugins(
        extra=[_module("eager", ldpbench_register_metrics=first), _module("plain", ldpbench_register_metrics=second)]
    )
    assert order == ["first", "second"]


def test_disabled_plugins_are_blocked_in_pluggy():
    plugins = build_plugins(disabled=["oracles.grr"])
    assert plugins.pm.is_blocked("oracles.grr")
    assert "grr" not in plugins.registry("oracle")
    assert "oue" in plugins.registry("oracle")


def test_trace_env_writes_hook_calls_to_stderr(monkeypatch, capsys):
    monkeypatch.setenv(TRACE_ENV, "1")
    build_plugins(
        extra=[
            _module(
                "traced_plugin",
                ldpbench_register_metrics=hookimpl(lambda registry: registry.register(_metric("traced-metric"))),
            )
        ]
    )
    err = capsys.readouterr().err
    assert "ldpbench_register_metrics" in err
    assert "traced_plugin" in err


def test_no_trace_without_the_env(monkeypatch, capsys):
    monkeypatch.delenv(TRACE_ENV, raising=False)
    build_plugins()
    assert "ldpbench_register_metrics" not in capsys.readouterr().err


@pytest.mark.parametrize("value", ["0", ""])
def test_trace_only_for_1(monkeypatch, capsys, value):
    monkeypatch.setenv(TRACE_ENV, value)
    build_plugins()
    assert "ldpbench_register" not in capsys.readouterr().err


def test_an_unhashable_namespace_registers_under_its_name():
    namespace = types.SimpleNamespace(
        __name__="namespace_plugin",
        ldpbench_register_metrics=hookimpl(lambda registry: registry.register(_metric("namespace-metric"))),
    )
    plugins = build_plugins(extra=[namespace])
    assert plugins.get("metric", "namespace-metric").origin.plugin == "namespace_plugin"
