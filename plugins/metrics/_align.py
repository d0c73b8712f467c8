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


def evaluation_positions(truth: Population, estimate: Estimate, top: int | None = None) -> np.ndarray:
    """Positions (into the estimate's entries) of the items a metric evaluates.

    All entries, or with ``top`` only the ``top`` entries whose **true** frequency is largest
    (ties broken by position), e.g. to compare a full-domain oracle with Blender's head list of
    ``top`` records on the same footing.
    """
    f = aligned_truth(truth, estimate)
    if top is None or top >= f.size:
        return np.arange(f.size)
    order = np.lexsort((np.arange(f.size), -f))
    return np.sort(order[:top])


def covers_whole_domain(truth: Population, estimate: Estimate, positions: np.ndarray) -> bool:
    """Whether the evaluated entries are the population's whole domain."""
    return positions.size == truth.d and estimate.items is None


def rescaled(values: np.ndarray, *, no_mass: str = "raise") -> np.ndarray:
    """``values / sum(values)``: shares within an evaluated universe ([A17] §4.1 rescales after
    removing the wildcard records).

    When the sum is not positive the shares are undefined: ``no_mass="raise"`` raises
    ``ValueError`` (right for the truth, which always has mass on a list built from real users);
    ``"zeros"`` returns all-zero shares, the reading for an *estimate* that puts no mass on the list
    (e.g. a low-eps client estimate projected to all zeros): it found none of the list's mass.
    """
    values = np.asarray(values, dtype=float)
    total = float(values.sum())
    if not total > 0:
        if no_mass == "zeros":
            return np.zeros_like(values)
        raise ValueError(f"cannot rescale values summing to {total:g} to shares")
    return values / total
