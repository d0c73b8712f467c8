"""The dataset checks: load() returns a usable Population (non-negative integer counts, at least
one user and one item, a name), the same seed gives the same population, and nothing touches the
global random state."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ldpbench.testing.checks.machinery import Subject, _global_state, _same_state
from ldpbench.types import Dataset, Population


@dataclass(frozen=True)
class DatasetCheckConfig:
    """Seeds of the dataset checks."""

    seed: int = 0


def _load(subject: Subject, seed: int) -> Population:
    dataset = subject.build()
    assert isinstance(dataset, Dataset), f"{subject.label}: building it gave {type(dataset).__name__}, not a Dataset"
    population = dataset.load(np.random.default_rng(seed))
    assert isinstance(population, Population), (
        f"{subject.label}: load() must return a Population, got {type(population).__name__}"
    )
    return population


def check_dataset_population(subject: Subject, cfg: DatasetCheckConfig) -> None:
    """load() gives non-negative int64 counts over at least one item, with at least one user and a name."""
    pop = _load(subject, cfg.seed)
    counts = np.asarray(pop.counts)
    assert counts.dtype == np.int64 and counts.ndim == 1, f"{subject.label}: counts must be a 1-d int64 array"
    assert pop.d >= 1, f"{subject.label}: the population has no items"
    assert pop.n >= 1, f"{subject.label}: the population has no users"
    assert isinstance(pop.name, str) and pop.name, f"{subject.label}: give the population a name (leaderboards show it)"
    if pop.labels is not None:
        assert len(pop.labels) == pop.d, f"{subject.label}: {len(pop.labels)} labels for {pop.d} items"


def check_dataset_reproducible(subject: Subject, cfg: DatasetCheckConfig) -> None:
    """The same seed gives the same population (all randomness from the generator passed in)."""
    a, b = _load(subject, cfg.seed), _load(subject, cfg.seed)
    assert np.array_equal(a.counts, b.counts) and a.name == b.name, (
        f"{subject.label}: two loads with the same seed differ"
    )


def check_dataset_no_global_random_state(subject: Subject, cfg: DatasetCheckConfig) -> None:
    """load() neither draws from nor reseeds numpy's or the stdlib's global random state."""
    before = _global_state()
    _load(subject, cfg.seed)
    assert _same_state(before, _global_state()), (
        f"{subject.label}: the global random state changed; draw only from the rng you are given"
    )


#: The dataset checks, in the order they run.
CHECKS: tuple[Callable[[Subject, Any], None], ...] = (
    check_dataset_population,
    check_dataset_reproducible,
    check_dataset_no_global_random_state,
)
#: Their configuration (:class:`DatasetCheckConfig`).
CONFIG = DatasetCheckConfig


def applies(check: Callable[..., None], subject: Subject, cfg: DatasetCheckConfig) -> bool:
    """Every dataset check concerns every dataset."""
    return True
