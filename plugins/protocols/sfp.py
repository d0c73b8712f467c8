"""SFP, Apple's sequence-fragment puzzle (Apple Differential Privacy Team, "Learning with Privacy at
Scale", Apple Machine Learning Journal 1(8), 2017, §"Sequence Fragment Puzzle"; docs/heavy-hitters.md).

Items are ``b``-bit strings (never enumerated), cut into ``L = ceil(b / f)`` fragments of
``f = fragment_bits`` bits, most significant first (``w_l = min(f, b - l f)`` bits at position l).
A public puzzle hash ``h: {0,1}^b -> [2^r]`` (``r = hash_bits``, Apple's 8) ties each fragment to its
word. Each user, with ``epsilon_f = share * epsilon`` and ``epsilon_w = epsilon - epsilon_f``:

1. picks a position ``l`` uniformly from ``[L]`` (independent of her word: sent in the clear, as
   Apple's client does) and reports the key ``(h(v) << w_l) | frag_l(v)`` with CMS or HCMS
   (Apple's fixed family of ``sketch_k`` functions into ``m`` buckets) at ``epsilon_f``: the server
   keeps one sketch per position;
2. reports her whole word with the same sketch at ``epsilon_w`` (sequential composition:
   ``epsilon_f + epsilon_w = epsilon``).

The server estimates, at each position l, every key ``(h, s)`` of ``[2^r] x {0,1}^w_l`` from that
position's sketch (``2^(r + w_l)`` candidates: the fragment space, small, is listed; the words
never are) and keeps the frequent ones (the top ``fragments_kept`` positive estimates, or those
above a frequency ``threshold``, at most ``fragments_kept``); for every puzzle hash h kept at
**every** position it assembles the words ``frag_0 || frag_1 || ... || frag_{L-1}`` from the kept
fragments carrying h (their Cartesian product), drops those whose own puzzle hash is not h (the
puzzle's check), and estimates the survivors with the word sketch: the ``k`` largest positive
estimates are the result. Estimates: Apple's ``(c_w - N q*) / (p* - q*)`` (``_keyed_sketch``),
divided by n (words) or by the position's users (fragments: a uniform sample of the users).

**Paths.** Per-user: every user's position and two reports drawn (O(n m) for CMS, O(n) for HCMS),
summed into the sketches. Aggregate: the users of each distinct word split over the positions
(a multinomial), then each sketch drawn from its exact law given the population (``_keyed_sketch``):
exact in distribution, given the (fixed, public) families, with no idealized hash.

**Departures from Apple's description**: items are bit strings rather than character strings
(a fragment is ``f`` bits, the last one shorter when f does not divide b); the fragment threshold
is the top ``fragments_kept`` per position by default (Apple leaves it to the server); assembled
words are checked against their puzzle hash; when the hash groups' Cartesian products exceed
``max_candidates`` words, the groups with the fewest combinations are assembled first and the rest
dropped (``info['dropped_hashes']``). pure-LDP's ``apple_sfp`` (Samuel-Maddock/pure-LDP) splits the
budget in halves and keeps per-position top-k fragments, as our defaults do.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from ldpbench import hookimpl
from ldpbench.errors import ParamError
from ldpbench.params import Param
from ldpbench.types import Domain, IdentifiedItems, Oracle, Population, Protocol, ProtocolTags
from ldpbench.types.domain import IDENTIFIED_ITEMS
from ldpbench_plugins.oracles import _hashing

from ._candidates import item_keys
from ._keyed_sketch import ORACLES, ROUND_ORACLES, KeyedSketch
from .pem import domain_bits, top

#: Largest fragment key space per position (``hash_bits + fragment_bits``): the server lists it.
MAX_KEY_BITS = 22
#: The puzzle hash's seed (public, fixed): ``h(v) = H_seed(v)`` in the ``_hashing`` family.
PUZZLE_SEED = 0x5F9A_11E5_D1CE_0001


def fragment_layout(bits: int, fragment_bits: int) -> tuple[np.ndarray, np.ndarray]:
    """``(widths, shifts)`` of the ``L = ceil(bits / fragment_bits)`` fragments, most significant
    first: fragment l is ``(v >> shifts[l]) & (2^widths[l] - 1)``."""
    count = -(-bits // fragment_bits)
    starts = np.arange(count) * fragment_bits
    widths = np.minimum(fragment_bits, bits - starts)
    return widths.astype(np.int64), (bits - starts - widths).astype(np.int64)


def puzzle_hash(values: np.ndarray, hash_bits: int, seed: int = 0) -> np.ndarray:
    """The public puzzle hash ``h(v)`` in ``[0, 2^hash_bits)`` of uint64 items (int64)."""
    s = np.uint64((PUZZLE_SEED + int(seed)) % (1 << 64))
    keys = item_keys(values)
    return _hashing.hash_pairs(np.full(keys.size, s, dtype=np.uint64), keys, 1 << hash_bits)


def fragment_keys(values: np.ndarray, hashes: np.ndarray, width: int, shift: int) -> np.ndarray:
    """The key ``(h << width) | fragment`` a holder of ``v`` reports at a position (uint64)."""
    v = np.asarray(values, dtype=np.uint64)
    frag = (v >> np.uint64(shift)) & np.uint64((1 << width) - 1)
    return (hashes.astype(np.uint64) << np.uint64(width)) | frag


def assemble(
    kept: list[np.ndarray], widths: np.ndarray, hash_bits: int, max_candidates: int
) -> tuple[np.ndarray, np.ndarray, int]:
    """Words from the kept fragment keys of every position: for each puzzle hash present at every
    position, the Cartesian product of its fragments. Returns ``(words, their hash, dropped hashes)``:
    hash groups by increasing product size while the total stays within ``max_candidates``."""
    hashes = [np.asarray(k, dtype=np.uint64) >> np.uint64(w) for k, w in zip(kept, widths)]
    common = hashes[0]
    for h in hashes[1:]:
        common = np.intersect1d(common, h)
    common = np.unique(common)
    if common.size == 0:
        return np.empty(0, dtype=np.uint64), np.empty(0, dtype=np.uint64), 0
    orders = [np.argsort(h, kind="stable") for h in hashes]
    sorted_hashes = [h[o] for h, o in zip(hashes, orders)]
    sizes = np.ones(common.size, dtype=np.float64)
    for sh in sorted_hashes:
        sizes *= np.searchsorted(sh, common, "right") - np.searchsorted(sh, common, "left")
    order = np.argsort(sizes, kind="stable")
    fits = np.cumsum(sizes[order]) <= max_candidates
    chosen = np.sort(common[order[fits]])
    dropped = int(common.size - chosen.size)
    # grow the words position by position: (hash, prefix) rows joined with the fragments of that hash
    word_hash, prefix = chosen, np.zeros(chosen.size, dtype=np.uint64)
    for keys, order_l, sh, width in zip(kept, orders, sorted_hashes, widths):
        frags = (np.asarray(keys, dtype=np.uint64) & np.uint64((1 << int(width)) - 1))[order_l]
        lo = np.searchsorted(sh, word_hash, "left")
        many = np.searchsorted(sh, word_hash, "right") - lo
        row = np.repeat(np.arange(word_hash.size), many)
        at = np.repeat(lo - np.cumsum(many) + many, many) + np.arange(row.size)
        word_hash = word_hash[row]
        prefix = (prefix[row] << np.uint64(width)) | frags[at]
    return prefix, word_hash, dropped


class SFP(Protocol):
    """Apple's sequence-fragment puzzle over CMS or HCMS (see the module docstring)."""

    name = "sfp"
    params = (
        Param("k", int, 32, "how many heavy hitters to return at most", min=1, max=4096),
        Param(
            "fragment_bits",
            int,
            8,
            "bits of a fragment (the last one shorter if it does not divide the width)",
            min=1,
            max=16,
        ),
        Param("hash_bits", int, 8, "bits of the puzzle hash tying fragments to their word (Apple's 8)", min=1, max=16),
        Param(
            "oracle",
            str,
            "hcms",
            "the sketch both reports use: Apple's cms or hcms (fixed family)",
            choices=tuple(ORACLES),
        ),
        Param("m", int, 1024, "buckets of each sketch (a power of two)", min=2, max=1 << 16),
        Param("sketch_k", int, 16, "hash functions of each sketch's fixed family", min=1, max=1024),
        Param("hash_seed", int, 0, "seed of the public hash families (the sketches' and the puzzle's)", min=0),
        Param(
            "fragment_share",
            float,
            0.5,
            "the share of epsilon the fragment report spends (the word's: the rest)",
            min=0.01,
            max=0.99,
        ),
        Param(
            "threshold",
            (float, str),
            "top",
            "'top': each position keeps its fragments_kept largest positive estimates; a frequency in "
            "[0, 1]: those estimated at least that share of the position's users (at most fragments_kept)",
            choices=("top",),
            min=0,
            max=1,
        ),
        Param("fragments_kept", int, 256, "most (hash, fragment) keys a position keeps", min=1, max=1 << 16),
        Param(
            "max_candidates", int, 1 << 16, "most assembled words estimated with the word sketch", min=1, max=1 << 22
        ),
    )

    def tags(self) -> ProtocolTags:
        # Lists 2^(hash_bits + fragment_bits) keys per position and the assembled words only.
        return ProtocolTags(result=IDENTIFIED_ITEMS, enumerates_domain=False)

    def budgets(self, epsilon: float) -> tuple[float, float]:
        """``(epsilon_f, epsilon_w)``: the fragment report's and the word report's budgets."""
        eps_f = float(epsilon) * self.fragment_share
        return eps_f, float(epsilon) - eps_f

    def privacy_accounting(self, epsilon: float) -> list[dict[str, Any]]:
        """Every user sends two reports, a fragment at ``share * epsilon`` and her word at the rest
        (sequential composition; the position she sends is independent of her word and costs nothing)."""
        eps_f, eps_w = self.budgets(epsilon)
        return [
            {
                "group": "all users: a fragment report (round 0), then a word report (round 1)",
                "model": "local",
                "epsilon": float(epsilon),
                "per_round": [eps_f, eps_w],
            }
        ]

    def round_oracles(self, epsilon: float, domain: Domain) -> list[tuple[str, type[Oracle], float]]:
        eps_f, eps_w = self.budgets(epsilon)
        cls = ROUND_ORACLES[self.oracle]
        return [("round 0 (fragments)", cls, eps_f), ("round 1 (words)", cls, eps_w)]

    def _sketch(self, epsilon: float, salt: int) -> KeyedSketch:
        return KeyedSketch(self.oracle, epsilon, self.m, self.sketch_k, self.hash_seed + salt)

    def run(
        self, population: Population, epsilon: float, rng: np.random.Generator, *, simulation: str = "aggregate"
    ) -> Mapping[str, IdentifiedItems]:
        if self.hash_bits + self.fragment_bits > MAX_KEY_BITS:
            raise ParamError(
                f"hash_bits + fragment_bits = {self.hash_bits + self.fragment_bits} would list more than "
                f"2^{MAX_KEY_BITS} keys per position",
                key="fragment_bits",
            )
        bits = domain_bits(population.item_domain)
        widths, shifts = fragment_layout(bits, self.fragment_bits)
        positions = widths.size
        n, values, counts = population.n, population.items.astype(np.uint64), population.counts
        eps_f, eps_w = self.budgets(epsilon)
        frag_sketch, word_sketch = self._sketch(eps_f, 0), self._sketch(eps_w, 1)
        hashes = puzzle_hash(values, self.hash_bits, self.hash_seed)
        sketches, users_at = [], []
        if simulation == "per-user":
            holders = np.repeat(np.arange(values.size), counts)
            where = rng.integers(0, positions, size=holders.size)
            for l in range(positions):
                mine = holders[where == l]
                keys = item_keys(fragment_keys(values[mine], hashes[mine], int(widths[l]), int(shifts[l])))
                sketches.append(frag_sketch.sketch_of(keys, rng))
                users_at.append(int(mine.size))
            word = word_sketch.sketch_of(item_keys(values[holders]), rng)
        else:
            split = rng.multinomial(counts, np.full(positions, 1.0 / positions))  # (s, L)
            for l in range(positions):
                keys = item_keys(fragment_keys(values, hashes, int(widths[l]), int(shifts[l])))
                sketches.append(frag_sketch.sample_sketch(keys, split[:, l], rng))
                users_at.append(int(split[:, l].sum()))
            word = word_sketch.sample_sketch(item_keys(values), counts, rng)
        started = time.perf_counter()
        kept = []
        listed = 0
        for l in range(positions):
            candidates = np.arange(1 << (self.hash_bits + int(widths[l])), dtype=np.uint64)
            listed += candidates.size
            users = max(users_at[l], 1)
            support = frag_sketch.support_counts(sketches[l], users_at[l], item_keys(candidates))
            est = frag_sketch.estimate_counts(support, users_at[l]) / users
            cut = 0.0 if self.threshold == "top" else float(self.threshold)
            passed = est > cut if self.threshold == "top" else est >= cut
            kept.append(top(candidates[passed], est[passed], self.fragments_kept)[0])
        words, word_hash, dropped = assemble(kept, widths, self.hash_bits, self.max_candidates)
        words = words[puzzle_hash(words, self.hash_bits, self.hash_seed).astype(np.uint64) == word_hash]
        words = np.unique(words)
        est = word_sketch.estimate_counts(word_sketch.support_counts(word, n, item_keys(words)), n) / max(n, 1)
        items, freqs = top(words, est, self.k)
        positive = freqs > 0
        server = time.perf_counter() - started
        result = IdentifiedItems(
            items=items[positive],
            frequencies=freqs[positive],
            n=n,
            epsilon=float(epsilon),
            k=self.k,
            bits_per_user=float(
                frag_sketch.report_bits() + word_sketch.report_bits() + max(0, math.ceil(math.log2(positions)))
            ),
            server_seconds=server,
            rounds=(
                {"round": "fragments", "users": n, "epsilon": eps_f, "candidates": int(listed)},
                {"round": "words", "users": n, "epsilon": eps_w, "candidates": int(words.size)},
            ),
            info={"dropped_hashes": dropped, "positions": int(positions)},
        )
        return {"top-k": result}


@hookimpl
def ldpbench_register_protocols(registry):
    registry.register(SFP)
