"""Expand a spec's grid into cells: dataset x budget x mechanism x poisoning x repeat.

A cell is evaluated with every pipeline and every metric. Its identity (labels, repeat,
simulation and seed) is hashed into ``cell_id``, which keys its rows in the results store.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass

from ldpbench.spec.model import Budget, DatasetEntry, Entry, Poison, Spec


@dataclass(frozen=True)
class Cell:
    dataset: DatasetEntry
    budget: Budget
    mechanism: Entry
    repeat: int
    seed: int
    simulation: str
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

    @property
    def cell_id(self) -> str:
        payload = json.dumps([self.seed, *self.identity], separators=(",", ":"))
        return hashlib.sha256(payload.encode()).hexdigest()[:20]


def expand(spec: Spec) -> Iterator[Cell]:
    """All cells of the spec, repeats innermost (so early cells cover the whole grid sooner)."""
    for dataset in spec.datasets:
        for budget in spec.budgets:
            for mechanism in spec.mechanisms:
                for poison in spec.poisons or [None]:
                    for repeat in range(spec.repeats):
                        yield Cell(dataset, budget, mechanism, repeat, spec.seed, spec.simulation, poison)


def count_cells(spec: Spec) -> int:
    poisons = max(1, len(spec.poisons))
    return len(spec.datasets) * len(spec.budgets) * len(spec.mechanisms) * poisons * spec.repeats
