"""The shipped adult histogram ([MHS18]'s USCensus1990 stand-in): shape, totals, labels, plugin."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from support import builtin_plugins

from ldpbench_plugins.datasets.census import FACTORS


@pytest.fixture(scope="module")
def adult():
    return builtin_plugins().create("dataset", "adult", {}).load(np.random.default_rng(0))


def test_adult_has_224_categories_and_every_record(adult):
    assert adult.d == 8 * 2 * 7 * 2 == 224
    assert adult.n == 48_842  # adult.data (32,561) + adult.test (16,281)
    assert adult.info["shape"] == [8, 2, 7, 2]


def test_labels_follow_the_row_major_factor_order(adult):
    expected = [f"age={a}|sex={s}|marital={m}|income={i}" for a, s, m, i in itertools.product(*FACTORS.values())]
    assert list(adult.labels) == expected


def test_known_counts(adult):
    cube = adult.counts.reshape(8, 2, 7, 2)
    assert cube[:2].sum() == 0  # Adult has no one under 17: the buckets 0 and 1-12 are empty
    assert (adult.counts == 0).sum() == 80
    assert cube.sum(axis=(0, 2, 3)).tolist() == [32_650, 16_192]  # male, female
    assert cube.sum(axis=(0, 1, 2)).tolist() == [37_155, 11_687]  # <=50K, >50K
    top = np.argsort(-adult.counts)[:3]
    assert adult.counts[top].tolist() == [4592, 3610, 3414]
    assert adult.labels[top[0]] == "age=20-29|sex=male|marital=never-married|income=<=50K"


def test_frequencies_sum_to_one(adult):
    assert adult.frequencies.sum() == pytest.approx(1.0, abs=1e-12)
