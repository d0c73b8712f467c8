"""The data-poisoning attacks of Cao, Jia & Gong, "Data Poisoning Attacks to Local Differential
Privacy Protocols" (USENIX Security 2021, arXiv:1911.02046, §3-§4), and input poisoning.

``m`` fake users promote a target set ``T`` of ``r`` items. With ``N = n + m`` reports,
``beta = m / N``, ``P_t`` the probability that a fake report supports target ``t`` and ``f_T`` the
genuine frequency of the targets, the expected frequency gain of an oracle with constants
``(p*, q*)`` is (docs/poisoning.md)::

    G = sum_t E[f~_t] - f_t = beta * ( sum_t (P_t - q*) / (p* - q*) - f_T )

which gives Cao et al.'s Theorems 1-3 (§4): ``input``/``ria`` ``beta (1 - f_T)`` on every oracle;
``rpa`` ``beta (r/d - f_T)`` on kRR, ``beta (r - f_T)`` on OUE/SUE (each bit 1 w.p. 1/2; the paper's
``r`` is for OUE where p* = 1/2), ``-beta f_T`` on OLH/BLH; ``mga`` ``beta (1 - f_T) + beta (d - r)/(e^eps - 1)``
on kRR, ``beta (r (1 - q*)/(p* - q*) - f_T)`` on OUE/SUE (``2 r e^eps / (e^eps - 1)`` for OUE) and
on OLH/BLH when every target hashes to the reported value.

The attacks craft reports in the oracle's own encoding (GRR: items; unary encodings:
:class:`~ldpbench_plugins.oracles._unary.UnaryReports`; local hashing:
:class:`~ldpbench_plugins.oracles.olh.OLHReports`); vectorized over the fake users.
"""

from __future__ import annotations

import math

import numpy as np

from ldpbench import hookimpl
from ldpbench.errors import NotApplicable
from ldpbench.params import Param
from ldpbench.types import Attack, Oracle
from ldpbench_plugins.oracles import _hashing
from ldpbench_plugins.oracles._unary import UnaryEncoding, UnaryReports, bernoulli_positions
from ldpbench_plugins.oracles.grr import GRR
from ldpbench_plugins.oracles.olh import OLH, OLHReports

#: Every oracle: an attack that perturbs chosen items honestly is defined for any protocol.
ANY_ORACLE = "*"
#: The oracles whose report space the crafting attacks (rpa, mga) know.
CRAFTED = ("grr", "oue", "sue", "olh", "blh")
#: Elements of the largest temporary table (users x items, or users x tries x r) built at once.
_BLOCK = 1 << 21


