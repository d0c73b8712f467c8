"""Users over rounds (record ``sequence``, docs/longitudinal.md): one item per user per round.

:class:`Rounds` holds ``items[t, i]``, the histogram position of user ``i``'s item in round ``t``
(``T`` rows of ``n``: O(n) per round). A change model draws round ``t``'s items from round
``t - 1``'s with the round's own stream (:func:`round_streams`), so the same spec and seed give the
same sequences on any machine and in any order of evaluation (:func:`evolve`, vectorized: no loop
over users).

The change models (:data:`CHANGE_MODELS`), all over a base distribution ``pmf`` of ``[d]``:

- ``static``: every user keeps round 0's item;
- ``redraw``: each user, independently with probability ``r`` per round, re-draws an item from
  ``pmf``;
- ``drift``: as ``redraw``, but round ``t``'s distribution is ``pmf`` rotated by ``t * shift``
  positions (``roll(pmf, t * shift)``: the popular items move; with a Zipf ``pmf``, a drifting Zipf).

This module imports nothing of :mod:`ldpbench.types.data`; the population's hooks call into it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: The change models :func:`evolve` knows.
CHANGE_MODELS = ("static", "redraw", "drift")

#: The label of round ``t``'s output (1-based: ``round-1`` is the first report).
ROUND_LABEL = "round-{t}"
#: The label of the averaged-over-rounds output: the mean of the per-round estimates, scored
#: against the mean of the rounds' true frequencies.
MEAN_LABEL = "rounds-mean"
_ROUND = re.compile(r":round-(\d+)$")


@dataclass(frozen=True, eq=False)
class Rounds:
    """Each user's item in each round: ``items[t, i]`` (a read-only ``(T, n)`` integer array of
    histogram positions), and the change model that drew them (``model``, for people)."""

    items: np.ndarray
    model: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        items = np.asarray(self.items)
        if items.ndim != 2 or items.shape[0] < 1:
            raise ValueError("Rounds.items must be a (T, n) array with T >= 1")
        if not np.issubdtype(items.dtype, np.integer):
            raise ValueError("Rounds.items must be integers (histogram positions)")
        items = np.array(items, dtype=np.int64) if items.flags.writeable else items
        items.setflags(write=False)
        object.__setattr__(self, "items", items)

    @property
    def T(self) -> int:  # noqa: N802 - the papers' name
        """The number of rounds."""
        return int(self.items.shape[0])

    @property
    def n(self) -> int:
        """The number of users."""
        return int(self.items.shape[1])

    def counts(self, t: int, d: int) -> np.ndarray:
        """Round ``t``'s histogram (0-based ``t``)."""
        return np.bincount(self.items[t], minlength=d)

    def check(self, counts: np.ndarray) -> None:
        """Raise unless every item is a position of ``[len(counts))`` and round 0 has ``counts``."""
        d = counts.size
        if self.items.size and (self.items.min() < 0 or self.items.max() >= d):
            raise ValueError(f"Rounds.items must be histogram positions in 0 .. {d - 1}")
        if not np.array_equal(self.counts(0, d), counts):
            raise ValueError("a sequence population's counts must be round 0's histogram")

    def take(self, users: np.ndarray) -> Rounds:
        """The given users' sequences (indices, in the order given)."""
        return Rounds(self.items[:, users], dict(self.model))


def round_of(label: str) -> int | None:
    """The 0-based round of an output labelled ``mechanism:round-t``, else ``None``."""
    m = _ROUND.search(label)
    return int(m.group(1)) - 1 if m else None


def is_rounds_mean(label: str) -> bool:
    """Whether ``label`` names the averaged-over-rounds output (``mechanism:rounds-mean``)."""
    return label.endswith(":" + MEAN_LABEL)


def round_streams(rng: np.random.Generator, T: int) -> list[np.random.Generator]:  # noqa: N803
    """One independent stream per round, derived from one draw of ``rng`` (round ``t``'s stream
    depends on the dataset's seed and ``t`` only)."""
    root = int(rng.integers(0, 2**63 - 1))
    return [np.random.default_rng([root, t]) for t in range(T)]


def evolve(
    first: np.ndarray,
    pmf: np.ndarray,
    T: int,  # noqa: N803
    streams: list[np.random.Generator],
    model: str = "static",
    r: float = 0.0,
    shift: int = 0,
) -> np.ndarray:
    """The ``(T, n)`` items of users holding ``first`` in round 0 under a change model (module
    docstring); ``streams[t]`` draws round ``t`` from round ``t - 1`` (``streams[0]`` is unused)."""
    if model not in CHANGE_MODELS:
        raise ValueError(f"unknown change model {model!r}: one of {', '.join(CHANGE_MODELS)}")
    first = np.asarray(first, dtype=np.int64)
    pmf = np.asarray(pmf, dtype=float) / float(np.sum(pmf))
    d = pmf.size
    out = np.empty((T, first.size), dtype=np.int64)
    out[0] = first
    for t in range(1, T):  # a loop over rounds; each round is vectorized over users
        out[t] = out[t - 1]
        if model == "static" or r <= 0:
            continue
        rng = streams[t]
        moves = np.flatnonzero(rng.random(first.size) < r)
        law = np.roll(pmf, (t * shift) % d) if model == "drift" else pmf
        out[t, moves] = rng.choice(d, size=moves.size, p=law)
    return out
