"""Simulating an oracle (ldpbench/engine/simulate.py): a clear error where the oracle lacks the
path asked for, users walked in bounded chunks, and rows of an approximate aggregate path labelled."""

from __future__ import annotations

import json

import numpy as np
import pytest
from support import SMALL, GRRPerUserOnly

import ldpbench
from ldpbench.engine.simulate import MissingCapability, approximate_aggregate_note, simulate, user_chunks
from ldpbench.testing import check_oracle
from ldpbench_plugins.oracles.sue import SUE


def test_aggregate_simulation_without_an_aggregate_path_is_a_clear_error_and_not_applicable_in_the_kit():
    with pytest.raises(MissingCapability, match="no aggregate path.*per-user"):
        simulate(GRRPerUserOnly(d=4, epsilon=1.0), np.array([3, 1, 0, 0]), np.random.default_rng(0))
    outcome = check_oracle(GRRPerUserOnly, **SMALL)
    for name in ("check_unbiased_aggregate", "check_variance_aggregate", "check_exact_law_aggregate"):
        assert outcome[name].startswith("skipped") and "aggregate" in outcome[name], outcome[name]
    assert outcome["check_unbiased_per_user"] == "passed"


def test_user_chunks_reproduce_the_histogram():
    counts = np.array([3, 0, 5, 1, 0, 7])
    chunks = list(user_chunks(counts, chunk=4))
    assert [c.size for c in chunks] == [4, 4, 4, 4]
    np.testing.assert_array_equal(np.bincount(np.concatenate(chunks), minlength=6), counts)
    assert all(c.dtype.kind == "i" for c in chunks)


_APPROXIMATE_PLUGIN = """
from ldpbench import hookimpl
from ldpbench_plugins.oracles.oue import OUE


class GaussianishOUE(OUE):
    \"\"\"OUE declaring its aggregate path approximate (a test double).\"\"\"

    name = "approx-oue"
    exact_aggregate = False

    def tags(self):
        import dataclasses
        return dataclasses.replace(super().tags(), default=False)


@hookimpl
def ldpbench_register_oracles(registry):
    registry.register(GaussianishOUE)
"""


def test_rows_of_an_approximate_aggregate_path_are_labelled(tmp_path):
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "approx.py").write_text(_APPROXIMATE_PLUGIN)
    outcome = ldpbench.run(
        {
            "name": "approx",
            "seed": 3,
            "repeats": 1,
            "simulation": "aggregate",
            "datasets": [{"zipf": {"d": 8, "n": 2000}}],
            "epsilons": [1],
            "oracles": ["approx-oue", "oue"],
            "pipelines": ["base", "norm-sub"],
            "metrics": ["mse"],
        },
        out=tmp_path / "out",
        plugins_dirs=[tmp_path / "plugins"],
    )
    lines = (outcome.out_dir / "results.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines[1:]]  # after the schema header
    assert {r["pipeline"] for r in rows if r["oracle"] == "approx-oue"} == {"base", "norm-sub"}
    for r in rows:
        if r["oracle"] == "approx-oue":
            assert r["notes"] == approximate_aggregate_note("approx-oue")
        else:
            assert r["notes"] is None


def test_only_the_aggregate_path_of_an_approximate_oracle_is_labelled():
    class Approximate(SUE):
        exact_aggregate = False

    oracle, counts = Approximate(d=8, epsilon=1.0), np.full(8, 50)
    agg = simulate(oracle, counts, np.random.default_rng(0), "aggregate")
    per_user = simulate(oracle, counts, np.random.default_rng(0), "per-user")
    assert agg.warnings == (approximate_aggregate_note("sue"),) and per_user.warnings == ()
    assert simulate(SUE(d=8, epsilon=1.0), counts, np.random.default_rng(0), "aggregate").warnings == ()


def test_perturb_is_handed_read_only_items_in_a_run():
    from ldpbench_plugins.oracles.grr import GRR

    class SortingGRR(GRR):
        name = "sorting-grr"

        def perturb(self, values, rng):
            values.sort()  # a write into the harness's users
            return super().perturb(values, rng)

    with pytest.raises(ValueError, match="read-only"):
        simulate(SortingGRR(d=4, epsilon=1.0), np.array([3, 2, 1, 0]), np.random.default_rng(0), "per-user")


def test_kept_reports_change_no_number_and_sum_to_the_support_counts():
    from support import builtin_plugins

    oracle = builtin_plugins().create("oracle", "oue", {}, d=8, epsilon=1.0)
    counts = np.array([50, 30, 10, 5, 3, 1, 1, 0])
    plain = simulate(oracle, counts, np.random.default_rng(4), "per-user")
    kept = simulate(oracle, counts, np.random.default_rng(4), "per-user", keep_reports=np.random.default_rng(9))
    np.testing.assert_array_equal(plain.frequencies, kept.frequencies)
    assert plain.report_supports is None and kept.report_supports.shape == (100, 8)
    np.testing.assert_array_equal(kept.report_supports.sum(axis=0), kept.support_counts)
    with pytest.raises(ValueError, match="per-user"):
        simulate(oracle, counts, np.random.default_rng(4), "aggregate", keep_reports=np.random.default_rng(9))
