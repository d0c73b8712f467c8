"""ldpbench's plugin conformance kit and statistical test helpers (for plugin authors and our tests).

Run every check on an oracle or a post-processor::

    from ldpbench.testing import check_oracle, check_postprocessor
    check_oracle("olh", params={"g": 2})          # raises AssertionError on the first failure
    check_postprocessor(MyPostProcessor)

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

from .checks import (
    CheckSkipped,
    OracleCheckConfig,
    PostprocessorCheckConfig,
    check_oracle,
    check_postprocessor,
    oracle_checks,
    parametrize_with_checks,
    postprocessor_checks,
)

from . import checks, stats

__all__ = [*checks.__all__, "stats"]
