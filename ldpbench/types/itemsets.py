"""Itemsets of set-valued users (docs/data-model.md): the truth a frequent-itemset result is scored
against, computed from a population's CSR sets without enumerating the itemsets.

The support of an itemset X is the number of users whose set contains X; the **true top-k
itemsets** are the k itemsets (of any size >= 1) of largest support, ties by the smaller size, then
by the smaller bit mask (below). Support is anti-monotone (a superset is held by no more users), so
the search is Apriori's with a rising threshold: an item whose support is below the k-th largest
item support cannot be in a top-k itemset (its singletons already give k itemsets at least that
frequent), so only the items F at or above it matter, at most :data:`MAX_ITEMS` of them (the most
frequent, ties by position). Each user's set becomes a bit mask over F; the distinct masks and
their multiplicities replace the users. An itemset of size s + 1 is generated once, from its
prefix (itself without its highest bit), which is at least as frequent, and only from prefixes at
or above the current k-th support T (T only rises): the result is exact whenever F fits the
:data:`MAX_ITEMS` bits and no level holds more than :data:`MAX_LEVEL` itemsets at or above T
(otherwise the level keeps its :data:`MAX_LEVEL` most frequent, stated in the docs).
"""

from __future__ import annotations

import numpy as np

from ldpbench.types.data import Population

#: Items a mask holds (uint64).
MAX_ITEMS = 64
#: Itemsets kept per level of the search (a bound on memory for heavily tied supports).
MAX_LEVEL = 4096
#: Distinct masks x candidates per block of the support count.
_BLOCK = 1 << 22


def user_masks(offsets: np.ndarray, members: np.ndarray, bits: np.ndarray) -> np.ndarray:
    """Each user's set as a uint64 mask: the OR of ``bits[v]`` over the members v (``bits`` a uint64
    per histogram position, 0 for an item outside the masks' items)."""
    offsets = np.asarray(offsets, dtype=np.int64)
    n = offsets.size - 1
    masks = np.zeros(n, dtype=np.uint64)
    if members.size:
        rows = np.repeat(np.arange(n), np.diff(offsets))
        np.bitwise_or.at(masks, rows, bits[np.asarray(members, dtype=np.int64)])
    return masks


def mask_supports(masks: np.ndarray, weights: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """``sum_u weights[u] [masks[u] contains candidates[c]]`` for every candidate (in blocks)."""
    masks = np.asarray(masks, dtype=np.uint64)
    candidates = np.asarray(candidates, dtype=np.uint64)
    out = np.zeros(candidates.size, dtype=np.int64)
    step = max(1, _BLOCK // max(masks.size, 1))
    for start in range(0, candidates.size, step):
        block = candidates[start : start + step]
        held = (masks[:, None] & block[None, :]) == block[None, :]
        out[start : start + step] = np.asarray(weights, dtype=np.int64) @ held
    return out


def popcount(masks: np.ndarray) -> np.ndarray:
    """Bits set in each uint64 mask."""
    b = np.ascontiguousarray(np.asarray(masks, dtype=np.uint64)).view(np.uint8).reshape(-1, 8)
    return np.unpackbits(b, axis=1).sum(axis=1)


def _highest_bit(masks: np.ndarray) -> np.ndarray:
    """Index of the highest set bit of each non-zero uint64 mask."""
    out = np.zeros(masks.size, dtype=np.int64)
    m = masks.copy()
    for shift in (32, 16, 8, 4, 2, 1):
        big = m >= (np.uint64(1) << np.uint64(shift))
        out[big] += shift
        m[big] >>= np.uint64(shift)
    return out


def true_top_itemsets(population: Population, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The true top-k itemsets of a population (module docstring): ``(masks, supports, items)``,
    most frequent first, ``masks`` uint64 over ``items`` (the histogram positions of F, bit j =
    ``items[j]``). A one-item population has singletons only."""
    counts = np.asarray(population.counts, dtype=np.int64)
    d = counts.size
    if population.offsets is None or population.members is None:
        offsets = np.arange(population.n + 1, dtype=np.int64)
        members = np.repeat(np.arange(d, dtype=np.int64), counts)
    else:
        offsets, members = population.offsets, population.members
    positions = np.arange(d, dtype=np.int64)
    order = np.lexsort((positions, -counts))
    held = order[counts[order] > 0]
    if held.size == 0 or k < 1:
        return np.zeros(0, np.uint64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    kth = counts[held[min(k, held.size) - 1]]
    items = held[counts[held] >= kth][:MAX_ITEMS]
    bits = np.zeros(d, dtype=np.uint64)
    bits[items] = np.uint64(1) << np.arange(items.size, dtype=np.uint64)
    umasks, weights = np.unique(user_masks(offsets, members, bits), return_counts=True)
    keep = popcount(umasks) >= 2  # only users with two of F hold an itemset of size >= 2
    umasks, weights = umasks[keep], weights[keep]

    pool_masks = [bits[items]]
    pool_support = [counts[items]]
    frontier, front_support = bits[items], counts[items]
    singles = bits[items]
    while frontier.size and umasks.size:
        everything = np.concatenate(pool_support)
        threshold = np.sort(everything)[::-1][min(k, everything.size) - 1] if everything.size >= k else 1
        good = front_support >= max(threshold, 1)
        frontier, front_support = frontier[good], front_support[good]
        if frontier.size > MAX_LEVEL:
            best = np.lexsort((frontier, -front_support))[:MAX_LEVEL]
            frontier, front_support = frontier[best], front_support[best]
        if frontier.size == 0:
            break
        top = _highest_bit(frontier)
        ext = np.arange(items.size)
        rows, cols = np.nonzero(ext[None, :] > top[:, None])
        candidates = frontier[rows] | singles[cols]
        if candidates.size == 0:
            break
        support = mask_supports(umasks, weights, candidates)
        good = support >= max(threshold, 1)
        frontier, front_support = candidates[good], support[good]
        pool_masks.append(frontier)
        pool_support.append(front_support)
    masks = np.concatenate(pool_masks)
    support = np.concatenate(pool_support)
    best = np.lexsort((masks, popcount(masks), -support))[:k]
    return masks[best], support[best], items


def itemset_masks(population: Population, offsets: np.ndarray, members: np.ndarray, items: np.ndarray) -> np.ndarray:
    """Masks over ``items`` (histogram positions, as :func:`true_top_itemsets` returns them) of
    itemsets given as a CSR pair of uint64 domain items; 0 for an itemset with an item outside
    ``items`` (no true top itemset has mask 0, and none holds such an item)."""
    offsets = np.asarray(offsets, dtype=np.int64)
    m = offsets.size - 1
    members = np.asarray(members, dtype=np.uint64)
    if m <= 0:
        return np.zeros(0, dtype=np.uint64)
    held = population.items
    at = np.minimum(np.searchsorted(held, members), max(held.size - 1, 0))
    found = (held[at] == members) if held.size else np.zeros(members.size, dtype=bool)
    bits = np.zeros(population.d, dtype=np.uint64)
    bits[np.asarray(items, dtype=np.int64)] = np.uint64(1) << np.arange(len(items), dtype=np.uint64)
    member_bits = np.where(found, bits[at], np.uint64(0))
    rows = np.repeat(np.arange(m), np.diff(offsets))
    out = np.zeros(m, dtype=np.uint64)
    np.bitwise_or.at(out, rows, member_bits)
    outside = np.bincount(rows, weights=(member_bits == 0), minlength=m) > 0
    out[outside] = 0
    return out
