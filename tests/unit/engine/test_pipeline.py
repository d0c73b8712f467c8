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


def test_identified_items_pass_the_identity_and_no_step_that_does_not_take_them():
    import pytest

    from ldpbench.engine.pipeline import apply_pipeline
    from ldpbench.types import IdentifiedItems
    from ldpbench_plugins.postprocessors.base import Base
    from ldpbench_plugins.postprocessors.consistency import NormSub

    found = IdentifiedItems(np.array([4], dtype=np.uint64), np.array([0.5]), n=10, epsilon=1.0, k=1)
    rng = np.random.default_rng(0)
    out = apply_pipeline([Base()], found, rng)
    assert out.result == "identified-items" and out.steps == ("base",) and out.items.tolist() == [4]
    with pytest.raises(TypeError, match="'norm-sub' does not take a result of kind 'identified-items'"):
        apply_pipeline([NormSub()], found, rng)
