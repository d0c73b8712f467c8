"""Query-workload errors of [W20] §V: random set queries and the most frequent values.

Both ask the estimate for its *answers* (``Estimate.answer`` for set sums,
``Estimate.item_answers`` for single values), so a query-time post-processor such as Post-Pos is
measured on what it really answers, and both respect ``Estimate.items`` (an estimate covering part
of the domain is compared with the true frequencies of those items).
"""

from __future__ import annotations

import hashlib
import itertools
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import scipy  # scipy.sparse loads on first use (a lazy submodule), not with every command

from ldpbench import hookimpl
from ldpbench.params import Param
from ldpbench.types import Estimate, Metric, Population

from ..datasets.synthetic import MAX_DOMAIN
from ._align import aligned_truth

#: The most random subsets a set-query metric draws per trial: each costs O(d), and the error of
#: their mean is settled to well under 1% long before (the default is 100).
MAX_QUERIES = 100_000
#: Bytes of subset indices this process keeps across cells (:func:`_drawn_subsets`): 9.9 MB per
#: repeat for the Kosarak sweep's two set-query metrics (100 subsets of 10% and of 50% of
#: d = 41,270, the latter stored as complements), so its 10 repeats fit.
_SUBSET_CACHE_BYTES = 128 << 20
#: Bytes of summed vectors this process keeps with their sums (:class:`_SumsCache`): 48 vectors at
#: d = 41,270, several cells' worth of the Kosarak sweep's pipelines.
_SUMMED_CACHE_BYTES = 16 << 20
#: A shared vector of ones: the matrices' data (every stored entry is 1).
_ONES = np.ones(0)


def _ones(size: int) -> np.ndarray:
    global _ONES
    if _ONES.size < size:
        _ONES = np.ones(size)
    return _ONES[:size]


def _draw_indices(d: int, size: int, queries: int, rng: np.random.Generator) -> np.ndarray:
    """The sorted columns of every subset S_j (or of its complement when ``size > d - size``), row
    after row: one uniform draw without replacement per query, in order (``Generator.choice``, as
    the metric has always drawn them)."""
    complement = size > d - size
    width = d - size if complement else size
    index_type = np.int32 if max(d, queries * width) < 2**31 else np.int64
    indices = np.empty(queries * width, dtype=index_type)
    keep = np.empty(d, dtype=bool)
    for j in range(queries):  # a loop over queries, not items: each draw is vectorized
        keep[:] = complement
        keep[rng.choice(d, size, replace=False)] = not complement
        # the sorted columns of S or of its complement (a mask is cheaper than a sort)
        indices[j * width : (j + 1) * width] = np.flatnonzero(keep)
    return indices


