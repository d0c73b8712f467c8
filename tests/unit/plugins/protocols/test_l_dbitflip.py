"""dBitFlipPM (plugins/protocols/l_dbitflip.py): memoized reports and accounting (the estimator's
moments: tests/statistical/test_l_dbitflip.py)."""

from __future__ import annotations

import numpy as np

from ldpbench.types import Population
from ldpbench.types.rounds import Rounds
from ldpbench_plugins.protocols.l_dbitflip import DBitFlipPM

COUNTS = np.array([600, 400, 250, 150, 100, 0])
N, D = int(COUNTS.sum()), COUNTS.size
STATIC = Population(COUNTS, record="sequence", rounds=Rounds(np.tile(np.repeat(np.arange(D), COUNTS), (2, 1))))


def _make(bits):
    obj = DBitFlipPM.__new__(DBitFlipPM)
    obj.bits, obj.buckets = bits, 0
    return obj


def test_accounting_and_memoized_reports():
    (group,) = _make(2).privacy_accounting(1.5)
    assert group["epsilon_inf"] == group["epsilon_1"] == 1.5
    out = _make(2).run(STATIC, 1.0, np.random.default_rng(0))
    # Nobody changes value: every round resends the same memoized bits.
    assert (out["round-1"].frequencies == out["round-2"].frequencies).all()


def test_a_bucketed_run_is_scored_against_the_bucketed_truth(plugins):
    # the engine reads info["buckets"]: rows' d is k, and the value is the MSE against the bucketed truth
    import ldpbench.engine.cell as engine
    from ldpbench.engine.cell import CellTask, run_cell
    from ldpbench.spec.expand import expand
    from ldpbench.spec.seeding import rng_for
    from ldpbench.spec.validate import load_spec_text
    from ldpbench_plugins.datasets.rounds import ZipfRounds

    spec = load_spec_text(
        "name: buckets\nseed: 3\nrepeats: 1\ndatasets: [{zipf-rounds: {d: 12, n: 600, rounds: 2}}]\n"
        "epsilons: [2]\noracles: [{dbitflip-pm: {buckets: 4, bits: 2}}]\npipelines: [base]\nmetrics: [mse]\n",
        plugins,
    )
    cell = next(iter(expand(spec)))
    with engine.plugins_given(plugins):
        rows = run_cell(CellTask(cell, tuple(spec.pipelines), tuple(spec.metrics), plugins=plugins.source))
    label = cell.mechanism.label
    assert [(r["oracle"], r["d"], r["error"]) for r in rows] == [
        (f"{label}:round-1", 4, None),
        (f"{label}:round-2", 4, None),
        (f"{label}:rounds-mean", 4, None),
    ]
    pop = ZipfRounds(d=12, n=600, rounds=2).load(rng_for(cell.seed, "dataset", cell.dataset.label))
    rng = rng_for(cell.seed, "mechanism", cell.dataset.label, cell.budget.label, cell.mechanism.label, cell.repeat)
    out = DBitFlipPM(bits=2, buckets=4).run(pop, 2.0, rng)
    truth = pop.round_population(1).bucketed(4)
    assert truth.counts.sum() == 600 and truth.d == 4
    assert rows[1]["value"] == np.mean((out["round-2"].frequencies - truth.counts / 600) ** 2)
