"""A plugin declines an input with ``NotApplicable``: only what depends on it fails, with the reason."""

from __future__ import annotations

import types

import numpy as np
import pytest

import ldpbench
from ldpbench import build_plugins, hookimpl
from ldpbench.errors import ExitCode, LdpbenchError, NotApplicable, UsageError
from ldpbench.types import Estimate, PostProcessor


class OnlyGrr(PostProcessor):
    """Returns the estimate unchanged, and declines every oracle but GRR (a test post-processor)."""

    name = "only-grr"

    def apply(self, estimate, rng):
        if estimate.mechanism != "grr":
            raise NotApplicable(f"only-grr handles GRR estimates, not '{estimate.mechanism}'")
        return estimate


def test_a_decline_fails_only_its_rows_with_the_reason(tmp_path):
    module = types.ModuleType("only_grr_plugin")
    module.ldpbench_register_postprocessors = hookimpl(lambda registry: registry.register(OnlyGrr))
    spec = {
        "name": "decline",
        "seed": 1,
        "repeats": 2,
        "datasets": [{"zipf": {"d": 16, "n": 2000, "s": 1.2}}],
        "epsilons": [1],
        "oracles": ["grr", "oue"],
        "pipelines": ["base", "only-grr"],
        "metrics": ["mse"],
    }
    outcome = ldpbench.run(spec, tmp_path, executor="in-process", plugins=build_plugins(extra=[module]))
    rows = {(r["oracle"], r["pipeline"]): r for r in outcome.leaderboard.iter_rows(named=True)}
    assert rows[("oue", "only-grr")]["failed"] == 2
    assert "NotApplicable: only-grr handles GRR estimates, not 'oue'" in rows[("oue", "only-grr")]["error"]
    assert all(rows[key]["failed"] == 0 for key in [("grr", "base"), ("oue", "base"), ("grr", "only-grr")])
    assert outcome.failed_rows == 2


def test_not_applicable_is_a_plugin_outcome_not_a_usage_error():
    assert issubclass(NotApplicable, LdpbenchError) and not issubclass(NotApplicable, UsageError)
    assert NotApplicable.exit_code == ExitCode.PLUGIN
    import ldpbench.types

    with pytest.warns(DeprecationWarning, match="ldpbench.errors.NotApplicable"):
        assert ldpbench.types.NotApplicable is NotApplicable  # its old path still works, with a warning


@pytest.mark.parametrize("pipeline", ["base-cut", "mle-apx"])
def test_builtins_decline_a_bare_vector_without_noise(pipeline):
    bare = Estimate(frequencies=np.full(4, 0.25), n=100, epsilon=1.0, mechanism="custom")
    with pytest.raises(NotApplicable):
        ldpbench.postprocess(pipeline, bare)
