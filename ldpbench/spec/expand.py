"""Expand a spec's grid into cells: dataset x budget x mechanism x poisoning x repeat.

A cell is evaluated with every pipeline and every metric. Its identity (labels, repeat,
simulation and seed) is hashed into ``cell_id``, which keys its rows in the results store.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass

from ldpbench.spec.model import Budget, DatasetEntry, Entry, Poison, Shuffle, Spec


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
    #: the cell's attack (docs/poisoning.md); None for an unattacked cell
    poison: Poison | None = None

    @property
    def identity(self) -> tuple[str, ...]:
        base = (
            self.dataset.label,
            self.budget.label,
            self.mechanism.label,
            str(self.repeat),
            self.simulation,
        )
        # An unattacked cell keeps the identity (and cell_id) it had before attacks existed.
        return base if self.poison is None else (*base, self.poison.label)

    @property
    def output_label(self) -> str:
        """The ``oracle`` of the cell's rows: the mechanism's label, followed by ``@`` and the
        attack's (:attr:`Poison.label`) in an attacked cell."""
        return self.mechanism.label if self.poison is None else f"{self.mechanism.label}@{self.poison.label}"

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
                for poison in spec.poisons or [None]:
                    for repeat in range(spec.repeats):
                        yield Cell(
                            dataset,
                            budget,
                            mechanism,
                            repeat,
                            spec.seed,
                            spec.simulation,
                            shuffle=spec.shuffle,
                            poison=poison,
                        )


def count_cells(spec: Spec) -> int:
    poisons = max(1, len(spec.poisons))
    return len(spec.datasets) * len(spec.budgets) * len(spec.mechanisms) * poisons * spec.repeats
