"""Domains, sparse populations over bit strings, and identified items (docs/data-model.md)."""

from __future__ import annotations

import numpy as np
import pytest

from ldpbench.types import Domain, Estimate, IdentifiedItems, Population
from ldpbench.types.domain import (
    FREQUENCIES,
    IDENTIFIED_ITEMS,
    IDENTIFIED_ITEMSETS,
    RESULTS,
    bits_to_bytes,
    bytes_to_bits,
)


def test_an_enumerable_domain_and_a_bit_string_domain():
    assert Domain.enumerable(1024).is_enumerable and Domain.enumerable(1024).cardinality == 1024
    wide = Domain.bit_strings(64)
    assert not wide.is_enumerable and wide.cardinality == 2**64 and wide.describe() == "64-bit strings"
    with pytest.raises(ValueError, match="1 to 64 bits"):
        Domain.bit_strings(65)


def test_byte_strings_map_to_big_endian_prefixes_and_back():
    items = bytes_to_bits(["google", "goo", b"\xff" * 9], 48)
    assert items.dtype == np.uint64
    assert int(items[0]) == int.from_bytes(b"google", "big")
    assert int(items[1]) == int.from_bytes(b"goo\0\0\0", "big")  # a prefix of the text stays a prefix
    assert int(items[1]) >> 24 == int(items[0]) >> 24
    assert int(items[2]) == 2**48 - 1  # cut to 6 bytes
    assert bits_to_bytes(items[:2], 48) == [b"google", b"goo"]
    with pytest.raises(ValueError, match="multiple of 8"):
        bytes_to_bits(["x"], 12)


def test_a_population_over_a_bit_string_domain_is_a_sparse_histogram():
    values = np.array([3, 2**63 + 5, 2**64 - 1], dtype=np.uint64)
    pop = Population(np.array([5, 1, 2]), domain=Domain.bit_strings(64), values=values)
    assert pop.n == 8 and pop.d == 3 and not pop.item_domain.is_enumerable
    assert pop.items is values
    # the default stays what it was: [d], items by position
    plain = Population(np.array([1, 2, 3]))
    assert plain.item_domain == Domain.enumerable(3) and plain.items.tolist() == [0, 1, 2]


@pytest.mark.parametrize(
    "values, match",
    [
        (None, "needs 'values'"),
        (np.array([1, 2, 3]), "uint64"),
        (np.array([3, 2, 1], dtype=np.uint64), "strictly increasing"),
        (np.array([1, 2, 2**40], dtype=np.uint64), "outside 32-bit strings"),
    ],
)
def test_a_sparse_population_refuses_values_that_do_not_fit(values, match):
    with pytest.raises(ValueError, match=match):
        Population(np.array([1, 1, 1]), domain=Domain.bit_strings(32), values=values)


def test_values_belong_to_bit_string_domains_only():
    with pytest.raises(ValueError, match="bit-string domain"):
        Population(np.array([1, 1]), values=np.array([0, 1], dtype=np.uint64))
    with pytest.raises(ValueError, match="needs 4 counts"):
        Population(np.array([1, 1]), domain=Domain.enumerable(4))


def test_each_result_says_its_kind_and_identified_items_have_a_digest():
    assert RESULTS == (FREQUENCIES, IDENTIFIED_ITEMS, IDENTIFIED_ITEMSETS)
    assert Estimate(np.zeros(3), 1, 1.0).result == FREQUENCIES
    found = IdentifiedItems(np.array([7, 9], dtype=np.uint64), np.array([0.2, 0.1]), n=10, epsilon=1.0, k=4)
    assert found.result == IDENTIFIED_ITEMS
    same = found.replace(mechanism="x")
    assert same.frequencies_digest() == found.frequencies_digest()
    assert found.replace(frequencies=np.array([0.2, 0.11])).frequencies_digest() != found.frequencies_digest()
    assert found.with_warning("w").warnings == ("w",)
