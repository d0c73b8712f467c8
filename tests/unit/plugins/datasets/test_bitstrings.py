"""zipf-bits: a Zipf population over 2^bits items, never enumerated."""

from __future__ import annotations

import numpy as np
import pytest

from ldpbench_plugins.datasets.bitstrings import ZipfBits, distinct_items


@pytest.mark.parametrize("bits", [8, 32, 64])
def test_zipf_bits_is_a_sparse_zipf_histogram_over_the_domain(bits):
    pop = ZipfBits(bits=bits, n=100_000, s=1.2, support=200).load(np.random.default_rng(1))
    assert pop.n == 100_000 and pop.d == 200 and pop.item_domain.bits == bits
    assert pop.values.dtype == np.uint64 and np.all(np.diff(pop.values.astype(float)) > 0)
    head = np.sort(pop.counts)[::-1]
    # rank r holds n r^-s / H(200, 1.2), rounded: the head ratio is 2^1.2
    assert abs(head[0] / head[1] - 2**1.2) < 0.01
    if bits == 64:
        assert pop.values.max() > np.uint64(2**40)  # spread over the whole domain


def test_zipf_bits_is_a_function_of_its_seed():
    a = ZipfBits(support=50).load(np.random.default_rng(5))
    b = ZipfBits(support=50).load(np.random.default_rng(5))
    assert np.array_equal(a.values, b.values) and np.array_equal(a.counts, b.counts)


def test_distinct_items_fill_a_small_domain_exactly():
    items = distinct_items(256, 8, np.random.default_rng(0))
    assert sorted(items.tolist()) == list(range(256))
    with pytest.raises(ValueError, match="do not fit"):
        distinct_items(257, 8, np.random.default_rng(0))


def test_aol_bits_is_the_aol_histogram_as_48_bit_strings():
    from ldpbench_plugins.datasets.bitstrings import AOLBits

    pop = AOLBits().load(np.random.default_rng(0))
    assert pop.n == 657_427 and pop.d == 120_978 and pop.item_domain.bits == 48
    google = int.from_bytes(b"google", "big")
    at = int(np.searchsorted(pop.values, np.uint64(google)))
    assert int(pop.values[at]) == google and pop.counts[at] == 12_292 and pop.labels[at] == "google"
    # prefixes of the bits are prefixes of the text: every 'www.' query shares its top 32 bits
    www = pop.values >> np.uint64(16) == np.uint64(int.from_bytes(b"www.", "big"))
    assert pop.counts[www].sum() > 10_000
    assert AOLBits(drop_empty_query=True).load(np.random.default_rng(0)).n == 657_427 - 18_720


@pytest.mark.parametrize("bits", [32, 64])
def test_zipf_bits_builds_in_memory_of_its_support_never_of_the_domain_or_the_users(bits):
    """10^9 users of 10^5 items of a 2^32 or 2^64 domain: the arrays are O(support) (a few of
    10^5 x 8 bytes: well under 16 MB), where listing the domain or the users would take >= 8 GB."""
    import tracemalloc

    tracemalloc.start()
    try:
        pop = ZipfBits(bits=bits, n=10**9, s=1.1, support=100_000).load(np.random.default_rng(2))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert pop.n == 10**9 and pop.d == 100_000 and peak < 16 * 2**20
    assert np.unique(pop.values).size == 100_000 and int(pop.values.max()) < 2**bits
    # The items are uniform over the domain: the top bit is set for about half of them (50,000 ±
    # 158 at one sigma; 8 sigma allowed).
    top = (pop.values >> np.uint64(bits - 1)).astype(np.int64)
    assert abs(int(top.sum()) - 50_000) < 8 * 158
