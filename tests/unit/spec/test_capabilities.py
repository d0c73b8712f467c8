"""What a spec uses by default is declared by the plugins (ldpbench/spec/capabilities.py)."""

from __future__ import annotations

from support import builtin_plugins


def test_the_default_oracle_metric_and_pipeline_are_declared_by_plugins():
    from ldpbench.spec.capabilities import default_names, default_oracle

    plugins = builtin_plugins()
    assert default_oracle(plugins, 16, 1.0) == "oue"
    assert default_names(plugins, "metric") == ["mse"]
    assert default_names(plugins, "postprocessor") == ["base"]
