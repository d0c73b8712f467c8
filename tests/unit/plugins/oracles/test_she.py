"""SHE (plugins/oracles/she.py): real-valued sums through the harness, and the continuous audit."""

from __future__ import annotations

import numpy as np
import pytest
from support import builtin_plugins

from ldpbench.audit import empirical_audit
from ldpbench.boundary.values import PluginOutputError
from ldpbench.engine.simulate import simulate
from ldpbench.errors import NotApplicable
from ldpbench_plugins.oracles.she import SHE

# ----------------------------------------------------------------------------------------------
# SHE: real-valued sums through the harness, and the continuous audit
# ----------------------------------------------------------------------------------------------


def test_she_estimate_is_the_mean_report_and_carries_no_pure_constants():
    rng = np.random.default_rng(7)
    o = SHE(d=5, epsilon=1.0)
    counts = np.array([3, 0, 1, 0, 2])
    est = simulate(o, counts, rng, "per-user")
    assert est.p_star is None and est.q_star is None
    np.testing.assert_allclose(est.frequencies, np.asarray(est.support_counts) / 6)
    np.testing.assert_allclose(est.variance, 8 / (1.0**2 * 6))
    assert o.tags().real_valued_counts and o.tags().report_density and not o.tags().support_matrix


def test_mle_apx_declines_she_as_not_applicable():
    plugins = builtin_plugins()
    est = simulate(SHE(d=5, epsilon=1.0), np.array([3, 0, 1, 0, 2]), np.random.default_rng(0), "aggregate")
    with pytest.raises(NotApplicable, match="pure oracle"):
        plugins.create("postprocessor", "mle-apx").apply(est, np.random.default_rng(0))


class _NaNSums(SHE):
    name = "she-nan"

    def sample_support_counts(self, true_counts, rng):
        out = super().sample_support_counts(true_counts, rng)
        out[1] = np.nan
        return out


def test_a_nan_sum_is_a_plugin_error_not_a_number():
    with pytest.raises(PluginOutputError, match="non-finite"):
        simulate(_NaNSums(d=4, epsilon=1.0), np.array([1, 2, 3, 4]), np.random.default_rng(0), "aggregate")


class _QuietReports(SHE):
    """Leaks: reports carry half the noise the declared density says."""

    name = "she-quiet"

    def perturb(self, values, rng):
        return super().perturb(values, rng) * 0.0 + self._half(values, rng)

    def _half(self, values, rng):
        from ldpbench_plugins.oracles import _histogram

        return _histogram.noisy_one_hot(np.asarray(values), self.d, self.scale / 2, rng)


class _ThinDensity(SHE):
    """Leaks on paper: the declared density's scale is half what eps-LDP needs."""

    name = "she-thin"

    def report_log_likelihood(self, reports):
        return 2 * super().report_log_likelihood(reports)


@pytest.mark.parametrize("cls", [SHE, _QuietReports, _ThinDensity], ids=["she", "quiet-reports", "thin-density"])
def test_continuous_audit(cls):
    audit = empirical_audit(lambda eps: cls(d=8, epsilon=eps), (1.0, 4.0), trials=10_000, seed=1)
    assert audit.available
    if cls is SHE:
        assert not audit.leak
        assert all(b.declared_loss == pytest.approx(b.epsilon, rel=1e-9) for b in audit.budgets)
    elif cls is _QuietReports:
        assert any(b.eps_lb > b.epsilon for b in audit.budgets), [b.eps_lb for b in audit.budgets]
    else:
        assert all(b.density_leak for b in audit.budgets)


def test_validate_refuses_mle_apx_after_she_with_file_and_line(tmp_path, capsys):
    from ldpbench.cli import main

    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "name: she-mle\nseed: 1\nrepeats: 1\ndatasets:\n  - zipf: {d: 16, n: 1000, s: 1.1}\n"
        "epsilons: [1]\noracles: [she, the]\npipelines:\n  - base\n  - mle-apx\nmetrics: [mse]\n"
    )
    code = main(["validate", str(spec)])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{spec}:10: post-processor 'mle-apx' needs a pure oracle's p* and q*, but oracle 'she'" in err
    assert "oracle 'the'" not in err


def test_personalized_budgets_weight_she_groups_by_their_variance():
    """SHE carries no p*/q*: its groups are weighted by the (f-free) noise variance it declares."""
    from ldpbench.engine.groups import group_weights

    rng = np.random.default_rng(8)
    counts = np.array([30, 10, 5, 5])
    parts = [simulate(SHE(d=4, epsilon=eps), counts, rng, "aggregate") for eps in (0.5, 2.0)]
    w = group_weights(parts, 4)
    inverse = np.array([1 / parts[0].variance[0], 1 / parts[1].variance[0]])
    np.testing.assert_allclose(w, inverse / inverse.sum(), rtol=1e-12)
    assert w[1] / w[0] == pytest.approx(16.0)  # variance 8/(eps^2 n): four times eps, 16 times the weight


def test_audit_she_says_what_it_checked(capsys):
    """'ldpbench audit she' audits something: the declared density's worst loss per budget (exactly
    eps) and the likelihood-ratio attack, not 'nothing was audited'; with no output table the audit
    is partial, which exits 3 unless --allow-partial accepts it."""
    import json

    from ldpbench.cli import main

    assert main(["audit", "she", "--trials", "3000", "--json", "--allow-partial"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["verdict"].startswith("partial: no evidence") and report["partial"]
    assert report["parts"] == {"exact": "no output table (output_table() not implemented)", "empirical": "ran"}
    budgets = report["empirical"]["budgets"]
    assert [b["declared_loss"] for b in budgets] == pytest.approx([0.5, 1.0, 4.0], rel=1e-9)
    assert all(b["best"]["attack"] == "likelihood-ratio" for b in budgets)
    assert report["exact"]["available"] is False
    assert main(["audit", "she", "--trials", "3000"]) == 3
    captured = capsys.readouterr()
    assert "continuous reports: no output table (the exact audit does not apply)" in captured.out
    assert "the audit of 'she' is partial" in captured.err and "--allow-partial" in captured.err