def _blocks(m: int, per_user: int):
    """``(start, count)`` of consecutive fake users, ``count * per_user`` at most about :data:`_BLOCK`."""
    step = max(1, _BLOCK // max(1, per_user))
    for start in range(0, m, step):
        yield start, min(step, m - start)


def _balanced(targets: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
    """The items of ``m`` fake users holding the targets in turn (``m // r`` or one more each),
    shuffled."""
    return rng.permutation(np.resize(np.asarray(targets, dtype=np.int64), m))


#: The protocols whose local-hashing rounds the attacks craft for (:meth:`Attack.craft_hashed`).
ROUNDS = ("pem",)


def _honest_hashed(keys: np.ndarray, g: int, epsilon: float, rng: np.random.Generator):
    """Honest OLH reports (Wang et al., USENIX Security 2017, §4.4) of users whose items have the
    hash keys ``keys`` (one per user): ``y = H_s(v)`` w.p. ``e^eps / (e^eps + g - 1)``, else one of
    the ``g - 1`` other values uniformly (``_candidates.perturb``'s law, on keys)."""
    e = math.exp(epsilon)
    seeds = _hashing.random_seeds(keys.size, rng)
    hashed = _hashing.hash_pairs(seeds, keys, g)
    keep = rng.random(keys.size) < e / (e + g - 1)
    other = (hashed + rng.integers(1, max(g, 2), size=keys.size)) % g
    return seeds, np.where(keep, hashed, other)


class InputPoisoning(Attack):
    """Input poisoning: fake users hold the target items (each target ``m // r`` or ``m // r + 1``
    of them) and run the protocol honestly. The floor every attack should beat: expected gain
    ``beta (1 - f_T)`` on every oracle (Cao et al. §3, the baseline of their RIA)."""

    name = "input"
    oracles = (ANY_ORACLE,)
    protocols = ROUNDS

    def craft(self, oracle: Oracle, targets: np.ndarray, m: int, rng: np.random.Generator):
        return oracle.perturb(_balanced(targets, m, rng), rng)

    def craft_hashed(self, keys, g, epsilon, m, rng):
        return _honest_hashed(rng.permutation(np.resize(keys, m)), g, epsilon, rng)


class RandomItemAttack(Attack):
    """RIA (Cao et al. §3.1): each fake user picks a target uniformly at random and perturbs it
    with the protocol. Expected gain ``beta (1 - f_T)`` (Theorems 1-3)."""

    name = "ria"
    oracles = (ANY_ORACLE,)
    protocols = ROUNDS

    def craft(self, oracle: Oracle, targets: np.ndarray, m: int, rng: np.random.Generator):
        items = np.asarray(targets, dtype=np.int64)[rng.integers(0, len(targets), size=m)]
        return oracle.perturb(items, rng)

    def craft_hashed(self, keys, g, epsilon, m, rng):
        return _honest_hashed(keys[rng.integers(0, keys.size, size=m)], g, epsilon, rng)


def _unary(oracle: Oracle, user: np.ndarray, item: np.ndarray, m: int, ordered: bool = False) -> UnaryReports:
    """Sparse unary reports in their canonical order (by user, then item; ``ordered``: already so)."""
    if not ordered:
        user, item = np.divmod(np.sort(user.astype(np.int64) * oracle.d + item), oracle.d)
    return UnaryReports(n_users=m, user=user.astype(np.int64, copy=False), item=item.astype(np.int64, copy=False))


class RandomPerturbedValueAttack(Attack):
    """RPA (Cao et al. §3.2): each fake user sends a value drawn uniformly from the protocol's
    report space: an item of ``[d]`` (kRR), a uniformly random bit vector (OUE, SUE), a random hash
    seed and a value uniform on ``[g]`` (OLH, BLH)."""

    name = "rpa"
    oracles = CRAFTED
    protocols = ROUNDS

    def craft_hashed(self, keys, g, epsilon, m, rng):
        return _hashing.random_seeds(m, rng), rng.integers(0, g, size=m)

    def craft(self, oracle: Oracle, targets: np.ndarray, m: int, rng: np.random.Generator):
        if isinstance(oracle, GRR):
            return rng.integers(0, oracle.d, size=m)
        if isinstance(oracle, UnaryEncoding):
            users, items = [], []
            for start, k in _blocks(m, oracle.d):
                user, item = np.divmod(bernoulli_positions(k * oracle.d, 0.5, rng), oracle.d)
                users.append(user + start)
                items.append(item)
            return _unary(oracle, np.concatenate(users), np.concatenate(items), m, ordered=True)
        if isinstance(oracle, OLH):
            return OLHReports(seeds=_hashing.random_seeds(m, rng), y=rng.integers(0, oracle.buckets, size=m))
        raise NotApplicable(f"attack 'rpa' does not know the reports of oracle '{oracle.name}'")


class MaximalGainAttack(Attack):
    """MGA (Cao et al. §3.3): each fake report supports as many targets as the protocol allows.

    - kRR: a target, uniformly at random (a report supports one item).
    - OUE/SUE: the targets' bits set to 1, and (``pad``) ``l = floor(p* + (d - 1) q* - r)`` other
      bits at random, so that a fake report has as many ones as a genuine one on average (§3.3).
    - OLH/BLH: ``search`` random hash seeds are evaluated once, together (one NumPy evaluation of
      the hash family per block), and every fake user reports one of the seeds under which the
      most targets share a value (drawn uniformly among those seeds, with replacement), with that
      value. A seed hashes ``c`` targets together, so each fake report supports ``c`` targets
      (``P_t = c / r`` on average): the theorem's ``c = r`` needs a seed hashing all ``r`` targets
      to one of ``g`` buckets, probability ``g^(1 - r)`` per seed, so with ``S`` seeds ``c`` is the
      largest multiplicity among ``S`` draws (docs/poisoning.md gives the fraction reached). With
      ``reuse: false`` the fake users get distinct seeds, the ``m`` best of the search (a lower
      ``c`` on average, but their collateral support of non-targets spread as with independent
      seeds). One target needs no search (a random seed, its hash).
    """

    name = "mga"
    oracles = CRAFTED
    protocols = ROUNDS
    params = (
        Param(
            "search",
            int,
            1 << 18,
            "OLH/BLH: random hash seeds searched once for all the fake users (r > 1); each reports a best one",
            min=1,
            max=1 << 24,
        ),
        Param(
            "reuse",
            bool,
            True,
            "OLH/BLH: every fake user reports one of the search's best seeds (false: distinct seeds, "
            "the m best of the search, cycled when m exceeds it)",
        ),
        Param("pad", bool, True, "OUE/SUE: add random non-target ones up to a genuine report's expected count"),
    )

    def craft(self, oracle: Oracle, targets: np.ndarray, m: int, rng: np.random.Generator):
        targets = np.asarray(targets, dtype=np.int64)
        if isinstance(oracle, GRR):
            return targets[rng.integers(0, targets.size, size=m)]
        if isinstance(oracle, UnaryEncoding):
            return self._unary(oracle, targets, m, rng)
        if isinstance(oracle, OLH):
            return self._hashed(oracle, targets, m, rng)
        raise NotApplicable(f"attack 'mga' does not know the reports of oracle '{oracle.name}'")

    def _unary(self, oracle: UnaryEncoding, targets: np.ndarray, m: int, rng: np.random.Generator) -> UnaryReports:
        d, r = oracle.d, targets.size
        user = np.repeat(np.arange(m, dtype=np.int64), r)
        item = np.tile(targets, m)
        extra = int(math.floor(oracle.p_star + (d - 1) * oracle.q_star - r)) if self.pad else 0
        extra = max(0, min(extra, d - r))
        if extra:
            others = np.setdiff1d(np.arange(d, dtype=np.int64), targets)
            users, items = [user], [item]
            for start, k in _blocks(m, others.size):
                # ``extra`` distinct non-targets per user: those of the smallest i.i.d. uniform keys.
                picked = np.argpartition(rng.random((k, others.size)), extra - 1, axis=1)[:, :extra]
                users.append(np.repeat(np.arange(start, start + k, dtype=np.int64), extra))
                items.append(others[picked.ravel()])
            user, item = np.concatenate(users), np.concatenate(items)
        return _unary(oracle, user, item, m)

    def _hashed(self, oracle: OLH, targets: np.ndarray, m: int, rng: np.random.Generator) -> OLHReports:
        seeds, y = self.craft_hashed(_hashing.value_keys(targets), oracle.buckets, oracle.epsilon, m, rng)
        return OLHReports(seeds=seeds, y=y)

    def craft_hashed(self, keys, g, epsilon, m, rng):
        """The reports supporting the most of ``keys`` (the class docstring); the search runs once
        per (keys, g) and its best seeds serve every later chunk of fake users of the cell."""
        if keys.size == 1:
            seeds = _hashing.random_seeds(m, rng)
            return seeds, _hashing.hash_pairs(seeds, np.repeat(keys, m), g)
        cache = self.__dict__.setdefault("_best", {})
        key = (g, keys.tobytes())
        if key not in cache:
            seeds, count, value = best_seeds(keys, g, int(self.search), rng)
            if self.reuse:
                best = count == count.max()
                cache[key] = [seeds[best], value[best], 0]
            else:  # by decreasing count, ties in the search's (random) order
                order = np.argsort(-count, kind="stable")
                cache[key] = [seeds[order], value[order], 0]
        seeds, value, used = cache[key]
        if self.reuse:
            pick = rng.integers(0, seeds.size, size=m)
        else:  # the next m of the ranked seeds, across the cell's chunks
            pick = (used + np.arange(m)) % seeds.size
            cache[key][2] = used + m
        return seeds[pick], value[pick]


def best_seeds(keys: np.ndarray, g: int, search: int, rng: np.random.Generator):
    """``search`` random seeds, and for each the largest number of the ``keys`` that hash to one value
    of ``[0, g)`` under it and that value (the smallest such on ties): ``(seeds, count, value)``.

    Vectorized in blocks of about :data:`_BLOCK` hash evaluations: each row of the (seeds x r) hash
    table is sorted, and the longest run of equal values is found from the runs' start positions
    (a running maximum), O(S r log r) with no Python loop over seeds.
    """
    r = keys.size
    seeds = _hashing.random_seeds(search, rng)
    count = np.empty(search, dtype=np.int64)
    value = np.empty(search, dtype=np.int64)
    cols = np.arange(r, dtype=np.int64)
    for start, k in _blocks(search, r):
        table = np.sort(_hashing.hash_table(seeds[start : start + k], keys, g), axis=1)
        new_run = np.ones((k, r), dtype=bool)
        new_run[:, 1:] = table[:, 1:] != table[:, :-1]
        run_start = np.maximum.accumulate(np.where(new_run, cols, 0), axis=1)
        length = cols - run_start + 1
        end = length.argmax(axis=1)  # the first longest run: the smallest value on ties
        count[start : start + k] = length[np.arange(k), end]
        value[start : start + k] = table[np.arange(k), end]
    return seeds, count, value


@hookimpl
def ldpbench_register_attacks(registry):
    registry.register(InputPoisoning)
    registry.register(RandomItemAttack)
    registry.register(RandomPerturbedValueAttack)
    registry.register(MaximalGainAttack)
