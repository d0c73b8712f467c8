"""Plugin warnings are read from the declared field (ldpbench/engine/pipeline.py)."""

from __future__ import annotations

import numpy as np

from ldpbench.engine.pipeline import collect_warnings
from ldpbench.types import Estimate


def test_collect_warnings_reads_the_declared_field_not_info():
    est = Estimate(frequencies=np.zeros(2), n=1, epsilon=1.0)
    assert collect_warnings(est) is None
    noted = est.with_warning("EM hit the iteration cap").with_warning("power: alpha clamped")
    assert collect_warnings(noted.with_warning("EM hit the iteration cap")) == (
        "EM hit the iteration cap; power: alpha clamped"
    )
    # info is diagnostics for people: nothing there reaches the rows
    assert collect_warnings(est.replace(info={"warnings": ["x"], "power": {"warnings": ["y"]}})) is None
