"""Census populations: the shipped UCI Adult histogram, [MHS18]'s USCensus1990 stand-in.

[MHS18] §5 turns each USCensus1990 respondent into one category of age (8 buckets) x sex (2) x
income (5) x marital status (5) = 400 categories. That dataset is not available to ldpbench; the
``adult`` dataset is the closest census data we ship (``datasets/adult.csv``, provenance in
``datasets/adult.md``): the 48,842 records of UCI Adult (1994 US Census extract) as the histogram of

    age (the same 8 buckets as [MHS18]) x sex (2) x marital status (7) x income (2) = 224 categories.

Adult's income is only ``<=50K`` / ``>50K`` and its marital status has 7 values, hence d = 224
instead of 400; ages start at 17, so the buckets ``0`` and ``1-12`` are empty (56 empty
categories, 80 in all). Results on it are a stand-in, not a reproduction of [MHS18]'s numbers.
"""

from __future__ import annotations

import importlib.resources

import numpy as np

from ldpbench import hookimpl
from ldpbench.types import Dataset, Population

from .histogram import read_histogram_csv

#: The four attributes, in the row-major order of the item index.
FACTORS = {
    "age": ("0", "1-12", "13-19", "20-29", "30-39", "40-49", "50-64", "65+"),
    "sex": ("male", "female"),
    "marital": (
        "married-civ-spouse",
        "widowed",
        "divorced",
        "separated",
        "never-married",
        "married-spouse-absent",
        "married-af-spouse",
    ),
    "income": ("<=50K", ">50K"),
}


class Adult(Dataset):
    """UCI Adult as 224 census categories (age bucket x sex x marital status x income), n = 48,842."""

    name = "adult"

    def load(self, rng: np.random.Generator) -> Population:
        resource = importlib.resources.files("ldpbench_data").joinpath("adult.csv")
        with importlib.resources.as_file(resource) as path:
            counts, labels = read_histogram_csv(path)
        return Population(
            counts,
            name="adult",
            labels=labels,
            info={
                "source": "UCI Adult (Census Income), adult.data + adult.test; datasets/adult.md",
                "factors": {k: list(v) for k, v in FACTORS.items()},
                "shape": [len(v) for v in FACTORS.values()],
                "stand_in_for": "USCensus1990 of [MHS18] (K = 400), which ldpbench does not have",
            },
        )


@hookimpl
def ldpbench_register_datasets(registry):
    registry.register(Adult)
