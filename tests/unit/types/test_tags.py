"""The plugin contract is declared (tags), and the engine, the kit, the registry and the spec
validator all read it the same way.

Each test reproduces a hole of issue 11: a plugin the kit accepted but every cell then failed, a
spec that validated but could only fail, a class whose capabilities contradicted its methods.
"""

from __future__ import annotations

import dataclasses
import re
import textwrap

import numpy as np
import pytest
from support import ROOT

from ldpbench import build_plugins
from ldpbench.engine.simulate import MissingCapability, simulate
from ldpbench.errors import PluginError
from ldpbench.loading.registry import Origin, Registry
from ldpbench.testing import check_oracle
from ldpbench.types import Oracle, OracleTags, Protocol
from ldpbench_plugins.oracles.grr import GRR

SMALL = dict(d=8, epsilons=(1.0, 4.0), n=2000, trials=120, law_samples=3000)
ORIGIN = Origin("test", "tests.unit.test_contract", "test-dist", "0.0", "direct")


class GRRNoHistogramSampler(GRR):
    """GRR with a finite output and a support-count sampler, but no report-histogram sampler.

    Before the kit used the engine's path, this passed every check and then failed every
    aggregate cell (the engine called the missing sample_report_histogram).
    """

    name = "grr-no-hist-sampler"
    sample_report_histogram = Oracle.sample_report_histogram

    def sample_support_counts(self, true_counts, rng):
        # GRR's support counts are its report histogram: draw it with GRR's own sampler
        return GRR.sample_report_histogram(self, true_counts, rng)


class GRRPerUserOnly(GRR):
    """GRR without any aggregate shortcut: only ``simulation: per-user`` can run it."""

    name = "grr-per-user-only"
    sample_report_histogram = Oracle.sample_report_histogram
    sample_support_counts = Oracle.sample_support_counts


def test_tags_are_derived_from_what_the_class_overrides():
    tags = GRR(d=4, epsilon=1.0).tags()
    assert tags.aggregate and tags.finite_output and tags.aggregate_histogram and tags.output_rows
    assert tags.support_matrix  # GRR implements support_matrix: the tag is on

    class WithoutSupportMatrix(GRR):
        support_matrix = Oracle.support_matrix  # back to the base class's "not implemented"

    assert not WithoutSupportMatrix(d=4, epsilon=1.0).tags().support_matrix
    no_hist = GRRNoHistogramSampler(d=4, epsilon=1.0).tags()
    assert no_hist.aggregate and no_hist.finite_output and not no_hist.aggregate_histogram
    assert not GRRPerUserOnly(d=4, epsilon=1.0).tags().aggregate


def test_oue_declares_its_chunk_size_as_a_tag():
    from ldpbench_plugins.oracles.oue import OUE

    o = OUE(d=100_000, epsilon=1.0)
    assert o.tags().chunk_users == o.chunk_users < 1 << 20


@pytest.mark.slow
def test_a_finite_oracle_without_a_histogram_sampler_runs_on_the_aggregate_path():
    counts = np.array([500, 300, 200, 0])
    est = simulate(GRRNoHistogramSampler(d=4, epsilon=1.0), counts, np.random.default_rng(0), "aggregate")
    assert est.support_counts.shape == (4,) and est.report_histogram is None
    # and the kit, which now runs the same code, agrees with the run
    outcome = check_oracle(GRRNoHistogramSampler, **SMALL)
    assert outcome["check_unbiased_aggregate"] == "passed"
    assert outcome["check_exact_law_aggregate"] == "passed"


def test_aggregate_simulation_without_an_aggregate_path_is_a_clear_error_and_not_applicable_in_the_kit():
    with pytest.raises(MissingCapability, match="no aggregate path.*per-user"):
        simulate(GRRPerUserOnly(d=4, epsilon=1.0), np.array([3, 1, 0, 0]), np.random.default_rng(0))
    outcome = check_oracle(GRRPerUserOnly, **SMALL)
    for name in ("check_unbiased_aggregate", "check_variance_aggregate", "check_exact_law_aggregate"):
        assert outcome[name].startswith("skipped") and "aggregate" in outcome[name], outcome[name]
    assert outcome["check_unbiased_per_user"] == "passed"


def test_the_kit_catches_tags_that_claim_a_missing_method():
    class ClaimsATable(GRRPerUserOnly):
        name = "claims-a-table"

        def tags(self) -> OracleTags:
            return dataclasses.replace(super().tags(), aggregate=True)

    with pytest.raises(AssertionError, match="check_tags failed.*aggregate without the methods"):
        check_oracle(ClaimsATable, **SMALL)


def test_the_kit_checks_a_declared_support_matrix_against_support_counts():
    class WrongMatrix(GRR):
        name = "wrong-matrix"

        def support_matrix(self, reports):
            return np.zeros((np.asarray(reports).size, self.d), dtype=bool)

    class RightMatrix(GRR):
        name = "right-matrix"

        def support_matrix(self, reports):
            return np.asarray(reports)[:, None] == np.arange(self.d)[None, :]

    from ldpbench.testing import oracle_checks

    dict(oracle_checks(RightMatrix, **SMALL))["check_tags"]()
    with pytest.raises(AssertionError, match="support_matrix"):
        dict(oracle_checks(WrongMatrix, **SMALL))["check_tags"]()


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


def test_a_protocol_inherits_a_documented_privacy_account():
    class Bare(Protocol):
        name = "bare"

        def run(self, population, epsilon, rng, *, simulation="aggregate"):
            return {}

    assert Bare().privacy_accounting(2.0) == [{"group": "all users", "model": "unknown", "epsilon": 2.0}]


