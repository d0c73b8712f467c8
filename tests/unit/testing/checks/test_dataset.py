"""The dataset checks of the conformance kit (ldpbench/testing/checks/dataset.py) fail on broken datasets, naming the check."""

from __future__ import annotations

import numpy as np
import pytest

from ldpbench.testing import dataset_checks
from ldpbench.types import Dataset, Population


class Geometric(Dataset):
    name = "geometric-kit"

    def load(self, rng):
        return Population(np.array([50, 25, 12, 6, 3, 2, 1, 1]), name="geometric")


class UnseededDataset(Geometric):
    name = "unseeded"

    def load(self, rng):
        return Population(np.random.default_rng().integers(1, 100, size=8), name="unseeded")


class Empty(Geometric):
    name = "empty"

    def load(self, rng):
        return Population(np.zeros(8, dtype=np.int64), name="empty")


@pytest.mark.parametrize(
    ("dataset", "failing"), [(UnseededDataset, "check_dataset_reproducible"), (Empty, "check_dataset_population")]
)
def test_a_broken_dataset_fails_its_check(dataset, failing):
    checks = dict(dataset_checks(dataset))
    with pytest.raises(AssertionError, match="no users|differ"):
        checks[failing]()