class _Subsets:
    """``queries`` random subsets of ``size`` items of ``range(d)``, as a sparse 0/1 matrix.

    Each subset is uniform without replacement ([W20] §V; docs/algorithms.md §6.2). A subset larger
    than half the domain is stored as its complement (sum over S = total - sum over the rest), so
    summing costs at most queries x d/2 multiply-adds: ~3 ms for 100 queries on d = 41,270.
    ``indices`` (what :func:`_draw_indices` returned for the same arguments) skips the draw.
    """

    def __init__(
        self, d: int, size: int, queries: int, rng: np.random.Generator | None, indices: np.ndarray | None = None
    ):
        self.complement = size > d - size
        #: Names these subsets in the process-wide cache of sums (:class:`_SumsCache`).
        self.token = next(_TOKENS)
        self._truth: tuple[Any, np.ndarray] | None = None
        #: The sorted columns, row after row (what the process-wide cache keeps).
        self.indices = _draw_indices(d, size, queries, rng) if indices is None else indices
        width = self.indices.size // queries
        indptr = np.arange(queries + 1, dtype=self.indices.dtype) * width
        self.matrix = scipy.sparse.csr_matrix((_ones(self.indices.size), self.indices, indptr), shape=(queries, d))

    def true_sums(self, f: np.ndarray | Callable[[], np.ndarray], counts: np.ndarray | None = None) -> np.ndarray:
        """:meth:`sums` of the true frequencies, remembered (every pipeline of a cell asks, and the
        cells of every mechanism of a repeat share the subsets). ``counts``, when given, is the
        population's read-only count vector that ``f`` was computed from: the same object means the
        same truth, without hashing ``f`` (then ``f`` may be a function that returns it, called only
        when the sums are not remembered)."""
        if counts is not None:
            key: Any = ("counts", counts)
            if self._truth is not None and self._truth[0][0] == "counts" and self._truth[0][1] is counts:
                return self._truth[1]
        if callable(f):
            f = f()
        if counts is None:
            key = ("digest", hashlib.blake2b(np.ascontiguousarray(f, dtype=float).tobytes(), digest_size=16).digest())
            if self._truth is not None and self._truth[0] == key:
                return self._truth[1]
        self._truth = (key, self.sums(f))
        return self._truth[1]

    def sums(self, x: np.ndarray) -> np.ndarray:
        """``sum_{v in S_j} x_v`` for every subset ``S_j`` (a fresh array).

        The sums of a vector equal bit for bit to one summed lately, or prepared by
        :meth:`remember_sums`, are remembered: the same vector gives the same sums from the same
        kernel, bit for bit (:class:`_SumsCache`).
        """
        x = np.asarray(x, dtype=float)
        found = _SUMS.get(self.token, x)
        if found is None:
            found = _SUMS.put(self.token, x, self._sums(x))
        return found.copy()

    def remember_sums(self, vectors: list[np.ndarray]) -> None:
        """Sum the distinct ``vectors`` not yet remembered in one sparse product (``S X`` for the
        d x k matrix ``X`` of those vectors), so that :meth:`sums` of each finds its sums.

        Column j of ``S X`` is summed in the order ``S x_j`` sums, entry after entry of each row
        from 0 (SciPy's ``csr_matvecs`` and ``csr_matvec``), so its bits are those of ``S x_j``;
        reading each stored entry once for k vectors makes it 2-3x cheaper per vector at
        d = 41,270 (``tests/benchmarks/test_bench_grid.py``). Vectors beyond what the cache holds
        are left for :meth:`sums`.
        """
        todo: list[np.ndarray] = []
        seen: dict[tuple[int, int], list[np.ndarray]] = {}
        for x in vectors:
            x = np.asarray(x, dtype=float)
            if x.ndim != 1 or x.size != self.matrix.shape[1]:
                continue
            key, words = _SumsCache.key(x)
            twins = seen.setdefault(key, [])
            if any(np.array_equal(words, w) for w in twins) or _SUMS.get(self.token, x, (key, words)) is not None:
                continue
            twins.append(words)
            todo.append(x)
        todo = todo[: max(1, _SUMMED_CACHE_BYTES // (2 * self.matrix.shape[1] * 8))]
        if len(todo) < 2:
            return
        parts = self.matrix @ np.stack(todo, axis=1)
        for j, x in enumerate(todo):
            part = np.ascontiguousarray(parts[:, j])
            _SUMS.put(self.token, x, x.sum() - part if self.complement else part)

    def _sums(self, x: np.ndarray) -> np.ndarray:
        """The sparse product itself (no cache)."""
        part = self.matrix @ x
        return x.sum() - part if self.complement else part


#: Unique names of :class:`_Subsets` objects (never reused, unlike ``id``).
_TOKENS = itertools.count()


class _SumsCache:
    """Subset sums of the vectors summed lately, by their bits: ``(size, checksum) -> [(read-only
    copy of the vector, {subsets token: read-only sums})]``, least recently used first (the
    vectors under one key differ somewhere: their checksums collide).

    The key is a wrapping sum of the vector's 64-bit words (5 us at d = 41,270, against 0.6-3 ms
    for a product); a hit is confirmed by comparing every word, so two vectors share sums only
    when they are the same numbers (-0.0 and 0.0 are told apart). At most ``most_bytes`` of
    vectors are kept (the newest always).
    """

    def __init__(self, most_bytes: int):
        self.most_bytes = most_bytes
        self._entries: OrderedDict[tuple[int, int], list[tuple[np.ndarray, dict[int, np.ndarray]]]] = OrderedDict()
        self._held = 0
        self._lock = threading.Lock()

    @staticmethod
    def key(x: np.ndarray) -> tuple[tuple[int, int], np.ndarray]:
        """The cache key of ``x`` (its size and the wrapping sum of its words) and its words."""
        words = np.ascontiguousarray(x, dtype=np.float64).view(np.int64)
        return (words.size, int(words.sum())), words  # NumPy's integer sums wrap around, never raise

    def _find(self, key: tuple[int, int], words: np.ndarray) -> dict[int, np.ndarray] | None:
        for vector, by_subsets in self._entries.get(key, ()):
            if np.array_equal(vector, words):
                self._entries.move_to_end(key)
                return by_subsets
        return None

    def get(
        self, token: int, x: np.ndarray, keyed: tuple[tuple[int, int], np.ndarray] | None = None
    ) -> np.ndarray | None:
        """The remembered sums of ``x`` over the subsets named ``token``, or None (``keyed``:
        what :meth:`key` gave for ``x``, if the caller has it)."""
        key, words = self.key(x) if keyed is None else keyed
        with self._lock:
            by_subsets = self._find(key, words)
            return None if by_subsets is None else by_subsets.get(token)

    def put(self, token: int, x: np.ndarray, sums: np.ndarray) -> np.ndarray:
        """Remember ``sums`` as those of ``x`` over the subsets named ``token``; returns them read-only."""
        sums = np.array(sums, dtype=float)
        sums.flags.writeable = False
        key, words = self.key(x)
        with self._lock:
            by_subsets = self._find(key, words)
            if by_subsets is None:
                vector = words.copy()
                vector.flags.writeable = False
                by_subsets = {}
                self._entries.setdefault(key, []).append((vector, by_subsets))
                self._entries.move_to_end(key)
                self._held += vector.nbytes
            by_subsets[token] = sums
            while self._held > self.most_bytes and len(self._entries) > 1:
                _, dropped = self._entries.popitem(last=False)
                self._held -= sum(v.nbytes for v, _ in dropped)
        return sums

    def clear(self) -> None:
        """Forget every vector."""
        with self._lock:
            self._entries.clear()
            self._held = 0


_SUMS = _SumsCache(_SUMMED_CACHE_BYTES)


def _state_key(rng: np.random.Generator) -> str:
    """The generator's full state as a hashable key (its bit generator's name and words)."""
    return repr(rng.bit_generator.state)


#: ``(d, size, queries, state) -> (subsets, state after the draw)``, least recently used first.
_DRAWN: OrderedDict[tuple[Any, ...], tuple[_Subsets, dict]] = OrderedDict()
_DRAWN_LOCK = threading.Lock()


def _drawn_subsets(d: int, size: int, queries: int, rng: np.random.Generator) -> _Subsets:
    """The subsets a generator in this state draws, drawn once per process while they fit.

    The metric's stream is keyed by the repeat, not the mechanism (engine/scoring.py), so every
    mechanism of a repeat asks for the same subsets: drawing them (O(queries x d) generator calls)
    was the largest cost of the Kosarak-scale sweep. The cache is bounded by
    :data:`_SUBSET_CACHE_BYTES` of indices. A hit leaves the generator in the state the draw would
    have left it in, so the numbers are those of a fresh draw.
    """
    key = (d, size, queries, _state_key(rng))
    with _DRAWN_LOCK:
        hit = _DRAWN.get(key)
        if hit is not None:
            _DRAWN.move_to_end(key)
    if hit is not None:
        rng.bit_generator.state = hit[1]
        return hit[0]
    subsets = _Subsets(d, size, queries, rng)
    with _DRAWN_LOCK:
        _DRAWN[key] = (subsets, rng.bit_generator.state)
        while sum(entry.indices.nbytes for entry, _ in _DRAWN.values()) > _SUBSET_CACHE_BYTES and len(_DRAWN) > 1:
            _DRAWN.popitem(last=False)
    return subsets


class SetQuery(Metric):
    """Set-query MSE ([W20] §V): squared error of the answers to random subsets of rho% of the domain.

    Each of ``queries`` subsets S holds round(rho d / 100) items drawn uniformly without
    replacement; the error is ``(A(S) - sum_{v in S} f_v)^2`` with A(S) the method's answer
    (``Estimate.answer``: the clipped sum under Post-Pos), averaged over the queries. When the
    estimate sums to 1 the error of S equals that of its complement (symmetry about rho = 50%).
    Cost O(queries x d) to draw the subsets once per cell, O(queries x d/2) per pipeline.
    """

    name = "set-query"
    params = (
        Param("rho", float, 10.0, "subset size as a percentage of the domain", min=1e-9, max=100.0),
        Param("queries", int, 100, f"random subsets per trial (at most {MAX_QUERIES:,})", min=1, max=MAX_QUERIES),
    )

    def subset_size(self, d: int) -> int:
        """round(rho d / 100), at least 1."""
        return max(1, min(d, int(round(self.rho * d / 100.0))))

    def _subsets(self, d: int, rng: np.random.Generator) -> _Subsets:
        # The runner hands every pipeline of a cell (and every mechanism of a repeat) a generator
        # in the same state, so all methods answer the same queries (paired comparisons). Drawing
        # them is the costly part; a generator in the same state would draw the same subsets, so
        # they are reused, and the generator left in the state the draw would have left it in.
        return _drawn_subsets(d, self.subset_size(d), self.queries, rng)

    def score(self, truth: Population, estimate: Estimate, rng: np.random.Generator) -> float:
        # the whole domain: f is truth.counts / n, so the (read-only) counts object names the truth,
        # and f is computed only when the true sums are not remembered
        counts = truth.counts if estimate.items is None and not truth.counts.flags.writeable else None
        if counts is not None:
            if counts.size != estimate.d:  # what aligned_truth says
                raise ValueError(f"estimate has {estimate.d} items but the population has {counts.size}")
            d, f = counts.size, (lambda: aligned_truth(truth, estimate))
        else:
            f = aligned_truth(truth, estimate)
            d = f.size
        subsets = self._subsets(d, rng)
        answers = estimate.answer(subsets.sums(np.asarray(estimate.frequencies, dtype=float)))
        return float(np.mean((answers - subsets.true_sums(f, counts)) ** 2))

    def prepare(self, truth: Population, estimates: Sequence[Estimate], rng: np.random.Generator) -> None:
        """Sum the whole-domain estimates' vectors over this metric's subsets in one product
        (:meth:`_Subsets.remember_sums`); :meth:`score` then finds each one's sums, the same bits."""
        d = int(truth.counts.size)
        vectors = [e.frequencies for e in estimates if e.items is None and e.d == d]
        if len(vectors) >= 2:
            self._subsets(d, rng).remember_sums(vectors)


class TopKMSE(Metric):
    """Top-k MSE ([W20] §V, "frequencies of the most frequent values"): MSE over k items.

    ``(1/k) sum_{v in K} (f'_v - f_v)^2`` with K the k items of largest **true** frequency
    (``by: truth``, default) or of largest estimated answer (``by: estimate``); ties go to the
    smaller index. k is capped at the number of items. Cost O(d log d).
    """

    name = "topk-mse"
    params = (
        Param("k", int, 32, "number of most frequent items", min=1, max=MAX_DOMAIN),
        Param(
            "by",
            str,
            "truth",
            "choose the top k by the true or by the estimated frequencies",
            choices=("truth", "estimate"),
        ),
    )

    def score(self, truth: Population, estimate: Estimate, rng: np.random.Generator) -> float:
        f = aligned_truth(truth, estimate)
        answers = estimate.item_answers()
        if self.by == "truth" and estimate.items is None and not truth.counts.flags.writeable:
            top = _top_of_truth(truth.counts, f, min(self.k, f.size))
        else:
            ranked = f if self.by == "truth" else answers
            top = np.argsort(-ranked, kind="stable")[: min(self.k, f.size)]
        return float(np.mean((answers[top] - f[top]) ** 2))


#: ``(counts, k, top)`` of the last truths ranked (:func:`_top_of_truth`).
_TOPS: list[tuple[np.ndarray, int, np.ndarray]] = []


def _top_of_truth(counts: np.ndarray, f: np.ndarray, k: int) -> np.ndarray:
    """The k items of largest true frequency (ties to the smaller index), remembered for the
    population's read-only count vector (the same object means the same truth): every pipeline
    and mechanism of a dataset ranks the same truth."""
    for seen, seen_k, top in _TOPS:
        if seen is counts and seen_k == k:
            return top
    top = np.argsort(-f, kind="stable")[:k]
    top.flags.writeable = False
    _TOPS[:] = [(counts, k, top), *_TOPS[:3]]
    return top


@hookimpl
def ldpbench_register_metrics(registry):
    registry.register(SetQuery)
    registry.register(TopKMSE)
