"""The dataset contract: :class:`Dataset`."""

from __future__ import annotations

from abc import abstractmethod

import numpy as np

from ldpbench.types.data import Population
from ldpbench.types.plugin import Plugin


class Dataset(Plugin):
    """A population: a shipped histogram, a user's file, or a synthetic generator."""

    @abstractmethod
    def load(self, rng: np.random.Generator) -> Population:
        """Build the population. ``rng`` is keyed by the spec seed and the dataset, not the repeat."""
