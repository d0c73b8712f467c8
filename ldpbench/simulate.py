"""Simulate one oracle on a population of users: the per-user path or the aggregate path.

- ``per-user``: users are perturbed chunk by chunk (:func:`user_chunks`) so memory stays bounded
  for any ``n``; the aggregator sums support counts (or report histograms) over chunks.
- ``aggregate``: the oracle draws the aggregate directly from its exact distribution, O(d).

Both return the oracle's unbiased :class:`~ldpbench.types.Estimate`; for finite-output oracles
the estimate also carries the report histogram and the channel (what EM needs).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from .boundary import checked_counts, checked_estimate, readonly
from .types import Estimate, Oracle

SIMULATIONS = ("aggregate", "per-user")

#: Users per chunk on the per-user path. Fixed (never derived from the machine) so that the random
#: stream, and hence every number, is the same everywhere. Oracles whose reports are O(d) per user
#: may ask for smaller chunks with a ``chunk_users`` attribute.
DEFAULT_CHUNK_USERS = 1 << 20


def user_chunks(counts: np.ndarray, chunk: int) -> Iterator[np.ndarray]:
    """The users' items, ``chunk`` users at a time, without materializing all ``n`` of them.

    Users are taken in item order; the order is irrelevant because every user is perturbed
    independently.
    """
    counts = np.asarray(counts, dtype=np.int64)
    ends = np.cumsum(counts)
    n = int(ends[-1]) if ends.size else 0
    for start in range(0, n, chunk):
        stop = min(start + chunk, n)
        positions = np.arange(start, stop, dtype=np.int64)
        yield np.searchsorted(ends, positions, side="right")


def _has_channel(oracle: Oracle) -> bool:
    return oracle.channel() is not None


def simulate(oracle: Oracle, counts: np.ndarray, rng: np.random.Generator, simulation: str = "aggregate") -> Estimate:
    """The oracle's estimate for users holding the items given by ``counts``."""
    counts = readonly(np.asarray(counts, dtype=np.int64))  # the oracle must not write into the truth
    n = int(counts.sum())
    if n <= 0:
        raise ValueError("cannot simulate an oracle on zero users")
    finite = _has_channel(oracle)
    who = f"oracle '{oracle.name}'"
    width = oracle.channel().n_reports if finite else oracle.d
    if simulation == "aggregate":
        if finite:
            hist = checked_counts(who, "a report histogram", oracle.sample_report_histogram(counts, rng), width)
        else:
            support = checked_counts(who, "support counts", oracle.sample_support_counts(counts, rng), width)
    elif simulation == "per-user":
        chunk = int(getattr(oracle, "chunk_users", DEFAULT_CHUNK_USERS))
        acc = None
        for values in user_chunks(counts, chunk):
            reports = oracle.perturb(values, rng)
            part = oracle.report_histogram(reports) if finite else oracle.support_counts(reports)
            part = checked_counts(who, "a report histogram" if finite else "support counts", part, width)
            acc = part.copy() if acc is None else acc + part
        if finite:
            hist = acc
        else:
            support = acc
    else:
        raise ValueError(f"unknown simulation {simulation!r}; expected one of {SIMULATIONS}")
    if finite:
        hist = readonly(hist)
        support = checked_counts(who, "support counts", oracle.support_counts_from_histogram(hist), oracle.d)
        est = checked_estimate(who, oracle.estimate(readonly(support), n), oracle.d)
        return est.replace(report_histogram=hist, channel=oracle.channel())
    return checked_estimate(who, oracle.estimate(readonly(support), n), oracle.d)
