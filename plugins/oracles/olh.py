"""Optimized local hashing (OLH) ([W17] §4.4; [W20] §III-B, Eq. 2; docs/algorithms.md §1.2).

Each user draws a hash function ``H: D -> [0, g)`` (a random seed), hashes her value and
perturbs the hash with GRR over ``g`` values; the report ``<H, y>`` supports
``{v : H(v) = y}``. ``p* = e^eps / (e^eps + g - 1)``, ``q* = 1/g``. The variance is minimal at the
real ``g = e^eps + 1`` ([W17]); the integer default is **g = round(e^eps) + 1**, the rule of the
authors' ``olh.py`` ([W20-code]; the PEM code uses floor instead) — set ``g`` to override.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ldpbench import hookimpl
from ldpbench.errors import ParamError
from ldpbench.params import Param
from ldpbench.types import Oracle, OracleTags

from . import _hashing
from ._common import as_counts, as_items, check_domain, check_epsilon, exp_neg, independent_binomials

#: ``output_table`` enumerates the whole hash family while it has at most this many outputs.
_FULL_TABLE_MAX = 1 << 16


def olh_constants(epsilon: float, g: float) -> tuple[float, float]:
    """``(p*, q*) = (e^eps / (e^eps + g - 1), 1 / g)``; ``g`` may be real (the optimum e^eps + 1)."""
    t = exp_neg(epsilon)
    return 1.0 / (1.0 + (g - 1) * t), 1.0 / g


def default_range(epsilon: float) -> int:
    """``round(e^eps) + 1`` ([W20-code] ``olh.py``)."""
    if not math.isfinite(epsilon) or epsilon > math.log(_hashing.MAX_RANGE - 1):
        raise ParamError(
            f"oracle 'olh': the default g = round(e^eps) + 1 is too large for epsilon={epsilon}; "
            f"give g explicitly (2 <= g < 2^32)",
            "g",
        )
    return int(round(math.exp(epsilon))) + 1


@dataclass(frozen=True)
class OLHReports:
    """A chunk of OLH reports: user ``i`` sent the hash seed ``seeds[i]`` and the value ``y[i]``."""

    seeds: np.ndarray
    y: np.ndarray


class OLH(Oracle):
    """Optimized local hashing: hash to g = round(e^eps)+1 buckets, then GRR over the g buckets.

    - **Per-user path** uses a **real seeded hash family**: one random 64-bit seed per user and
      the splitmix64-based ``H_s(v)`` of :mod:`._hashing` (vectorized uint64 arithmetic). GRR over
      ``g`` is "keep the hash w.p. ``p_g - q_g``, else a value uniform on all g", with
      ``p_g = e^eps/(e^eps+g-1)``, ``q_g = 1/(e^eps+g-1)`` — the textbook GRR (docs/algorithms.md §1.2).
      ``support_counts`` evaluates the hash on (users x domain) in cache-sized blocks: O(m d) time,
      O(1) extra memory per block.
    - **Aggregate path**: ``c_v ~ Binomial(n_v, p*) + Binomial(n - n_v, 1/g)``, independent over v.
      **Exact in distribution w.r.t. the idealized protocol** (a fully random hash function per
      user: given ``H(v_u)`` and ``y_u`` the other values' hashes are i.i.d. uniform, so their
      support indicators are i.i.d. Bernoulli(1/g), independent of the own one). **Approximate
      w.r.t. the per-user path**: a real hash family has the right marginals (to 2^-32) but its
      cross-value independence is only approximate (docs/algorithms.md §1.3: "idealized-hash OLH").
    """

    name = "olh"
    exact_aggregate: ClassVar[bool] = True
    params = (
        Param(
            "g",
            int,
            0,
            "hash range, 2 to 2^32 - 1; 0 means round(e^eps) + 1 (the rule of [W20]'s olh.py)",
            min=0,
            max=_hashing.MAX_RANGE,
            forbid=(1,),
        ),
    )

    def __init__(self, d: int, epsilon: float, **params):
        super().__init__(d=d, epsilon=epsilon, **params)
        self.d = check_domain(d, self.name)
        self.epsilon = check_epsilon(epsilon, self.name)
        #: The hash range actually used (``g``, or the default rule when ``g == 0``).
        self.buckets = self.hash_range()
        self._p, self._q = olh_constants(self.epsilon, self.buckets)
        self._keys = _hashing.value_keys(np.arange(self.d))

    def hash_range(self) -> int:
        """The number of buckets ``g``: the parameter, or ``round(e^eps) + 1`` when it is 0."""
        g = self.g
        if g == 1 or g < 0 or g > _hashing.MAX_RANGE:
            raise ParamError(f"oracle 'olh': g must be 0 (automatic) or an integer in [2, 2^32), got {g}", "g")
        return int(g) if g else default_range(self.epsilon)

    @property
    def p_star(self) -> float:
        return self._p

    @property
    def q_star(self) -> float:
        return self._q

    def tags(self) -> OracleTags:
        # <H, y> supports v when H(v) = y: w.p. p* for the held value and 1/g for any other (the
        # idealized hash; the seeded family has these marginals to 2^-32), independently across
        # users, since each user draws her own seed (ibu's per-item likelihood).
        return dataclasses.replace(super().tags(), bernoulli_support=True)

    # -- client side --------------------------------------------------------------------------
    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> OLHReports:
        v = as_items(values, self.d)
        seeds = _hashing.random_seeds(v.size, rng)
        hashed = _hashing.hash_pairs(seeds, self._keys[v], self.buckets)
        keep = rng.random(v.size) < self._p - self._grr_q
        other = rng.integers(0, self.buckets, size=v.size)
        return OLHReports(seeds=seeds, y=np.where(keep, hashed, other))

    @property
    def _grr_q(self) -> float:
        """q_g = 1/(e^eps + g - 1): GRR over g keeps the hash w.p. p_g - q_g, else uniform on all g."""
        return exp_neg(self.epsilon) * self._p

    # -- aggregator side ----------------------------------------------------------------------
    def support_counts(self, reports: OLHReports) -> np.ndarray:
        return _hashing.matches_per_value(reports.seeds, reports.y, self._keys, self.buckets)

    def sample_support_counts(self, true_counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return independent_binomials(as_counts(true_counts, self.d), self._p, self._q, rng)

    # -- exact audit ------------------------------------------------------------------------------
    def output_table(self, merged: bool | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The exact law of a report under the idealized protocol (a uniformly random function).

        While ``g^(d+1) <= 65536``, rows are all outputs ``(H, y)``: the ``g^d`` functions
        ``D -> [g]`` (uniform weight) times GRR over g; row ``f * g + y`` where ``f = sum_v H(v) g^v``.
        For larger ``g`` or ``d`` (e.g. eps = 4 gives g = 56), outputs with the same support
        pattern are merged — ``2^d`` rows, row ``sum_v [H(v) = y] 2^v``, weight
        ``g (g-1)^(d - |s|) / g^d`` per pattern — which leaves every likelihood ratio unchanged
        (within a pattern ``P(output | v)`` is the same for all outputs), so the epsilon-LDP audit
        and the support probabilities are the same. ``merged`` forces one layout (``None``: automatic).
        """
        g, d = self.buckets, self.d
        q_g = self._grr_q
        if not self._merged(merged):
            funcs = np.arange(g**d)
            table = (funcs[:, None] // g ** np.arange(d)[None, :]) % g  # H(v) per function
            rows_S = table[:, None, :] == np.arange(g)[None, :, None]  # (function, y, v)
            P = np.where(rows_S, self._p, q_g) / g**d
            return P.reshape(-1, d), rows_S.reshape(-1, d)
        if d > 16:
            raise ValueError(f"OLH output table: d={d} is too large to enumerate (max 16)")
        rows = np.arange(1 << d)
        S = ((rows[:, None] >> np.arange(d)[None, :]) & 1).astype(bool)
        size = S.sum(axis=1)
        weight = g * (g - 1.0) ** (d - size) / float(g) ** d
        P = weight[:, None] * np.where(S, self._p, q_g)
        return P, S

    def _merged(self, merged: bool | None) -> bool:
        return self.buckets ** (self.d + 1) > _FULL_TABLE_MAX if merged is None else bool(merged)

    def output_rows(self, reports: OLHReports, merged: bool | None = None) -> np.ndarray:
        """Row of :meth:`output_table` (same ``merged``) of each report: the seed's function on D."""
        g = self.buckets
        table = _hashing.hash_table(reports.seeds, self._keys, g)
        y = np.asarray(reports.y, dtype=np.int64)
        if not self._merged(merged):
            return (table * g ** np.arange(self.d)).sum(axis=1) * g + y
        return ((table == y[:, None]) << np.arange(self.d)).sum(axis=1)

    def support_matrix(self, reports: OLHReports) -> np.ndarray:
        """``(n_users, d)`` bools: ``H_{seed}(v) == y``, hashed in blocks of about
        :data:`._hashing.BLOCK_ELEMENTS` (users x values) to bound the uint64 temporaries."""
        y = np.asarray(reports.y, dtype=np.int64)
        out = np.empty((y.size, self.d), dtype=bool)
        step = max(1, _hashing.BLOCK_ELEMENTS // max(1, self.d))
        for start in range(0, y.size, step):
            table = _hashing.hash_table(reports.seeds[start : start + step], self._keys, self.buckets)
            out[start : start + step] = table == y[start : start + step, None]
        return out


@hookimpl
def ldpbench_register_oracles(registry):
    registry.register(OLH)
