"""Populations over bit-string domains, never enumerated: a synthetic Zipf over 2^32 or 2^64 items
(``zipf-bits``) and the AOL queries as 48-bit strings (``aol-bits``).

A Zipf population over ``{0, 1}^bits``: ``support`` distinct items, the item of rank ``r`` (1 = most
frequent) held by a share of users proportional to ``r^(-s)``, the items themselves drawn uniformly
at random from the domain (distinct, seeded by the dataset's stream). Only the ``support`` items
held are ever materialized: memory is O(support) whatever ``bits`` and ``n`` are. The counts are
``n * pmf`` rounded by the largest remainder, as for ``zipf`` (a fixed workload: all randomness of a
run lives in the users' reports). Items beyond the support have frequency 0: a truncated Zipf, which
is what a heavy-hitter method sees of a long tail anyway (docs/data-model.md).
"""

from __future__ import annotations

import numpy as np

from ldpbench import hookimpl
from ldpbench.params import Param
from ldpbench.types import Dataset, Domain, Population
from ldpbench.types.domain import bytes_to_bits

from .search import _read_aol
from .synthetic import MAX_USERS, apportion

#: The most distinct items held (a few vectors of this length are held while loading).
MAX_SUPPORT = 10**7


def distinct_items(m: int, bits: int, rng: np.random.Generator) -> np.ndarray:
    """``m`` distinct items drawn uniformly from ``{0, 1}^bits``, in draw order (uint64).

    Draws a few more than needed and drops repeats (first occurrence kept); with ``m`` far below
    ``2**bits`` one pass almost always suffices. Never lists the domain.
    """
    if m > 1 << bits:
        raise ValueError(f"{m:,} distinct items do not fit a {bits}-bit domain")
    top = np.uint64((1 << bits) - 1)
    found = np.empty(0, dtype=np.uint64)
    while found.size < m:
        extra = rng.integers(0, top, size=m - found.size + 16, dtype=np.uint64, endpoint=True)
        both = np.concatenate([found, extra])
        _, first = np.unique(both, return_index=True)
        found = both[np.sort(first)]
    return found[:m]


class ZipfBits(Dataset):
    """Zipf(``s``) over ``support`` random items of the ``bits``-wide domain (see the module docstring).

    The planted heavy hitters are the head of the Zipf law: the item of rank r has frequency
    ``r^(-s) / H(support, s)``.
    """

    name = "zipf-bits"
    params = (
        Param("bits", int, 64, "width of the items in bits (the domain has 2^bits items)", min=1, max=64),
        Param("n", int, 1_000_000, "number of users", min=1, max=MAX_USERS),
        Param("s", float, 1.1, "Zipf exponent of the items' frequencies", min=0, max=100),
        Param("support", int, 100_000, "distinct items held", min=1, max=MAX_SUPPORT),
    )

    def load(self, rng: np.random.Generator) -> Population:
        support = min(self.support, 1 << self.bits)
        counts = apportion(np.arange(1, support + 1, dtype=float) ** (-self.s), self.n)
        items = distinct_items(support, self.bits, rng)
        order = np.argsort(items)
        return Population(
            counts[order],
            name=f"zipf-bits(bits={self.bits},n={self.n},s={self.s:g},support={support})",
            domain=Domain.bit_strings(self.bits),
            values=items[order],
            info={"synthetic": True, "support": support},
        )


class AOLBits(Dataset):
    """AOL-2006 queries cut to 6 bytes, as 48-bit strings: PEM's experiment data (657,427 users,
    120,978 distinct values; the same shipped file as ``aol-queries``, datasets/aol_queries.md).

    Each 6-byte key (space-padded by the preprocessing) is read big-endian as a 48-bit item
    (:func:`~ldpbench.types.domain.bytes_to_bits`), so a prefix of the bits is a prefix of the
    query text, which is what PEM extends. Labels keep the text (Latin-1, one character per byte).
    Research use only (AOL's terms).
    """

    name = "aol-bits"
    params = (Param("drop_empty_query", bool, False, "drop AOL's empty-query marker '-' (18,720 users)"),)

    def load(self, rng: np.random.Generator) -> Population:
        labels, counts = _read_aol(self.drop_empty_query)
        values = bytes_to_bits([label.encode("latin-1") for label in labels], 48)
        order = np.argsort(values)
        return Population(
            counts[order],
            name="aol-bits",
            labels=[labels[i] for i in order],
            domain=Domain.bit_strings(48),
            values=values[order],
            info={
                "source": "AOL-2006 search log, queries cut to 6 bytes (PEM preprocessing), as 48-bit strings; "
                "datasets/aol_queries.md",
                "terms": "AOL: for non-commercial research use only; do not attempt re-identification",
            },
        )


@hookimpl
def ldpbench_register_datasets(registry):
    registry.register(ZipfBits)
    registry.register(AOLBits)
