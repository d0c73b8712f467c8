"""ADP (plugins/oracles/adp.py): the variance rule that chooses GRR or OUE, the delegate, the choice in the rows."""

from __future__ import annotations

import json
import math

import numpy as np

import ldpbench
from ldpbench.engine.simulate import simulate
from ldpbench_plugins.oracles.adp import Adaptive, prefers_grr
from ldpbench_plugins.oracles.grr import GRR
from ldpbench_plugins.oracles.oue import OUE


def test_adp_follows_the_variance_rule():
    for eps in (0.5, 1.0, 2.0, 4.0, math.inf):
        for d in range(2, 300):
            assert prefers_grr(d, eps) == (d < 3 * math.exp(eps) + 2)
            chosen = Adaptive(d=d, epsilon=eps)
            assert chosen.chosen == ("grr" if prefers_grr(d, eps) else "oue")
    # the rule compares the two approximate variances ([W17] §4)
    for d, eps in ((10, 1.0), (11, 1.0), (200, 4.0)):
        e = math.exp(eps)
        grr_var, oue_var = (e + d - 2) / (e - 1) ** 2, 4 * e / (e - 1) ** 2
        assert Adaptive(d=d, epsilon=eps).chosen == ("grr" if grr_var < oue_var else "oue")


def test_adp_is_its_delegate():
    for d, eps, name in ((8, 1.0, "grr"), (8, 0.5, "oue")):
        adp = Adaptive(d=d, epsilon=eps)
        ref = {"grr": GRR, "oue": OUE}[name](d=d, epsilon=eps)
        assert adp.chosen == name and (adp.p_star, adp.q_star) == (ref.p_star, ref.q_star)
        np.testing.assert_array_equal(adp.output_table()[0], ref.output_table()[0])
        counts = np.arange(d) * 10 + 5
        a = simulate(adp, counts, np.random.default_rng(4), "aggregate")
        b = simulate(ref, counts, np.random.default_rng(4), "aggregate")
        np.testing.assert_array_equal(a.frequencies, b.frequencies)
        assert a.mechanism == "adp" and a.info["diagnostics"] == {"chose": name}
        assert not adp.tags().finite_output and not adp.tags().default


def test_the_choice_reaches_the_rows(tmp_path):
    outcome = ldpbench.run(
        {
            "name": "adp-ss",
            "seed": 3,
            "repeats": 1,
            "datasets": [{"zipf": {"d": 8, "n": 2000}}],
            "epsilons": [0.5, 1],
            "oracles": ["adp", "ss"],
            "pipelines": ["base"],
            "metrics": ["mse"],
        },
        out=tmp_path,
    )
    lines = (outcome.out_dir / "results.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines[1:]]  # after the schema header
    by = {(r["oracle"], r["epsilon"]): r for r in rows}
    assert json.loads(by[("adp", 1.0)]["info"]) == {"chose": "grr"}
    assert json.loads(by[("adp", 0.5)]["info"]) == {"chose": "oue"}
    assert all(r["notes"] is None for r in rows) and outcome.failed_rows == 0
