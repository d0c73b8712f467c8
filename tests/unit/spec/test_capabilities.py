"""What a spec uses by default is declared by the plugins (ldpbench/spec/capabilities.py)."""

from __future__ import annotations

from support import builtin_plugins


def test_the_default_oracle_metric_and_pipeline_are_declared_by_plugins():
    from ldpbench.spec.capabilities import default_names, default_oracle

    plugins = builtin_plugins()
    assert default_oracle(plugins, 16, 1.0) == "oue"
    assert default_names(plugins, "metric") == ["mse"]
    assert default_names(plugins, "postprocessor") == ["base"]


def test_a_refused_step_names_the_nearest_one_that_accepts_the_oracle(tmp_path):
    # issue 29 (trial shortfall 17): 'em' after a non-finite-output oracle had no suggestion;
    # 'ibu' (likelihood-based too) accepts it. The suggestion must itself validate.
    import pytest

    from ldpbench.errors import SpecError
    from ldpbench.spec.validate import load_spec

    plugins = builtin_plugins()
    spec = tmp_path / "s.yaml"
    text = "name: s\nseed: 1\nrepeats: 2\ndatasets:\n  - zipf: {d: 16, n: 2000}\nepsilons: [1]\noracles: [oue]\n"
    spec.write_text(text + "pipelines: [em]\nmetrics: [mse]\n")
    with pytest.raises(SpecError) as caught:
        load_spec(spec, plugins)
    (problem,) = caught.value.problems
    assert problem.startswith(f"{spec}:8: post-processor 'em' needs a finite-output oracle")
    assert problem.endswith("; use 'ibu' instead, which accepts oracle 'oue' here")
    spec.write_text(text + "pipelines: [ibu]\nmetrics: [mse]\n")
    load_spec(spec, plugins)


def test_a_step_that_reads_the_reports_needs_the_per_user_path_and_a_support_matrix(tmp_path):
    # detect-fake-users (requires_reports): refused under aggregate simulation and after an oracle
    # without support_matrix (SHE), with FILE:LINE at the step's entry
    import pytest

    from ldpbench.errors import SpecError
    from ldpbench.spec.validate import load_spec

    plugins = builtin_plugins()
    spec = tmp_path / "s.yaml"
    head = "name: s\nseed: 1\nrepeats: 2\ndatasets:\n  - zipf: {d: 16, n: 2000}\nepsilons: [1]\n"
    spec.write_text(head + "oracles: [oue]\npipelines: [detect-fake-users]\nmetrics: [mse]\n")
    with pytest.raises(SpecError) as caught:
        load_spec(spec, plugins)
    (problem,) = caught.value.problems
    assert problem.startswith(f"{spec}:8: post-processor 'detect-fake-users' needs each report's support")
    assert "set 'simulation: per-user'" in problem
    spec.write_text(head + "simulation: per-user\noracles: [she]\npipelines: [detect-fake-users]\nmetrics: [mse]\n")
    with pytest.raises(SpecError) as caught:
        load_spec(spec, plugins)
    assert any("support_matrix = False" in p or "p* and q*" in p for p in caught.value.problems)
    spec.write_text(head + "simulation: per-user\noracles: [oue]\npipelines: [detect-fake-users]\nmetrics: [mse]\n")
    load_spec(spec, plugins)
