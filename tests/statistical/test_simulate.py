"""An oracle with a finite output but no report-histogram sampler runs on the engine's aggregate
path, and the kit checks it there (issue 11: the kit accepted it, then every aggregate cell failed)."""

from __future__ import annotations

import numpy as np
from support import SMALL, GRRNoHistogramSampler

from ldpbench.engine.simulate import simulate
from ldpbench.testing import check_oracle


def test_a_finite_oracle_without_a_histogram_sampler_runs_on_the_aggregate_path():
    counts = np.array([500, 300, 200, 0])
    est = simulate(GRRNoHistogramSampler(d=4, epsilon=1.0), counts, np.random.default_rng(0), "aggregate")
    assert est.support_counts.shape == (4,) and est.report_histogram is None
    # and the kit, which now runs the same code, agrees with the run
    outcome = check_oracle(GRRNoHistogramSampler, **SMALL)
    assert outcome["check_unbiased_aggregate"] == "passed"
    assert outcome["check_exact_law_aggregate"] == "passed"
