"""Registries (ldpbench/loading/registry.py) validate plugins on registration and name every origin
in their errors, and refuse capabilities that contradict a class's methods (issue 11)."""

from __future__ import annotations

import types

import numpy as np
import pytest

from ldpbench import build_plugins, hookimpl
from ldpbench.errors import ParamError, PluginError, UnknownPluginError
from ldpbench.loading.registry import Origin, Registry
from ldpbench.params import Param
from ldpbench.types import Metric, Oracle
from ldpbench_plugins.oracles.grr import GRR

ORIGIN_A = Origin("a", "pkg_a.metrics", "pkg-a", "1.0", "entry-point")


ORIGIN_B = Origin("b", "pkg_b.metrics", "pkg-b", "2.0", "entry-point")


class Good(Metric):
    """A fine metric."""

    name = "good-metric"
    params = (Param("k", int, 3, "how many", min=1),)

    def score(self, truth, estimate, rng):
        return 0.0


def test_register_and_lookup():
    reg = Registry("metric")
    reg.bind(ORIGIN_A).register(Good)
    assert reg.get("good-metric").origin is ORIGIN_A
    with pytest.raises(UnknownPluginError, match="did you mean 'good-metric'"):
        reg.get("good_metric")


def test_duplicate_names_both_origins():
    reg = Registry("metric")
    reg.bind(ORIGIN_A).register(Good)
    with pytest.raises(PluginError) as info:
        reg.bind(ORIGIN_B).register(Good)
    assert "pkg-a 1.0" in str(info.value) and "pkg-b 2.0" in str(info.value)


@pytest.mark.parametrize("bad_name", ["Bad", "bad_name", "-x", "", "bad--name"])
def test_name_pattern(bad_name):
    cls = type("Bad", (Good,), {"name": bad_name})
    with pytest.raises(PluginError, match="not a valid plugin name"):
        Registry("metric").bind(ORIGIN_A).register(cls)


def test_missing_method_and_wrong_base():
    class NoScore(Metric):
        name = "no-score"

    with pytest.raises(PluginError, match="does not implement score") as info:
        Registry("metric").bind(ORIGIN_A).register(NoScore)
    assert "pkg-a" in str(info.value)

    class NotAMetric:
        name = "not-a-metric"

    with pytest.raises(PluginError, match="must subclass"):
        Registry("metric").bind(ORIGIN_A).register(NotAMetric)


def test_wrong_signature():
    class Short(Metric):
        name = "short"

        def score(self, truth):
            return 0.0

    with pytest.raises(PluginError, match="does not match the contract"):
        Registry("metric").bind(ORIGIN_A).register(Short)


def test_bad_param_declaration():
    class BadDefault(Good):
        name = "bad-default"
        params = (Param("k", int, "three"),)

    with pytest.raises(PluginError, match="default of 'k'"):
        Registry("metric").bind(ORIGIN_A).register(BadDefault)


def test_resolve_params_validates():
    reg = Registry("metric")
    reg.bind(ORIGIN_A).register(Good)
    info = reg.get("good-metric")
    assert info.resolve_params({}).values == {"k": 3}
    with pytest.raises(ParamError, match="must be >= 1"):
        info.resolve_params({"k": 0})
    with pytest.raises(ParamError, match="did you mean 'k'"):
        info.resolve_params({"K": 2})


def test_builtins_and_direct_plugins_share_the_door():
    mod = types.ModuleType("third_party_metrics")

    @hookimpl
    def ldpbench_register_metrics(registry):
        registry.register(Good)

    mod.ldpbench_register_metrics = ldpbench_register_metrics
    plugins = build_plugins(extra=[mod])
    assert plugins.get("metric", "good-metric").origin.source == "direct"
    assert plugins.get("metric", "mse").origin.distribution == "ldpbench"
    metric = plugins.create("metric", "good-metric", {"k": 5})
    assert metric.k == 5 and metric.score(None, None, np.random.default_rng(0)) == 0.0


def test_clash_with_builtin_names_both():
    class Mse(Good):
        name = "mse"

    mod = types.ModuleType("clashing")

    @hookimpl
    def ldpbench_register_metrics(registry):
        registry.register(Mse)

    mod.ldpbench_register_metrics = ldpbench_register_metrics
    with pytest.raises(
        PluginError,
        match="duplicate metric name .mse.: registered by .*(ldpbench 0.1.0.*registered directly|registered directly.*ldpbench 0.1.0)",
    ):
        build_plugins(extra=[mod])


ORIGIN = Origin("test", "tests.unit.test_contract", "test-dist", "0.0", "direct")


@pytest.mark.parametrize(
    "drop, message",
    [
        ("report_histogram", "implements channel, support_counts_from_histogram but not report_histogram"),
        ("output_table", "output_rows indexes rows of output_table"),
    ],
)
def test_the_registry_refuses_capabilities_that_contradict_the_methods(drop, message):
    broken = type("Broken", (GRR,), {"name": "broken", drop: getattr(Oracle, drop)})
    with pytest.raises(PluginError) as err:
        Registry("oracle").bind(ORIGIN).register(broken)
    text = str(err.value)
    assert message in text
    assert "'broken'" in text and "test-dist 0.0" in text  # names the plugin and its distribution


def test_the_registry_refuses_a_query_time_postprocessor_without_answer():
    from ldpbench.types import PostProcessor

    class NoAnswer(PostProcessor):
        name = "no-answer"
        acts_on = "queries"

    with pytest.raises(PluginError, match="needs answer"):
        Registry("postprocessor").bind(ORIGIN).register(NoAnswer)
