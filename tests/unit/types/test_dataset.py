"""The dataset contract (ldpbench/types/dataset.py): a dataset is a plugin that loads a population."""

from __future__ import annotations

import numpy as np
import pytest

from ldpbench.types import Dataset, Population


class Geometric(Dataset):
    name = "geometric-test"

    def load(self, rng):
        return Population(np.array([8, 4, 2, 1]), name="geometric")


def test_a_dataset_must_implement_load():
    with pytest.raises(TypeError, match="load"):
        type("NoLoad", (Dataset,), {"name": "no-load"})()


def test_load_gives_the_population():
    population = Geometric().load(np.random.default_rng(0))
    assert population.n == 15 and population.d == 4
    np.testing.assert_allclose(population.frequencies, np.array([8, 4, 2, 1]) / 15)
