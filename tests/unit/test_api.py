"""The notebook API (ldpbench/api.py): ``ldpbench.run``, the face of ``ldpbench run`` (same
errors, every file of the results folder), and ``ldpbench.postprocess``, the runner's code path on
a bare vector."""

from __future__ import annotations

import json
import math
import types

import numpy as np
import pytest
from support import GIVEN_SPEC, NOTEBOOK_SPEC, builtin_plugins

import ldpbench
from ldpbench import build_plugins, hookimpl
from ldpbench.engine.pipeline import apply_pipeline
from ldpbench.errors import LdpbenchError, SpecError, UnknownPluginError, UsageError
from ldpbench.types import Estimate, Oracle
from ldpbench_plugins.numerics.simplex import project_to_simplex


class ToyOUE(Oracle):
    """OUE's constants only (the API needs p*, q*, the noise variance): p* = 1/2, q* = 1/(e^eps + 1)."""

    name = "toy-oue"

    @property
    def p_star(self) -> float:
        return 0.5

    @property
    def q_star(self) -> float:
        return 1.0 / (math.exp(self.epsilon) + 1.0)

    def perturb(self, values, rng):  # pragma: no cover - not used here
        raise NotImplementedError

    def support_counts(self, reports):  # pragma: no cover
        raise NotImplementedError


@hookimpl
def ldpbench_register_oracles(registry):
    registry.register(ToyOUE)


TOY_PLUGIN = types.SimpleNamespace(__name__="toy_oue", ldpbench_register_oracles=ldpbench_register_oracles)
PLUGINS = build_plugins(extra=[TOY_PLUGIN])
F_HAT = np.random.default_rng(3).normal(1 / 200, 0.01, 200)
KW = dict(n=100_000, epsilon=1.0, oracle="toy-oue", plugins=PLUGINS)


def test_postprocess_returns_the_processed_vector():
    out = ldpbench.postprocess("norm-sub", F_HAT, **KW)
    np.testing.assert_array_equal(out, project_to_simplex(F_HAT))
    assert isinstance(out, np.ndarray) and out is not F_HAT
    np.testing.assert_array_equal(F_HAT, np.random.default_rng(3).normal(1 / 200, 0.01, 200))  # input untouched


def test_postprocess_builds_the_estimate_from_the_oracle():
    est = ldpbench.estimate_from_vector(F_HAT, n=100_000, epsilon=1.0, oracle="toy-oue", plugins=PLUGINS)
    q = 1 / (math.e + 1)
    assert est.p_star == 0.5 and est.q_star == pytest.approx(q)
    np.testing.assert_allclose(est.variance, q * (1 - q) / (100_000 * (0.5 - q) ** 2), rtol=1e-12)
    np.testing.assert_array_equal(est.frequencies, F_HAT)
    np.testing.assert_allclose(est.support_counts / est.n, q + (0.5 - q) * F_HAT, rtol=1e-12)
    assert est.mechanism == "toy-oue" and est.n == 100_000


def test_postprocess_is_the_runner_code_path():
    est = ldpbench.estimate_from_vector(F_HAT, n=100_000, epsilon=1.0, oracle="toy-oue", plugins=PLUGINS)
    steps = [PLUGINS.create("postprocessor", "base-cut"), PLUGINS.create("postprocessor", "norm-sub")]
    want = apply_pipeline(steps, est, np.random.default_rng(0))
    got = ldpbench.postprocess("base-cut+norm-sub", F_HAT, return_estimate=True, **KW)
    assert isinstance(got, Estimate)
    assert got.steps == want.steps == ("base-cut", "norm-sub")
    np.testing.assert_array_equal(got.frequencies, want.frequencies)


@pytest.mark.parametrize(
    "pipeline",
    ["base-pos+norm-sub", ["base-pos", "norm-sub"], {"base-pos": {}, "norm-sub": None}, ["base-pos", {"norm-sub": {}}]],
)
def test_chains_can_be_written_several_ways(pipeline):
    out = ldpbench.postprocess(pipeline, F_HAT, **KW)
    np.testing.assert_array_equal(out, project_to_simplex(np.maximum(F_HAT, 0)))


def test_parameters_are_passed_and_validated():
    paper = ldpbench.postprocess("norm-cut", F_HAT, **KW)
    code = ldpbench.postprocess({"norm-cut": {"variant": "code"}}, F_HAT, **KW)
    assert paper.sum() <= 1 + 1e-12 and code.sum() == pytest.approx(1, abs=1e-12)
    with pytest.raises(LdpbenchError, match="variant"):
        ldpbench.postprocess({"norm-cut": {"variant": "papr"}}, F_HAT, **KW)
    with pytest.raises(UnknownPluginError, match="did you mean 'norm-sub'"):
        ldpbench.postprocess("norm_sub", F_HAT, **KW)


