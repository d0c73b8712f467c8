"""Domains, records and results: the shapes of what users hold and what a method returns.

See docs/data-model.md for the whole picture. In short:

- a **domain** is either enumerable, ``[d] = {0, ..., d-1}`` (every frequency oracle, every shipped
  histogram), or a space of fixed-width bit strings ``{0, 1}^bits`` with ``bits`` up to 64, which
  no method may enumerate (URLs, words and queries hashed or truncated to 32, 48 or 64 bits; a
  byte string maps to one with :func:`bytes_to_bits`);
- a user's **record** is one item (today's only shape), a set of items, a tuple of attributes or a
  sequence over rounds (:data:`RECORDS`);
- a **result** is a frequency vector (:class:`~ldpbench.types.Estimate`) or a set of identified
  items with estimated frequencies (:class:`~ldpbench.types.IdentifiedItems`); a protocol that
  reports one per round or per attribute returns them as labelled outputs (:data:`RESULTS`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

#: The widest bit-string domain: values are held as ``uint64``.
MAX_BITS = 64

#: A user's record: one item; a set of items (a basket, a session); a tuple of attributes, each
#: over its own domain; a sequence of items over rounds (longitudinal collection).
RECORDS: tuple[str, ...] = ("item", "set", "tuple", "sequence")

#: What a mechanism returns per output: a frequency vector over an enumerable domain, or the
#: items it identified (a heavy-hitter protocol) with their estimated frequencies, or the itemsets
#: it identified (frequent itemset mining over set-valued users) with theirs.
FREQUENCIES = "frequencies"
IDENTIFIED_ITEMS = "identified-items"
IDENTIFIED_ITEMSETS = "identified-itemsets"
RESULTS: tuple[str, ...] = (FREQUENCIES, IDENTIFIED_ITEMS, IDENTIFIED_ITEMSETS)


@dataclass(frozen=True)
class Domain:
    """The set users' items come from.

    :param size: for an enumerable domain, ``d`` (items are ``0 .. d-1``); ignored otherwise.
    :param bits: for a bit-string domain, the width (1..64): items are the integers
        ``0 .. 2**bits - 1``, held as ``uint64``; ``None`` for an enumerable domain.
    """

    size: int = 0
    bits: int | None = None

    def __post_init__(self) -> None:
        if self.bits is not None and not 1 <= self.bits <= MAX_BITS:
            raise ValueError(f"a bit-string domain has 1 to {MAX_BITS} bits, not {self.bits}")
        if self.bits is None and self.size < 0:
            raise ValueError("an enumerable domain has a non-negative size")

    @classmethod
    def enumerable(cls, d: int) -> Domain:
        """``[d]``."""
        return cls(size=int(d))

    @classmethod
    def bit_strings(cls, bits: int) -> Domain:
        """``{0, 1}^bits``, never enumerated."""
        return cls(bits=int(bits))

    @property
    def is_enumerable(self) -> bool:
        """Whether a method may list every item (``[d]``)."""
        return self.bits is None

    @property
    def cardinality(self) -> int:
        """The number of items (a Python int: ``2**64`` does not fit a NumPy integer)."""
        return self.size if self.bits is None else 1 << self.bits

    def describe(self) -> str:
        """``[1,024]`` or ``64-bit strings``, for messages."""
        return f"[{self.size:,}]" if self.bits is None else f"{self.bits}-bit strings"


def bytes_to_bits(strings: Iterable[bytes | str], bits: int) -> np.ndarray:
    """Byte strings as items of the ``bits``-wide domain: the first ``bits // 8`` bytes, big-endian,
    zero-padded (PEM's AOL data: queries cut to 6 bytes = 48 bits; Wang, Li & Jha, TDSC 2019).

    Strings sharing their first ``bits // 8`` bytes become one item, and prefixes of the bit string
    are prefixes of the text, which is what a prefix-extending method needs. ``bits`` must be a
    multiple of 8.
    """
    if bits % 8 or not 8 <= bits <= MAX_BITS:
        raise ValueError(f"bits must be a multiple of 8 between 8 and {MAX_BITS}, not {bits}")
    width = bits // 8
    out = []
    for s in strings:
        raw = s.encode("utf-8") if isinstance(s, str) else bytes(s)
        out.append(int.from_bytes(raw[:width].ljust(width, b"\0"), "big"))
    return np.array(out, dtype=np.uint64)


def bits_to_bytes(values: np.ndarray, bits: int) -> list[bytes]:
    """The inverse of :func:`bytes_to_bits` (trailing zero bytes stripped)."""
    width = bits // 8
    return [int(v).to_bytes(width, "big").rstrip(b"\0") for v in np.asarray(values, dtype=np.uint64)]


__all__ = [
    "FREQUENCIES",
    "IDENTIFIED_ITEMS",
    "IDENTIFIED_ITEMSETS",
    "MAX_BITS",
    "RECORDS",
    "RESULTS",
    "Domain",
    "bits_to_bytes",
    "bytes_to_bits",
]
