"""What Apple's count-mean sketches CMS and HCMS share (private): parameters, hash functions, the
estimator and its moments.

[Apple17] Apple Differential Privacy Team, "Learning with Privacy at Scale", Apple Machine Learning
Journal 1(8), 2017, §"Count Mean Sketch" and §"Hadamard Count Mean Sketch". [Pan24] M. Pan,
"Count-mean Sketch as an Optimized Framework for Frequency Estimation with Local Differential
Privacy" / "Improving Count-Mean Sketch as the Leading Locally Differentially Private Frequency
Estimator for Large Dictionaries", arXiv:2406.03785, 2024.

A user holding v picks a hash function h: D -> [m] and privatizes the bucket h(v) (CMS: a one-hot
m-bit vector, every bit flipped; HCMS: one random coefficient of the bucket's Hadamard row, its sign
flipped). Read in the support-set view of Wang et al. (USENIX Security 2017), a report supports w
when it "votes" for the bucket h(w) (CMS: bit h(w) is 1; HCMS: the sent sign is that of row h(w) at
the sent coefficient). With ``p`` the probability that the user's own bucket is voted for and
``q0`` that another given bucket is (CMS: ``q0 = 1 - p``; HCMS: ``q0 = 1/2``, two Hadamard rows
agree on half the coefficients), an item w != v is supported w.p. ``p`` if ``h(w) = h(v)`` and
``q0`` otherwise.

**Two ways to choose h** (the parameter ``estimator``):

- ``unbiased`` (default, [Pan24]'s correction: the hash function must be random for the estimator
  to be unbiased): every user draws her own function from a seeded hash family (a random 64-bit
  seed, as OLH does). For an idealized (fully random) family, ``P(h(w) = h(v)) = 1/m`` exactly, so
  the protocol is pure with ``p* = p`` and ``q* = q0 + (p - q0)/m``, and Apple's estimator below is
  the pure-protocol estimate ``(c/n - q*)/(p* - q*)``: unbiased, with the pure variance
  ``[q*(1-q*) + f (p*-q*)(1-p*-q*)] / (n (p*-q*)^2)``.
- ``apple``: Apple's deployment: a fixed family of ``k`` functions (seeded by ``hash_seed``, shared
  by clients and server); a user picks one of the k uniformly. Apple's estimator is the same
  formula, but given the family it is **biased**: with ``C[w, v]`` the fraction of the k
  functions under which w and v collide, a report of v supports w w.p.
  ``pi[w, v] = q0 + (p - q0) C[w, v]``, so

      E[f_w] = (sum_v f_v pi[w, v] - q*)/(p* - q*),  bias_w = m/(m-1) sum_{v != w} f_v (C[w, v] - 1/m),
      Var[f_w] = sum_v f_v pi[w, v] (1 - pi[w, v]) / (n (p* - q*)^2),

  which is what :meth:`variance` and :func:`expected_estimate` return for this variant (exact,
  given the family). Items that collide with heavy items under more than a 1/m share of the
  functions are over-estimated, the others under-estimated.

Apple's server computes ``f_w = m/(m-1) (1/k sum_j M[j, h_j(w)] - n/m)`` from its debiased sketch
M ([Apple17], the server-side algorithms of both sketches); summing the debiased votes that M holds gives exactly
``m/(m-1) ((c_w/n - q0)/(p - q0) - 1/m)``, i.e. ``(c_w/n - q*)/(p* - q*)``: Apple's estimator and
the pure-protocol estimate are one formula (``tests/unit/plugins/oracles/test_sketch.py`` checks it on a
sketch built Apple's way).

[Pan24]'s full text was not available to us; the equations above are derived here from the
protocol, and agree with its abstract's claims (the original expectation and variance hold only
for random hash functions; randomness in the hash is what removes the bias).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ldpbench.errors import ParamError
from ldpbench.params import Param
from ldpbench.types import Oracle

from . import _hashing
from ._common import check_domain, check_epsilon

ESTIMATORS = ("unbiased", "apple")
#: Largest number of buckets (the per-user path holds m bits per user in CMS).
MAX_BUCKETS = 1 << 16
#: Largest fixed family (the exact variance of the apple variant costs O(k^2 (d + m^2))).
MAX_FUNCTIONS = 1 << 10


def sketch_params(default_m: int) -> tuple[Param, ...]:
    return (
        Param("m", int, default_m, "buckets of the sketch (a power of two)", min=2, max=MAX_BUCKETS),
        Param("k", int, 16, "hash functions of Apple's fixed family (estimator: apple only)", min=1, max=MAX_FUNCTIONS),
        Param(
            "estimator",
            str,
            "unbiased",
            "unbiased: a fresh hash function per user (Pan 2024); "
            "apple: Apple's k fixed functions (biased given the family)",
            choices=ESTIMATORS,
        ),
        Param("hash_seed", int, 0, "seed of Apple's fixed family (estimator: apple only)", min=0),
    )


@dataclass(frozen=True)
class SketchReports:
    """A chunk of reports: the hash function of each user (a 64-bit seed for ``unbiased``, an index
    into the fixed family for ``apple``) and what she privatized (CMS: ``votes`` is the ``(users, m)``
    bit matrix; HCMS: ``coefficient`` and ``votes`` the sent sign, True for +1)."""

    seeds: np.ndarray | None
    function: np.ndarray | None
    votes: np.ndarray
    coefficient: np.ndarray | None = None


def stirling2(n: int, k: int) -> int:
    """Stirling number of the second kind: partitions of n labelled items into k non-empty blocks."""
    table = [[0] * (k + 1) for _ in range(n + 1)]
    table[0][0] = 1
    for i in range(1, n + 1):
        for j in range(1, min(i, k) + 1):
            table[i][j] = j * table[i - 1][j] + table[i - 1][j - 1]
    return table[n][k]


class CountMeanSketch(Oracle):
    """Base of :class:`~.cms.CMS` and :class:`~.hcms.HCMS` (module docstring)."""

    exact_aggregate: ClassVar[bool] = True

    def __init__(
        self, d: int, epsilon: float, m: int, k: int = 16, estimator: str = "unbiased", hash_seed: int = 0, **params
    ):
        super().__init__(d=d, epsilon=epsilon, m=m, k=k, estimator=estimator, hash_seed=hash_seed, **params)
        self.d = check_domain(d, self.name)
        self.epsilon = check_epsilon(epsilon, self.name)
        if math.isinf(self.epsilon):
            raise ParamError(f"oracle '{self.name}' needs a finite epsilon (its sketch is randomized)", "epsilon")
        if not (2 <= m <= MAX_BUCKETS and m & (m - 1) == 0):
            raise ParamError(f"oracle '{self.name}': m must be a power of two in [2, {MAX_BUCKETS}], got {m}", "m")
        if not 1 <= k <= MAX_FUNCTIONS:
            raise ParamError(f"oracle '{self.name}': k must lie in [1, {MAX_FUNCTIONS}], got {k}", "k")
        if estimator not in ESTIMATORS:
            raise ParamError(
                f"oracle '{self.name}': estimator must be one of {ESTIMATORS}, got {estimator!r}", "estimator"
            )
        self.buckets, self.functions, self.variant = int(m), int(k), estimator
        self._keys = _hashing.value_keys(np.arange(self.d))
        self._p, self._q0 = self.vote_probabilities()
        self._q = self._q0 + (self._p - self._q0) / self.buckets
        #: Apple's fixed family: ``table[j, v] = h_j(v)`` (``apple`` only).
        self.table = None
        if self.fixed_family:
            seeds = _hashing.random_seeds(self.functions, np.random.default_rng(int(hash_seed)))
            self.table = _hashing.hash_table(seeds, self._keys, self.buckets)

    # -- what the subclasses define -----------------------------------------------------------
    def vote_probabilities(self) -> tuple[float, float]:
        """``(p, q0)``: P(the own bucket is voted for), P(another given bucket is)."""
        raise NotImplementedError

    @property
    def fixed_family(self) -> bool:
        return self.variant == "apple"

    @property
    def p_star(self) -> float:
        return self._p

    @property
    def q_star(self) -> float:
        """``q0 + (p - q0)/m``: another item shares the user's bucket w.p. 1/m (a random hash)."""
        return self._q

    # -- hash functions of a chunk of reports ---------------------------------------------------
    def draw_functions(self, m_users: int, rng: np.random.Generator) -> tuple[np.ndarray | None, np.ndarray | None]:
        """``(seeds, None)`` (a fresh function per user) or ``(None, function index)`` (apple)."""
        if self.fixed_family:
            return None, rng.integers(0, self.functions, size=m_users)
        return _hashing.random_seeds(m_users, rng), None

    def own_buckets(self, values: np.ndarray, seeds: np.ndarray | None, function: np.ndarray | None) -> np.ndarray:
        if self.fixed_family:
            return self.table[function, values]
        return _hashing.hash_pairs(seeds, self._keys[values], self.buckets)

    def bucket_blocks(self, reports: SketchReports):
        """``(start, stop, buckets)`` over blocks of users; ``buckets[u, w] = h_u(w)`` (int64)."""
        n_users = reports.votes.shape[0]
        step = max(1, _hashing.BLOCK_ELEMENTS // max(1, self.d))
        for start in range(0, n_users, step):
            stop = min(n_users, start + step)
            if self.fixed_family:
                yield start, stop, self.table[reports.function[start:stop]]
            else:
                yield start, stop, _hashing.hash_table(reports.seeds[start:stop], self._keys, self.buckets)

    # -- the apple variant's moments, given its family -------------------------------------------
    def collision_moments(self, f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(sum_v f_v C[w, v], sum_v f_v C[w, v]^2)`` for every w, with C the collision fractions of
        the fixed family, in O(k^2 (d + m^2)) without forming the d x d matrix C."""
        table, k, m = self.table, self.functions, self.buckets
        f = np.asarray(f, dtype=float)
        per_function = np.empty((k, self.d))
        for j in range(k):
            per_function[j] = np.bincount(table[j], weights=f, minlength=m)[table[j]]
        first = per_function.sum(axis=0) / k
        second = per_function.sum(axis=0)
        for j in range(k):
            for i in range(j + 1, k):
                # items colliding under both j and i: same (h_j, h_i) pair of buckets
                _, pair = np.unique(table[j] * m + table[i], return_inverse=True)
                second += 2 * np.bincount(pair, weights=f)[pair]
        return first, second / k**2

    def support_probability(self, f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(sum_v f_v pi[w, v], sum_v f_v pi[w, v]^2)``: a report supports w w.p. ``pi[w, v_u]``."""
        first, second = self.collision_moments(f)
        p, q0 = self._p, self._q0
        f_sum = float(np.sum(f))
        mean = q0 * f_sum + (p - q0) * first
        square = q0**2 * f_sum + 2 * q0 * (p - q0) * first + (p - q0) ** 2 * second
        return mean, square

    def expected_estimate(self, f: np.ndarray) -> np.ndarray:
        """``E[f_hat]`` for true frequencies ``f`` (``f`` itself for ``unbiased``; module docstring)."""
        f = np.asarray(f, dtype=float)
        if not self.fixed_family:
            return f.copy()
        mean, _ = self.support_probability(f)
        return (mean - self._q) / (self._p - self._q)

    def variance(self, n: int, f: np.ndarray) -> np.ndarray:
        """Exact per-item variance: the pure formula for ``unbiased``; given the family for ``apple``."""
        if not self.fixed_family:
            return super().variance(n, f)
        mean, square = self.support_probability(f)
        return (mean - square) / (n * (self._p - self._q) ** 2)
