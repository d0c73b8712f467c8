"""Spec level: the users of a repeat are shared by every oracle, and drawn afresh in every repeat.

Personalized budgets ([MHS18]; ``users:`` groups, ldpbench/engine/groups.py) and ``sample: N`` draw the
users of a cell from a stream keyed by (dataset, budget or user mix, repeat) -- never by the
mechanism or the execution order -- so that the oracles of a repeat are compared on the same users
(paired), while each oracle keeps its own perturbation stream (ldpbench/engine/cell.py).

What a cell's users were is observable in the result rows through the users who send their true
value (eps = inf): their part of the estimate is the exact histogram of those users. The probe
metric of tests/support.py (loaded from a plugins folder, as a user's plugin would be) reports a 48-bit digest
of that histogram; an all-``inf`` mix makes even the built-in ``mse`` a function of the users alone.
Everything runs through :func:`ldpbench.run`, the CLI's code path.
"""

from __future__ import annotations

import polars as pl
import pytest
from support import PAIRING_ORACLES, PAIRING_REPEATS, pairing_rows, pairing_values

import ldpbench
from ldpbench.results.store import ResultsStore


@pytest.fixture(scope="module")
def rows(tmp_path_factory) -> pl.DataFrame:
    return pairing_rows(tmp_path_factory.mktemp("pairing"))


def test_only_the_perturbation_differs_between_oracles(rows):
    # Same users, own perturbation: with noisy groups the oracles' errors differ ...
    mse = pairing_values(rows, "mixed", "mse")
    for rep in range(PAIRING_REPEATS):
        assert len({mse[(rep, oracle)] for oracle in PAIRING_ORACLES}) == len(PAIRING_ORACLES)
    # ... and with every user sending the truth they are the same number, bit for bit.
    exact = pairing_values(rows, "exact", "mse")
    for rep in range(PAIRING_REPEATS):
        assert len({exact[(rep, oracle)] for oracle in PAIRING_ORACLES}) == 1


@pytest.mark.parametrize("users", ["mixed", "exact"])
def test_users_are_drawn_afresh_in_every_repeat(rows, users):
    digest = pairing_values(rows, users, "inf-users")
    for oracle in PAIRING_ORACLES:
        per_repeat = [digest[(rep, oracle)] for rep in range(PAIRING_REPEATS)]
        assert len(set(per_repeat)) == PAIRING_REPEATS, f"{oracle}: the same users in several repeats {per_repeat}"
    mse = pairing_values(rows, users, "mse")
    for oracle in PAIRING_ORACLES:
        assert len({mse[(rep, oracle)] for rep in range(PAIRING_REPEATS)}) == PAIRING_REPEATS


def test_sample_path_draws_afresh_in_every_repeat(tmp_path):
    # `sample: N` at eps = inf under GRR (p = 1, q = 0) returns the sampled users' exact histogram,
    # so its MSE is a function of the sample alone: it must change from repeat to repeat.
    spec = {
        "name": "sample-afresh",
        "seed": 5,
        "repeats": PAIRING_REPEATS,
        "datasets": [{"zipf": {"d": 16, "n": 5000, "s": 1.1, "sample": 300}}],
        "epsilons": ["inf"],
        "oracles": ["grr"],
        "pipelines": ["base"],
        "metrics": ["mse"],
    }
    outcome = ldpbench.run(spec, tmp_path / "out", workers=1)
    assert outcome.failed_rows == 0, outcome.errors
    df = ResultsStore(outcome.out_dir).load()
    assert df.height == PAIRING_REPEATS and df["value"].n_unique() == PAIRING_REPEATS
