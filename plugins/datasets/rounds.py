"""Populations over rounds (record ``sequence``, docs/longitudinal.md): every user holds one item
per round of a longitudinal collection.

- ``zipf-rounds``: synthetic. Round 0 is the ``zipf`` dataset's users (``rounds`` rounds in all) (item v held by a share
  proportional to ``(v + 1)^(-s)``, deterministic apportionment); later rounds follow a change
  model (:mod:`ldpbench.types.rounds`): ``static``, ``redraw`` (each user re-draws from Zipf(s)
  with probability ``r`` per round) or ``drift`` (re-draws from Zipf(s) rotated by ``t * shift``
  items in round ``t``: a drifting Zipf).
- ``rounds-of``: a **stand-in**, not real per-period data: a shipped histogram (``retail`` or
  ``kosarak-head``) is round 0, and the change model, with the histogram's shares as its base
  distribution, draws the later rounds. The items and their round-0 shares are real; how users'
  values change over time is the model's, not the data's (no shipped dataset has per-period
  records).

Every round is drawn from the previous one with the round's own stream, derived from the dataset's
seed (:func:`ldpbench.types.rounds.round_streams`): the same spec and seed give the same sequences
on any machine. Memory: ``T`` int64 vectors of ``n`` (O(n) per round), drawn vectorized.
"""

from __future__ import annotations

import numpy as np

from ldpbench import hookimpl
from ldpbench.params import Param
from ldpbench.types import Dataset, Population
from ldpbench.types.rounds import CHANGE_MODELS, Rounds, evolve, round_streams

from .real import shipped_histogram
from .synthetic import MIN_DOMAIN, apportion

#: The most rounds a dataset holds (the (T, n) array is T * n * 8 bytes).
MAX_ROUNDS = 1000
#: The most users a sequence dataset holds (T * n int64 items in memory).
MAX_SEQUENCE_USERS = 10**7

_CHANGE = (
    Param("rounds", int, 10, "number of rounds of collection", min=1, max=MAX_ROUNDS),
    Param("model", str, "redraw", "change model: static, redraw or drift", choices=CHANGE_MODELS),
    Param("r", float, 0.1, "probability that a user re-draws their item in a round", min=0, max=1),
    Param("shift", int, 1, "drift: items the base distribution rotates by per round", min=0, max=10**8),
)


def sequence_population(counts: np.ndarray, T: int, model: str, r: float, shift: int, rng, **fields) -> Population:  # noqa: N803
    """Round 0's users from ``counts`` (users in item order), later rounds by the change model."""
    counts = np.asarray(counts, dtype=np.int64)
    first = np.repeat(np.arange(counts.size, dtype=np.int64), counts)
    items = evolve(first, counts, T, round_streams(rng, T), model=model, r=r, shift=shift)
    rounds = Rounds(items, {"T": T, "model": model, "r": r, "shift": shift})
    return Population(counts, record="sequence", rounds=rounds, **fields)


class ZipfRounds(Dataset):
    """Synthetic users over ``T`` rounds, Zipf(s) in round 0, then a change model (module docstring).

    ``d`` and ``n`` do not declare ``describes``: validation loads the dataset, which is how it
    learns that the users hold sequences (and refuses a one-round oracle on them).
    """

    name = "zipf-rounds"
    params = (
        Param("d", int, 64, "domain size", min=MIN_DOMAIN, max=10**6),
        Param("n", int, 10_000, "number of users", min=1, max=MAX_SEQUENCE_USERS),
        Param("s", float, 1.5, "Zipf exponent (0 gives uniform)", min=0, max=100),
        *_CHANGE,
    )

    def load(self, rng: np.random.Generator) -> Population:
        counts = apportion(np.arange(1, self.d + 1, dtype=float) ** (-self.s), self.n)
        return sequence_population(
            counts,
            self.rounds,
            self.model,
            self.r,
            self.shift,
            rng,
            name=f"zipf-rounds(d={self.d},n={self.n},s={self.s:g},T={self.rounds},{self.model})",
            info={"synthetic": True, "source": "Zipf law in round 0, then the change model", "rounds": self.rounds},
        )


class RoundsOf(Dataset):
    """A shipped histogram as round 0, a change model for the later rounds: a stand-in (module docstring)."""

    name = "rounds-of"
    params = (
        Param("base", str, "kosarak-head", "the shipped histogram of round 0", choices=("kosarak-head", "retail")),
        *_CHANGE,
    )

    def load(self, rng: np.random.Generator) -> Population:
        counts, labels = shipped_histogram(self.base)
        return sequence_population(
            counts,
            self.rounds,
            self.model,
            self.r,
            self.shift,
            rng,
            name=f"rounds-of({self.base},T={self.rounds},{self.model}; stand-in: modelled changes)",
            labels=labels,
            info={
                "source": f"shipped ldpbench_data/{self.base}.csv.gz as round 0; later rounds by the "
                f"'{self.model}' change model (a STAND-IN: no per-period records)",
                "provenance": f"ldpbench_data/{self.base}.md",
                "stand_in": True,
                "rounds": self.rounds,
            },
        )


@hookimpl
def ldpbench_register_datasets(registry):
    registry.register(ZipfRounds)
    registry.register(RoundsOf)
