"""ldpbench's plugin conformance kit and statistical test helpers (for plugin authors and our tests).

Run every check on an oracle, a post-processor, a metric or a dataset::

    from ldpbench.testing import check_dataset, check_metric, check_oracle, check_postprocessor
    check_oracle("olh", params={"g": 2})          # raises AssertionError on the first failure
    check_postprocessor(MyPostProcessor)
    check_metric(MyMetric)
    check_dataset(MyDataset)
    check_protocol("pem")                          # a heavy-hitter protocol

or one pytest test per check, with readable ids::

    from ldpbench.testing import parametrize_with_checks

    @parametrize_with_checks(["grr", MyOracle, MyPostProcessor])
    def test_conformance(plugin, check):
        check()

A check that a plugin knowingly fails is listed with a reason
(``expected_failed_checks={"check_output_table_ldp": "(eps, delta)-LDP, not pure"}``), never skipped
silently. The statistical helpers (Z-test, variance ratio, chi-square bounds, exact-distribution
test) live in :mod:`ldpbench.testing.stats`; the pytest fixtures in
:mod:`ldpbench.testing.pytest_plugin`.

To register a plugin for the length of one test, build the plugins with it and drop them after::

    plugins = build_plugins(extra=[my_plugin_module])
    check_oracle("my-oracle", plugins=plugins)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ldpbench.testing import stats
    from ldpbench.testing.checks.attack import AttackCheckConfig
    from ldpbench.testing.checks.dataset import DatasetCheckConfig
    from ldpbench.testing.checks.machinery import CheckSkipped
    from ldpbench.testing.checks.metric import MetricCheckConfig
    from ldpbench.testing.checks.oracle import OracleCheckConfig
    from ldpbench.testing.checks.postprocessor import PostprocessorCheckConfig
    from ldpbench.testing.checks.protocol import ProtocolCheckConfig
    from ldpbench.testing.checks.runner import (
        attack_checks,
        check_attack,
        check_dataset,
        check_metric,
        check_oracle,
        check_plugin,
        check_postprocessor,
        check_protocol,
        dataset_checks,
        metric_checks,
        oracle_checks,
        parametrize_with_checks,
        plugin_checks,
        postprocessor_checks,
        protocol_checks,
    )

#: The kit's public names and the modules that define them. Loaded on first use (PEP 562), not with
#: the package: every pytest session in an environment with ldpbench installed imports the pytest
#: plugin (``ldpbench.testing.pytest_plugin``), and the kit's SciPy-stats and hypothesis imports
#: would add about 2 s to each of them.
_PUBLIC = {
    "AttackCheckConfig": "attack",
    "CheckSkipped": "machinery",
    "DatasetCheckConfig": "dataset",
    "MetricCheckConfig": "metric",
    "OracleCheckConfig": "oracle",
    "PostprocessorCheckConfig": "postprocessor",
    "ProtocolCheckConfig": "protocol",
    **dict.fromkeys(
        (
            "attack_checks",
            "check_attack",
            "check_dataset",
            "check_metric",
            "check_oracle",
            "check_plugin",
            "check_postprocessor",
            "check_protocol",
            "dataset_checks",
            "metric_checks",
            "oracle_checks",
            "parametrize_with_checks",
            "plugin_checks",
            "postprocessor_checks",
            "protocol_checks",
        ),
        "runner",
    ),
}
__all__ = [*_PUBLIC, "stats"]


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        return getattr(importlib.import_module(f"{__name__}.checks.{_PUBLIC[name]}"), name)
    if name == "stats":
        return importlib.import_module(f"{__name__}.stats")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
