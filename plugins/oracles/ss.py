"""Subset selection (SS, k-subset mechanism) (Wang, Wu & Hu, "Mutual information optimally local
private discrete distribution estimation", arXiv 1607.08025, 2016, §4; Ye & Barg, "Optimal schemes
for discrete distribution estimation under locally differential privacy", IEEE Trans. Inf. Theory
64(8), 2018, §III; [W20] §III-C).

A user holding ``v`` reports a ``k``-subset of the domain: w.p. ``p* = k e^eps / (k e^eps + d - k)``
one that contains ``v`` (``v`` and ``k - 1`` other items uniformly at random), else ``k`` other
items uniformly at random. Every subset containing ``v`` then has probability
``p* / C(d-1, k-1)`` and every other one ``(1 - p*) / C(d-1, k)``, whose ratio is exactly ``e^eps``
(Ye & Barg §III), so the report is eps-LDP.
``Support`` = the subset, so ``p* = k e^eps / (k e^eps + d - k)`` and

    q* = (p* (k - 1) + (1 - p*) k) / (d - 1)

(another item is among the k - 1 others, resp. the k others, uniformly chosen from d - 1 items;
[W20] §III-C). The variance is minimal near ``k = d / (e^eps + 1)`` (Ye & Barg §III); the default
is **k = max(1, round(d / (e^eps + 1)))**, capped at d - 1.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from typing import ClassVar

import numpy as np

from ldpbench import hookimpl
from ldpbench.errors import ParamError
from ldpbench.params import Param
from ldpbench.types import Oracle, OracleTags

from ._common import aggregate_param, as_counts, as_items, check_domain, check_epsilon, exp_neg, independent_binomials
from ._subsets import subset_support_counts

#: ``output_table`` enumerates the C(d, k) subsets while there are at most this many.
_MAX_TABLE_ROWS = 1 << 16
#: Random keys (or subset slots) per chunk of the per-user path: 2M float64 keys are 16 MiB.
_ELEMENTS_PER_CHUNK = 1 << 21
#: Floyd's sampler costs about k^2/2 comparisons per user, the random-key one about d key draws
#: plus a partition; Floyd is used while k^2 <= _FLOYD_FACTOR * d (timed at d = 1,024 and 41,270).
_FLOYD_FACTOR = 8


def default_subset_size(d: int, epsilon: float) -> int:
    """``max(1, round(d / (e^eps + 1)))``, capped at ``d - 1`` (Ye & Barg §III; [W20] §III-C)."""
    t = exp_neg(epsilon)
    return int(min(d - 1, max(1, round(d * t / (1.0 + t)))))


def ss_constants(d: int, k: int, epsilon: float) -> tuple[float, float]:
    """``(p*, q*)`` of subset selection with subset size ``k`` (module docstring)."""
    t = exp_neg(epsilon)
    p = k / (k + (d - k) * t)  # k e^eps / (k e^eps + d - k), finite for eps = inf
    q = (p * (k - 1) + (1 - p) * k) / (d - 1)
    return p, q


def uniform_subsets(m: int, population: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """``(m, k)`` int64: row ``u`` is a uniformly random k-subset of ``[0, population)``, columns in
    no exchangeable order (drop a uniformly random column, not a fixed one, to get a (k-1)-subset).

    Small k: Floyd's algorithm (Bentley & Floyd, "Programming pearls: a sample of brilliance",
    CACM 30(9), 1987), vectorized over users: for ``j = population - k .. population - 1`` draw
    ``t`` uniform on ``[0, j]`` and take ``j`` instead when ``t`` is already chosen. Large k: the k
    smallest of i.i.d. uniform keys (``argpartition``), a uniform k-subset by exchangeability.
    """
    if k >= population:
        return np.broadcast_to(np.arange(population, dtype=np.int64), (m, population)).copy()
    if k * k <= _FLOYD_FACTOR * population:
        chosen = np.empty((m, k), dtype=np.int64)
        for i, j in enumerate(range(population - k, population)):
            t = rng.integers(0, j + 1, size=m)
            taken = (chosen[:, :i] == t[:, None]).any(axis=1)
            chosen[:, i] = np.where(taken, j, t)
        return chosen
    keys = rng.random((m, population))
    return np.argpartition(keys, k - 1, axis=1)[:, :k].astype(np.int64, copy=False)


class SubsetSelection(Oracle):
    """Subset selection: report k items, the true one among them w.p. k e^eps / (k e^eps + d - k).

    - **Per-user path** (:meth:`perturb`): reports are ``(m, k)`` int arrays of distinct items,
      each row sorted (the message is the set: its order must not depend on the user's item).
      Every user draws a uniform k-subset of the d - 1 items other than her own
      (:func:`uniform_subsets`, vectorized over the chunk); a user who includes her own item (w.p.
      p*) puts it in place of one of the k uniformly chosen columns, which leaves a uniform
      (k-1)-subset of the others beside it. ``chunk_users`` bounds a chunk near 2M keys.
    - **Aggregate path** (:meth:`sample_support_counts`): **exact in distribution** (the joint law
      of the whole count vector, whose entries always sum to n k): the mixture form and the
      item-by-item conditional draws of :mod:`._subsets`, O(d) NumPy calls of width about
      12 sqrt(k). Slower than the O(d) vector draws of the other oracles (seconds at
      d = 41,270, n = 8M) but far faster than the per-user path there. Independent binomials with
      the same marginals would be exact per item but not jointly (the estimates would no longer
      sum to exactly 1), which is why they are not the default.
    - **Declared approximation** (``aggregate: marginal``): those independent binomials, O(d)
      (14-27 ms at d = 41,270 on a loaded 2-core box, against 3.9-8 s for the exact sampler, whose cost is the d x w
      binomial draws of its item-by-item walk, w ~ 12 sqrt(k) groups of users: no vectorized
      draw of the joint law of n users' k-subsets is known to us). Each count's law is exact, so
      per-item means, variances and the expected MSE are those of the exact path; the dependence
      across items is not (the counts no longer sum to n k). The rows carry the note of an
      aggregate path with exact marginals only (``exact_aggregate`` False, ``exact_marginals`` True).
    - **Output table**: all C(d, k) subsets while there are at most 65,536.

    ``k`` may be given (1 <= k < d); ``k = 1`` is GRR. ``epsilon = inf`` gives p* = 1.
    """

    name = "ss"
    exact_aggregate: ClassVar[bool] = True
    params = (
        Param("k", int, 0, "subset size, 1 <= k < d; 0 means max(1, round(d / (e^eps + 1)))", min=0),
        aggregate_param("seconds at d = 41,270, n = 8M"),
    )

    def __init__(self, d: int, epsilon: float, **params):
        super().__init__(d=d, epsilon=epsilon, **params)
        self.d = check_domain(d, self.name, minimum=2)
        self.epsilon = check_epsilon(epsilon, self.name)
        k = self.k
        if k and not 1 <= k < self.d:
            raise ParamError(f"oracle 'ss': k must be 0 (automatic) or in [1, d - 1] = [1, {self.d - 1}], got {k}", "k")
        #: The subset size actually used (``k``, or the default rule when ``k == 0``).
        self.subset_size = int(k) if k else default_subset_size(self.d, self.epsilon)
        self._p, self._q = ss_constants(self.d, self.subset_size, self.epsilon)

    def tags(self) -> OracleTags:
        # Each report supports an item through one bit per user: Bernoulli(p*) for the user's own
        # item, Bernoulli(q*) for any other, so ibu's per-item likelihood applies.
        return dataclasses.replace(super().tags(), bernoulli_support=True, exact_aggregate=self.aggregate == "exact")

    @property
    def p_star(self) -> float:
        return self._p

    @property
    def q_star(self) -> float:
        return self._q

    @property
    def chunk_users(self) -> int:
        """Users per chunk: about 2M random keys (or subset slots) per chunk."""
        k = self.subset_size
        per_user = k if k * k <= _FLOYD_FACTOR * (self.d - 1) else self.d - 1
        return int(min(1 << 20, max(1, _ELEMENTS_PER_CHUNK // per_user)))

    # -- client side --------------------------------------------------------------------------
    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        v = as_items(values, self.d)
        k = self.subset_size
        include = np.flatnonzero(rng.random(v.size) < self._p)
        slots = uniform_subsets(v.size, self.d - 1, k, rng)
        items = slots + (slots >= v[:, None])  # slot j of user u stands for item j + (j >= v_u)
        items[include, rng.integers(0, k, size=include.size)] = v[include]
        # What a client sends is the subset, not a list: sorted, the columns carry no trace of
        # which slot the own item took (their order is not uniform: Floyd's sampler fills the
        # slots in a fixed pattern).
        items.sort(axis=1)
        return items

    # -- aggregator side ----------------------------------------------------------------------
    def support_counts(self, reports: np.ndarray) -> np.ndarray:
        return np.bincount(np.asarray(reports, dtype=np.int64).ravel(), minlength=self.d).astype(np.int64)

    def sample_support_counts(self, true_counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The support counts from their exact joint law (:func:`._subsets.subset_support_counts`),
        or with ``aggregate: marginal`` each from its exact law, independently (declared
        approximate: :func:`._common.aggregate_param`)."""
        counts = as_counts(true_counts, self.d)
        if self.aggregate == "marginal":
            return independent_binomials(counts, self._p, self._q, rng)
        return subset_support_counts(counts, self.subset_size, self._p, rng)

    # -- exact audit ------------------------------------------------------------------------------
    def _subsets(self) -> np.ndarray:
        rows = math.comb(self.d, self.subset_size)
        if rows > _MAX_TABLE_ROWS:
            raise ValueError(f"ss: C({self.d}, {self.subset_size}) = {rows} outputs are too many to enumerate")
        return np.array(list(itertools.combinations(range(self.d), self.subset_size)), dtype=np.int64)

    def output_table(self) -> tuple[np.ndarray, np.ndarray]:
        """All k-subsets in lexicographic order: ``P(S | v) = p* / C(d-1, k-1)`` if ``v in S``,
        else ``(1 - p*) / C(d-1, k)``."""
        subsets = self._subsets()
        k = self.subset_size
        S = np.zeros((len(subsets), self.d), dtype=bool)
        S[np.arange(len(subsets))[:, None], subsets] = True
        inside = self._p / math.comb(self.d - 1, k - 1)
        outside = (1 - self._p) / math.comb(self.d - 1, k)
        return np.where(S, inside, outside), S

    def output_rows(self, reports: np.ndarray) -> np.ndarray:
        """Row of :meth:`output_table` of each report, found through the subsets' bit masks."""
        masks = np.left_shift(1, self._subsets()).sum(axis=1)
        order = np.argsort(masks)
        found = np.left_shift(1, np.asarray(reports, dtype=np.int64)).sum(axis=1)
        return order[np.searchsorted(masks, found, sorter=order)]

    def support_matrix(self, reports: np.ndarray) -> np.ndarray:
        """``(n_users, d)`` bools: the reported subsets."""
        reports = np.asarray(reports, dtype=np.int64)
        out = np.zeros((reports.shape[0], self.d), dtype=bool)
        out[np.arange(reports.shape[0])[:, None], reports] = True
        return out


@hookimpl
def ldpbench_register_oracles(registry):
    registry.register(SubsetSelection)
