"""Spec level: the users of a repeat are shared by every oracle, and drawn afresh in every repeat.

Personalized budgets ([MHS18]; ``users:`` groups, ldpbench/engine/groups.py) and ``sample: N`` draw the
users of a cell from a stream keyed by (dataset, budget or user mix, repeat) -- never by the
mechanism or the execution order -- so that the oracles of a repeat are compared on the same users
(paired), while each oracle keeps its own perturbation stream (ldpbench/engine/cell.py).

What a cell's users were is observable in the result rows through the users who send their true
value (eps = inf): their part of the estimate is the exact histogram of those users. The probe
metric below (loaded from a plugins folder, as a user's plugin would be) reports a 48-bit digest
of that histogram; an all-``inf`` mix makes even the built-in ``mse`` a function of the users alone.
Everything runs through :func:`ldpbench.run`, the CLI's code path.
"""

from __future__ import annotations

import textwrap

import polars as pl
import pytest

import ldpbench
from ldpbench.results.store import ResultsStore

ORACLES = ["grr", "oue", "olh", "hr"]
REPEATS = 4

PROBE = textwrap.dedent(
    '''
    """Test probe: a digest of the users who sent their true value (the eps = inf group)."""

    import hashlib
    import math

    import numpy as np

    from ldpbench import hookimpl
    from ldpbench.types import Metric


    class InfUsers(Metric):
        """48-bit digest of the eps = inf group's histogram (exactly representable as a float)."""

        name = "inf-users"

        def score(self, truth, estimate, rng):
            parts = [p for p in estimate.parts if math.isinf(p.epsilon)]
            counts = np.asarray(parts[0].report_histogram, dtype=np.int64)
            return float(int.from_bytes(hashlib.sha256(counts.tobytes()).digest()[:6], "little"))


    @hookimpl
    def ldpbench_register_metrics(registry):
        registry.register(InfUsers)
    '''
)

SPEC = {
    "name": "pairing",
    "seed": 11,
    "repeats": REPEATS,
    "simulation": "aggregate",
    "datasets": [{"zipf": {"d": 16, "n": 5000, "s": 1.1}}],
    "users": {
        # Noisy groups first: the inf group's users are what is left after them, so its digest
        # depends on the whole draw, not only on its own part.
        "mixed": [{"epsilon": 0.5, "count": 150}, {"epsilon": 2, "count": 100}, {"epsilon": "inf", "count": 60}],
        "exact": [{"epsilon": "inf", "count": 300}],
    },
    "oracles": ORACLES,
    "pipelines": ["base"],
    "metrics": ["mse", "inf-users"],
}


@pytest.fixture(scope="module")
def rows(tmp_path_factory) -> pl.DataFrame:
    root = tmp_path_factory.mktemp("pairing")
    (root / "probe").mkdir()
    (root / "probe" / "inf_users.py").write_text(PROBE)
    outcome = ldpbench.run(SPEC, root / "out", workers=1, plugins_dirs=[root / "probe"])
    assert outcome.failed_rows == 0, outcome.errors
    df = ResultsStore(outcome.out_dir).load()
    assert df.height == 2 * len(ORACLES) * REPEATS * 2
    return df


def _values(df: pl.DataFrame, users: str, metric: str) -> dict[tuple[int, str], float]:
    sel = df.filter((pl.col("users") == users) & (pl.col("metric") == metric))
    return {(r["repeat"], r["oracle"]): r["value"] for r in sel.iter_rows(named=True)}


@pytest.mark.slow
@pytest.mark.parametrize("users", ["mixed", "exact"])
def test_every_oracle_of_a_repeat_sees_the_same_users(rows, users):
    digest = _values(rows, users, "inf-users")
    for rep in range(REPEATS):
        seen = {digest[(rep, oracle)] for oracle in ORACLES}
        assert len(seen) == 1, f"repeat {rep}: the oracles saw different users ({seen})"


def test_only_the_perturbation_differs_between_oracles(rows):
    # Same users, own perturbation: with noisy groups the oracles' errors differ ...
    mse = _values(rows, "mixed", "mse")
    for rep in range(REPEATS):
        assert len({mse[(rep, oracle)] for oracle in ORACLES}) == len(ORACLES)
    # ... and with every user sending the truth they are the same number, bit for bit.
    exact = _values(rows, "exact", "mse")
    for rep in range(REPEATS):
        assert len({exact[(rep, oracle)] for oracle in ORACLES}) == 1


@pytest.mark.parametrize("users", ["mixed", "exact"])
def test_users_are_drawn_afresh_in_every_repeat(rows, users):
    digest = _values(rows, users, "inf-users")
    for oracle in ORACLES:
        per_repeat = [digest[(rep, oracle)] for rep in range(REPEATS)]
        assert len(set(per_repeat)) == REPEATS, f"{oracle}: the same users in several repeats {per_repeat}"
    mse = _values(rows, users, "mse")
    for oracle in ORACLES:
        assert len({mse[(rep, oracle)] for rep in range(REPEATS)}) == REPEATS


def test_sample_path_draws_afresh_in_every_repeat(tmp_path):
    # `sample: N` at eps = inf under GRR (p = 1, q = 0) returns the sampled users' exact histogram,
    # so its MSE is a function of the sample alone: it must change from repeat to repeat.
    spec = {
        "name": "sample-afresh",
        "seed": 5,
        "repeats": REPEATS,
        "datasets": [{"zipf": {"d": 16, "n": 5000, "s": 1.1, "sample": 300}}],
        "epsilons": ["inf"],
        "oracles": ["grr"],
        "pipelines": ["base"],
        "metrics": ["mse"],
    }
    outcome = ldpbench.run(spec, tmp_path / "out", workers=1)
    assert outcome.failed_rows == 0, outcome.errors
    df = ResultsStore(outcome.out_dir).load()
    assert df.height == REPEATS and df["value"].n_unique() == REPEATS
