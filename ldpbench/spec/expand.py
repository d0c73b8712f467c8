"""Expand a spec's grid into cells: dataset x budget x mechanism x repeat.

A cell is evaluated with every pipeline and every metric. Its identity (labels, repeat,
simulation and seed) is hashed into ``cell_id``, which keys its rows in the results store.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass

from ldpbench.spec.model import Budget, DatasetEntry, Entry, Shuffle, Spec


@dataclass(frozen=True)
class Cell:
    dataset: DatasetEntry
    budget: Budget
    mechanism: Entry
    repeat: int
    seed: int
    simulation: str
    #: the spec's ``shuffle:`` (the central ε its rows report): not part of the identity, since
    #: it changes no measured number; the rows' code fingerprint holds it
    shuffle: Shuffle | None = None

    @property
    def identity(self) -> tuple[str, ...]:
        return (
            self.dataset.label,
            self.budget.label,
            self.mechanism.label,
            str(self.repeat),
            self.simulation,
        )

    @functools.cached_property
    def cell_id(self) -> str:
        """Hash of the seed and identity (computed once per cell object: every row carries it)."""
        payload = json.dumps([self.seed, *self.identity], separators=(",", ":"))
        return hashlib.sha256(payload.encode()).hexdigest()[:20]


def expand(spec: Spec) -> Iterator[Cell]:
    """All cells of the spec, repeats innermost (so early cells cover the whole grid sooner)."""
    for dataset in spec.datasets:
        for budget in spec.budgets:
            for mechanism in spec.mechanisms:
                for repeat in range(spec.repeats):
                    yield Cell(dataset, budget, mechanism, repeat, spec.seed, spec.simulation, spec.shuffle)


def count_cells(spec: Spec) -> int:
    return len(spec.datasets) * len(spec.budgets) * len(spec.mechanisms) * spec.repeats
