"""A post-processing pipeline applied to an estimate, and what it leaves for the result rows.

One code path for ``ldpbench run`` and the notebook API (:func:`ldpbench.postprocess`): each step
sees only the previous step's estimate, read-only, and what it returns is checked at the plugin
boundary before the next step sees it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ldpbench.boundary.values import checked_result, frozen_result
from ldpbench.types import Estimate, IdentifiedItems, PostProcessor


def apply_pipeline(
    postprocessors: Sequence[PostProcessor],
    estimate: Estimate | IdentifiedItems,
    rng: np.random.Generator,
    d: int | None = None,
) -> Estimate | IdentifiedItems:
    """Apply a chain of post-processors in order (``[power, norm-sub]`` is PowerNS).

    Each step sees only the previous step's Estimate, read-only; what it returns must be an
    Estimate with finite frequencies of the right shape (``d`` items, or ``len(items)``), else
    :class:`~ldpbench.boundary.values.PluginOutputError`. The steps' names accumulate in
    ``Estimate.steps``. A heavy-hitter protocol's :class:`~ldpbench.types.IdentifiedItems` go
    only through steps whose tags take them (the identity): the validator refuses any other
    pairing, and a step that does not take the result kind fails here, loudly.
    """
    for step in postprocessors:
        if estimate.result not in step.tags().results:
            raise TypeError(f"post-processor '{step.name}' does not take a result of kind '{estimate.result}'")
        out = step.apply(frozen_result(estimate), rng)
        estimate = checked_result(f"post-processor '{step.name}'", out, d)
        if estimate.result != out.result:
            raise TypeError(f"post-processor '{step.name}' changed the kind of its result")
        estimate = estimate.replace(steps=estimate.steps + (step.name,))
    return estimate


def collect_warnings(estimate: Estimate) -> str | None:
    """The estimate's declared :attr:`~ldpbench.types.Estimate.warnings`, distinct and "; "-joined
    (None when there are none): the result rows keep them as ``notes``."""
    return "; ".join(dict.fromkeys(str(w) for w in estimate.warnings)) or None


def row_diagnostics(info: Mapping[str, Any]) -> str | None:
    """``info["diagnostics"]`` as compact JSON for the rows' ``info`` column (None when absent).

    A post-processor that makes a per-repeat choice worth studying (EM-Murakami's alpha) puts a
    small mapping of JSON scalars there; everything else in ``Estimate.info`` stays out of the
    rows, which must stay small.
    """
    found = info.get("diagnostics")
    if not isinstance(found, Mapping) or not found:
        return None
    return json.dumps(dict(found), sort_keys=True, allow_nan=True)