def test_post_pos_returns_its_single_value_answers_and_the_estimate_answers_sets():
    out = ldpbench.postprocess("post-pos", F_HAT, **KW)
    np.testing.assert_array_equal(out, np.maximum(F_HAT, 0))
    est = ldpbench.postprocess("post-pos", F_HAT, return_estimate=True, **KW)
    np.testing.assert_array_equal(est.frequencies, F_HAT)
    assert est.answer(np.array([-0.5, 0.25])).tolist() == [0.0, 0.25]


def test_an_estimate_can_be_passed_instead_of_a_vector():
    est = ldpbench.estimate_from_vector(F_HAT, n=100_000, epsilon=1.0, oracle="toy-oue", plugins=PLUGINS)
    out = ldpbench.postprocess("norm", est, plugins=PLUGINS)
    np.testing.assert_allclose(out.sum(), 1.0, rtol=1e-12)
    with pytest.raises(LdpbenchError, match="carries its own"):
        ldpbench.postprocess("norm", est, n=5, plugins=PLUGINS)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (dict(f_hat=np.ones((2, 2)), n=10, epsilon=1.0), "one-dimensional"),
        (dict(f_hat=np.array([np.nan, 1.0]), n=10, epsilon=1.0), "NaN"),
        (dict(f_hat=np.ones(3), n=0, epsilon=1.0), "positive integer"),
        (dict(f_hat=np.ones(3), n=10, epsilon=-1.0), "epsilon"),
        (dict(f_hat=np.ones(3), n=None, epsilon=1.0), "needs n= and epsilon="),
    ],
)
def test_user_mistakes_raise_clear_errors(args, message):
    f_hat = args.pop("f_hat")
    with pytest.raises(LdpbenchError, match=message):
        ldpbench.postprocess("norm", f_hat, oracle="toy-oue", plugins=PLUGINS, **args)
    with pytest.raises(LdpbenchError, match="empty pipeline"):
        ldpbench.postprocess([], F_HAT, **KW)


def test_with_the_built_in_oracles():
    registered = builtin_plugins().registry("oracle")
    oracles = [o for o in ("grr", "oue", "olh", "hr") if o in registered]
    if "grr" not in oracles:
        pytest.skip("the built-in oracles are not registered yet")
    for oracle in oracles:
        out = ldpbench.postprocess("mle-apx", F_HAT, n=100_000, epsilon=1.0, oracle=oracle)
        assert out.min() >= 0 and out.sum() == pytest.approx(1.0, abs=1e-9)
        est = ldpbench.postprocess("base", F_HAT, n=100_000, epsilon=1.0, oracle=oracle, return_estimate=True)
        p, q = est.p_star, est.q_star
        assert est.variance[0] == pytest.approx(q * (1 - q) / (100_000 * (p - q) ** 2), rel=1e-12)
    est = ldpbench.estimate_from_vector(F_HAT, n=100_000, epsilon=1.0, oracle="grr")
    assert est.p_star + (F_HAT.size - 1) * est.q_star == pytest.approx(1.0)
    out = ldpbench.postprocess({"mle-apx": {"variant": "grr"}}, F_HAT, n=100_000, epsilon=1.0, oracle="grr")
    assert out.sum() == pytest.approx(1.0, abs=1e-9)


def test_a_bad_mapping_raises_with_every_problem_located():
    bad = {**NOTEBOOK_SPEC, "datasets": ["zipff"], "pipelines": ["norm_sub"]}
    with pytest.raises(SpecError) as exc:
        ldpbench.run(bad)
    assert any("unknown dataset 'zipff' — did you mean 'zipf'?" in p for p in exc.value.problems)
    assert any("did you mean 'norm-sub'?" in p for p in exc.value.problems)
    assert all(p.startswith("<spec>:") for p in exc.value.problems)


def test_the_api_writes_every_file_of_the_results_folder(tmp_path):
    outcome = ldpbench.run({**GIVEN_SPEC, "metrics": ["mse"]}, tmp_path / "out", workers=1)
    assert {p.name for p in outcome.out_dir.iterdir()} >= {"results.jsonl", "manifest.json", "leaderboard.json"}
    rows = json.loads((outcome.out_dir / "leaderboard.json").read_text())
    assert len(rows) == outcome.leaderboard.height


def test_plugins_and_plugins_dirs_are_exclusive(tmp_path):
    with pytest.raises(UsageError, match="not both"):
        ldpbench.run(GIVEN_SPEC, tmp_path, plugins=builtin_plugins(), plugins_dirs=[tmp_path])