def test_executor_defaults_are_declared_by_the_executors():
    from ldpbench.runner import default_executor

    plugins = build_plugins()
    assert default_executor(plugins, "serial") == "in-process"
    assert default_executor(plugins, "parallel") == "process-pool"


def test_the_default_oracle_metric_and_pipeline_are_declared_by_plugins():
    from ldpbench.spec.capabilities import default_names, default_oracle

    plugins = build_plugins()
    assert default_oracle(plugins, 16, 1.0) == "oue"
    assert default_names(plugins, "metric") == ["mse"]
    assert default_names(plugins, "postprocessor") == ["base"]


# -- refused at validation time ------------------------------------------------------------------

PER_USER_ONLY = textwrap.dedent(
    '''
    from ldpbench import hookimpl
    from ldpbench.types import Oracle
    from ldpbench_plugins.oracles.grr import GRR


    class PerUserOnly(GRR):
        """GRR without an aggregate shortcut."""

        name = "per-user-only"
        sample_report_histogram = Oracle.sample_report_histogram
        sample_support_counts = Oracle.sample_support_counts


    @hookimpl
    def ldpbench_register_oracles(registry):
        registry.register(PerUserOnly)
    '''
)

SPEC = """\
name: capabilities
datasets: [{{zipf: {{d: 20, n: 500}}}}]
epsilons: [1]
{simulation}oracles:
  - grr
  - {oracle}
pipelines:
  - base
  - [{em}, norm-sub]
"""


def _validate(tmp_path, run_cli, oracle="grr", em="em", simulation=""):
    (tmp_path / "plugs").mkdir(exist_ok=True)
    (tmp_path / "plugs" / "per_user_only.py").write_text(PER_USER_ONLY)
    (tmp_path / "spec.yaml").write_text(SPEC.format(oracle=oracle, em=em, simulation=simulation))
    return run_cli("validate", "spec.yaml", "--plugins-dir", "plugs")


@pytest.mark.slow
def test_aggregate_simulation_of_an_oracle_without_an_aggregate_path_is_refused(tmp_path, run_cli):
    out = _validate(tmp_path, run_cli, oracle="per-user-only", em="base-pos")
    assert out.returncode == 2, out.stdout + out.stderr
    assert re.search(r"spec\.yaml:6: oracle 'per-user-only' has no aggregate path", out.stderr), out.stderr
    assert "simulation: per-user" in out.stderr and "Traceback" not in out.stderr
    ok = _validate(tmp_path, run_cli, oracle="per-user-only", em="base-pos", simulation="simulation: per-user\n")
    assert ok.returncode == 0, ok.stderr


@pytest.mark.slow
def test_em_after_an_oracle_without_a_channel_is_refused(tmp_path, run_cli):
    out = _validate(tmp_path, run_cli, oracle="oue", em="em")
    assert out.returncode == 2, out.stdout + out.stderr
    line = next(line for line in out.stderr.splitlines() if "post-processor 'em'" in line)
    assert line.startswith("spec.yaml:9: ") and "oracle 'oue'" in line and "finite_output" in line
    assert "oracle 'grr'" not in out.stderr  # GRR has a channel
    for variant in ("em-corrected", "em-bootstrap"):  # the EM family inherits the tag
        assert _validate(tmp_path, run_cli, oracle="olh", em=variant).returncode == 2
    assert _validate(tmp_path, run_cli, oracle="hr", em="em").returncode == 0


# -- no probing ------------------------------------------------------------------------------------

#: getattr/hasattr calls in ldpbench/ that are not about plugins (argparse, entry points, os, the
#: lazy re-export of ldpbench.testing), by file and the text of the call.
NOT_PLUGIN_PROBES = {
    ("spec/load.py", 'getattr(exc, "problem", None)'),
    ("loading/manager.py", "getattr(pm.hook, hook_name)"),
    ("util/safeio.py", 'getattr(os, "O_NONBLOCK", 0)'),
    ("util/safeio.py", 'getattr(os, "O_CLOEXEC", 0)'),
    ("cli/__init__.py", 'getattr(args, "func", None)'),
    ("cli/_common.py", 'getattr(args, "trust_spec_plugins", False)'),
    ("cli/_common.py", 'getattr(args, "trust_spec_params", False)'),
    ("cli/_common.py", 'getattr(args, "disable_plugin", None)'),
    ("cli/_common.py", 'getattr(args, "cell_timeout", None)'),
    ("boundary/guard.py", 'hasattr(signal, "SIGALRM")'),
    ("loading/identity.py", 'getattr(module, "__file__", None)'),
    ("results/store.py", 'getattr(os, "O_CLOEXEC", 0)'),
    ("results/store.py", 'getattr(os, "O_DIRECTORY", 0)'),
    ("boundary/guard.py", 'hasattr(signal, "setitimer")'),
    ("testing/__init__.py", 'getattr(importlib.import_module(f"{__name__}.checks.{_PUBLIC[name]}"), name)'),
    ("types/kinds.py", "getattr(loaded, attribute)"),
    ("__init__.py", "getattr(importlib.import_module(_MOVED[name]), name)"),
}


def test_nothing_in_ldpbench_probes_plugins_for_attributes():
    root = ROOT / "ldpbench"
    found = set()
    for path in root.rglob("*.py"):
        for call in re.findall(r"\b(?:has|get)attr\((?:[^()]|\([^()]*\))*\)", path.read_text(encoding="utf-8")):
            found.add((path.relative_to(root).as_posix(), call))
    assert found - NOT_PLUGIN_PROBES == set()
