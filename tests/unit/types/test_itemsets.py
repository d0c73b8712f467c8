"""ldpbench.types.itemsets: the true top-k itemsets against brute force; masks of given itemsets."""

from __future__ import annotations

import itertools

import numpy as np

from ldpbench.types import Population
from ldpbench.types.itemsets import itemset_masks, popcount, true_top_itemsets


def _random_sets(n: int, d: int, seed: int) -> Population:
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, d + 1) ** 1.2
    draws = rng.choice(d, size=(n, 5), p=weights / weights.sum())
    sizes = rng.integers(0, 6, size=n)
    rows = np.repeat(np.arange(n), 5)[np.tile(np.arange(5), n) < np.repeat(sizes, 5)]
    cols = draws.ravel()[np.tile(np.arange(5), n) < np.repeat(sizes, 5)]
    pairs = np.unique(rows * d + cols)
    users, members = pairs // d, pairs % d
    offsets = np.concatenate([[0], np.cumsum(np.bincount(users, minlength=n))])
    return Population.from_sets(offsets, members, d)


def _brute(pop: Population) -> dict[tuple[int, ...], int]:
    support: dict[tuple[int, ...], int] = {}
    for i in range(pop.n):
        s = sorted(pop.members[pop.offsets[i] : pop.offsets[i + 1]].tolist())
        for size in range(1, len(s) + 1):
            for sub in itertools.combinations(s, size):
                support[sub] = support.get(sub, 0) + 1
    return support


def test_the_true_top_itemsets_are_brute_forces():
    for seed, k in [(0, 5), (1, 12), (2, 20)]:
        pop = _random_sets(400, 12, seed)
        masks, supports, items = true_top_itemsets(pop, k)
        brute = _brute(pop)
        want = sorted(brute.values(), reverse=True)[:k]
        assert supports.tolist() == want  # the same supports, in order
        for mask, s in zip(masks.tolist(), supports.tolist()):
            itemset = tuple(sorted(int(items[j]) for j in range(64) if mask >> j & 1))
            assert brute[itemset] == s
        assert np.all(np.diff(supports) <= 0) and np.unique(masks).size == masks.size
        assert np.any(popcount(masks) >= 2)  # itemsets of two items and more are found


def test_a_one_item_population_has_singletons_only_and_masks_map_back():
    pop = Population(np.array([5, 9, 0, 2]))
    masks, supports, items = true_top_itemsets(pop, 3)
    assert supports.tolist() == [9, 5, 2] and popcount(masks).tolist() == [1, 1, 1]
    # the itemsets {1}, {0, 3} and {2} (nobody holds 2): the first maps to item 1's bit, the others to 0
    got = itemset_masks(pop, np.array([0, 1, 3, 4]), np.array([1, 0, 3, 2], dtype=np.uint64), items)
    bit = {int(v): 1 << j for j, v in enumerate(items)}
    assert got.tolist() == [bit[1], bit[0] | bit[3], 0]
