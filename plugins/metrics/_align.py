"""Line up the true frequencies with an estimate that may cover only some items."""

from __future__ import annotations

import numpy as np

from ldpbench.types import Estimate, Population


def aligned_truth(truth: Population, estimate: Estimate) -> np.ndarray:
    """True frequencies (fractions) of the items the estimate covers, in its order."""
    f = truth.frequencies
    if estimate.items is None:
        if f.size != estimate.d:
            raise ValueError(f"estimate has {estimate.d} items but the population has {f.size}")
        return f
    return f[np.asarray(estimate.items)]
