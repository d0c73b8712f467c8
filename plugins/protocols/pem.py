"""PEM, the prefix-extending method (Wang, Li & Jha, "Locally Differentially Private Heavy Hitter
Identification", IEEE TDSC 2019; docs/heavy-hitters.md).

Items are ``m``-bit strings (a bit-string domain, never enumerated). Users are split into ``r``
groups; group i reports the first ``l_i`` bits of its item with OLH at the full budget, where
``l_0 = start_bits`` (default ``floor(log2 k) + 1``) and ``l_i = min(m, l_0 + i * step_bits)``, so
``r = 1 + ceil((m - l_0) / step_bits)``. The server estimates, from group 0, all ``2^l_0``
prefixes; from group i > 0, only the candidates ``C_i = T_{i-1} x {0,1}^(l_i - l_{i-1})`` where
``T_{i-1}`` holds the top-k prefixes of the round before. The result is the top-k of the last
round with a positive estimate. Every user reports once (sequential composition is not used):
each user's reports satisfy epsilon-LDP.

``split: budget`` is the alternative the paper argues against: every user answers every round with
``epsilon / r``, reports that compose to epsilon. Both have a per-user path (each user's OLH report
drawn and checked against the candidates) and an aggregate path, exact in distribution under an
ideal hash family (``_candidates``'s docstring).

``shards: S`` (default 1) splits a cell's users into S shards with streams of their own, which
run as tasks of the Dask cluster under the ``dask`` executor: the same law, numbers that depend on
S but not on where the shards run (``_shards``'s docstring; docs/scale-out.md).

``run(..., poison=ProtocolPoison)`` (an attacked cell, docs/poisoning.md): the ``m`` fake users are
split among the rounds as the genuine ones are (``split: users``: ``m / r`` each, the server's
random assignment in expectation; ``split: budget``: all of them every round), and in each round
the attack crafts their OLH reports for the targets' distinct prefixes of that round
(:meth:`~ldpbench.types.Attack.craft_hashed`; Cao, Jia & Gong, USENIX Security 2021, §6). The server
counts them with the round's own support counting over its candidates and estimates over the
round's genuine and fake users together; the genuine users' draws are those of the unattacked cell.

Departures from the paper's reference code (vvv214/LDP_Protocols, ``pem/``): items are prefixes
(most significant bits first), as in the paper's text, not suffixes; the group of a user is a
uniformly random equal split (the reference splits a shuffled file by position: the same law).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from ldpbench import hookimpl
from ldpbench.errors import ParamError, PluginError
from ldpbench.params import Param
from ldpbench.types import Domain, IdentifiedItems, Oracle, Population, Protocol, ProtocolPoison, ProtocolTags
from ldpbench.types.domain import IDENTIFIED_ITEMS

from . import _candidates as olh
from . import _shards

#: The ``shards`` parameter: users split into this many shards that run as tasks of a Dask cluster
#: (the ``dask`` executor) or one after another; 1 keeps the unsharded streams.
SHARDS_PARAM = Param(
    "shards",
    int,
    1,
    "split the users into this many shards, run as Dask tasks under the dask executor "
    "(numbers depend on it, never on where shards run; 1: unsharded)",
    min=1,
    max=4096,
)


def prefix_lengths(bits: int, start_bits: int, step_bits: int) -> list[int]:
    """``[l_0, l_1, ..., l_{r-1} = bits]``: the prefix length each round reports."""
    lengths = [min(bits, start_bits)]
    while lengths[-1] < bits:
        lengths.append(min(bits, lengths[-1] + step_bits))
    return lengths


def extend(kept: np.ndarray, grow: int) -> np.ndarray:
    """Every candidate prefix ``t`` extended by every ``grow``-bit suffix: ``(t << grow) | s``."""
    suffixes = np.arange(1 << grow, dtype=np.uint64)
    return ((kept.astype(np.uint64)[:, None] << np.uint64(grow)) | suffixes[None, :]).ravel()


def domain_bits(domain: Domain) -> int:
    """The width of a domain's items: its bits, or ``ceil(log2 d)`` for ``[d]`` (items are then the
    integers ``0 .. d-1`` read as bit strings)."""
    return domain.bits if domain.bits is not None else max(1, math.ceil(math.log2(max(domain.size, 2))))


def top(candidates: np.ndarray, estimates: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` candidates of largest estimate (ties by candidate value, for determinism)."""
    order = np.lexsort((candidates, -estimates))[:k]
    return candidates[order], estimates[order]


class PEM(Protocol):
    """PEM, the prefix-extending method (Wang, Li & Jha, TDSC 2019; see the module docstring)."""

    name = "pem"
    params = (
        Param("k", int, 32, "how many heavy hitters to identify", min=1, max=4096),
        Param(
            "start_bits",
            int,
            0,
            "prefix length of the first round (0: floor(log2 k) + 1, the paper's choice)",
            min=0,
            max=24,
        ),
        Param("step_bits", int, 4, "bits each later round extends the prefixes by (eta)", min=1, max=16),
        Param(
            "split",
            str,
            "users",
            "users: a group of users per round, each at the full budget (the paper's); "
            "budget: every user in every round at epsilon / rounds",
            choices=("users", "budget"),
        ),
        SHARDS_PARAM,
    )

    def tags(self) -> ProtocolTags:
        # PEM lists only candidates (2^l_0 prefixes, then k * 2^step_bits per round): it runs
        # on domains of 2^64 items.
        return ProtocolTags(result=IDENTIFIED_ITEMS, enumerates_domain=False)

    @property
    def first_bits(self) -> int:
        return self.start_bits or int(math.floor(math.log2(self.k))) + 1

    def rounds(self, bits: int) -> list[int]:
        """The prefix length of every round on a ``bits``-wide domain."""
        if self.first_bits > 24:
            raise ParamError("start_bits above 24 would list more than 2^24 first-round candidates", key="start_bits")
        return prefix_lengths(bits, self.first_bits, self.step_bits)

    def privacy_accounting(self, epsilon: float, bits: int | None = None) -> list[dict[str, Any]]:
        """Each group's budget per round (Wang, Li & Jha, TDSC 2019: a user reports once, so its reports are
        epsilon-LDP; ``split: budget``: r reports at epsilon / r, sequential composition).

        The rounds depend on the domain's width: without ``bits`` (the run manifest, written
        before any dataset is loaded) one line per split says who spends what.
        """
        if bits is None:
            if self.split == "budget":
                return [{"group": "all users, every round", "model": "local", "epsilon": float(epsilon)}]
            return [{"group": "every user, one round", "model": "local", "epsilon": float(epsilon)}]
        r = len(self.rounds(bits))
        if self.split == "budget":
            return [{"group": "all users", "model": "local", "epsilon": float(epsilon), "per_round": [epsilon / r] * r}]
        return [
            {
                "group": f"round {i} users ({length}-bit prefixes)",
                "model": "local",
                "epsilon": float(epsilon),
                "per_round": [float(epsilon) if j == i else 0.0 for j in range(r)],
            }
            for i, length in enumerate(self.rounds(bits))
        ]

    def select(
        self, candidates: np.ndarray, estimates: np.ndarray, users: int, epsilon: float, *, last: bool
    ) -> tuple[np.ndarray, np.ndarray]:
        """The prefixes a round keeps: PEM keeps the top k (TreeHist overrides it)."""
        return top(candidates, estimates, self.k)

    def round_accounting(self, epsilon: float, domain: Domain) -> list[dict[str, Any]]:
        return self.privacy_accounting(epsilon, bits=domain_bits(domain))

    def round_oracles(self, epsilon: float, domain: Domain) -> list[tuple[str, type[Oracle], float]]:
        """Every round reports with OLH over its candidates, at epsilon or epsilon / r."""
        r = len(self.rounds(domain_bits(domain)))
        return [(f"rounds 0-{r - 1}", olh.RoundOLH, epsilon / r if self.split == "budget" else epsilon)]

    def run(
        self,
        population: Population,
        epsilon: float,
        rng: np.random.Generator,
        *,
        simulation: str = "aggregate",
        poison: ProtocolPoison | None = None,
    ) -> Mapping[str, IdentifiedItems]:
        lengths = self.rounds(domain_bits(population.item_domain))
        r = len(lengths)
        n = population.n
        values, counts = population.items, population.counts
        group_sizes = np.full(r, n, dtype=np.int64) if self.split == "budget" else olh.split_users(n, r)
        if self.shards > 1:
            with _shards.shard_runner() as runner:
                sharded = _shards.Shards(runner, values, counts, group_sizes, self.shards, rng)
                return self._rounds(population, epsilon, rng, simulation, lengths, group_sizes, sharded, poison)
        return self._rounds(population, epsilon, rng, simulation, lengths, group_sizes, None, poison)

    def _rounds(
        self,
        population: Population,
        epsilon: float,
        rng: np.random.Generator,
        simulation: str,
        lengths: list[int],
        group_sizes: np.ndarray,
        sharded: _shards.Shards | None,
        poison: ProtocolPoison | None = None,
    ) -> Mapping[str, IdentifiedItems]:
        """The rounds, on the whole population or (``sharded``) summed over its shards."""
        bits = domain_bits(population.item_domain)
        r = len(lengths)
        n = population.n
        values, counts = population.items, population.counts
        per_round_eps = epsilon / r if self.split == "budget" else epsilon
        m = poison.fake_users if poison is not None else 0
        fake_sizes = np.full(r, m, dtype=np.int64) if self.split == "budget" else olh.split_users(m, r)
        if sharded is None and simulation == "per-user":
            round_items = self._users_per_round(values, counts, group_sizes, rng)
        elif sharded is None:
            round_counts = self._counts_per_round(counts, group_sizes, rng)
        server = 0.0
        kept = np.empty(0, dtype=np.uint64)
        estimates = np.empty(0)
        rounds: list[dict[str, Any]] = []
        for i, length in enumerate(lengths):
            grow = length - (lengths[i - 1] if i else 0)
            users = int(group_sizes[i])
            started = time.perf_counter()
            candidates = np.arange(1 << length, dtype=np.uint64) if i == 0 else extend(kept, grow)
            server += time.perf_counter() - started
            if sharded is not None:
                found = sharded.round(i, bits, length, candidates, per_round_eps, simulation)
                started = time.perf_counter()
                if simulation == "per-user":
                    support = found
                else:
                    support = olh.sample_support_counts(found, users, per_round_eps, rng)
            elif simulation == "per-user":
                prefixes = round_items[i] >> np.uint64(bits - length)
                seeds, reports = olh.perturb(prefixes, per_round_eps, rng)
                started = time.perf_counter()
                support = olh.support_counts(seeds, reports, candidates, per_round_eps)
            else:
                holders = olh.holders_of(values, round_counts[i], bits, length, candidates)
                support = olh.sample_support_counts(holders, users, per_round_eps, rng)
                started = time.perf_counter()
            if poison is not None and fake_sizes[i]:
                support = support + self._fake_support(
                    poison, int(fake_sizes[i]), bits, length, candidates, per_round_eps
                )
                users += int(fake_sizes[i])
            est = olh.estimate_counts(support, users, per_round_eps) / max(users, 1)
            kept, estimates = self.select(candidates, est, users, per_round_eps, last=i == r - 1)
            server += time.perf_counter() - started
            rounds.append(
                {"prefix_bits": length, "users": users, "epsilon": per_round_eps, "candidates": int(candidates.size)}
            )
        positive = estimates > 0
        reports_per_user = r if self.split == "budget" else 1
        result = IdentifiedItems(
            items=kept[positive],
            frequencies=estimates[positive],
            n=n + m,
            epsilon=float(epsilon),
            k=self.k,
            bits_per_user=float(reports_per_user * olh.report_bits(per_round_eps)),
            server_seconds=server,
            rounds=tuple(rounds),
        )
        return {"top-k": result}

    @staticmethod
    def _fake_support(
        poison: ProtocolPoison, m: int, bits: int, length: int, candidates: np.ndarray, epsilon: float
    ) -> np.ndarray:
        """The support counts over the round's candidates of ``m`` fake reports the attack crafts for
        the targets' distinct ``length``-bit prefixes (counted exactly as the genuine reports of the
        per-user path are: :func:`_candidates.support_counts`)."""
        prefixes = np.unique(np.asarray(poison.targets, dtype=np.uint64) >> np.uint64(bits - length))
        g = olh.olh_buckets(epsilon)
        seeds, y = poison.attack.craft_hashed(olh.item_keys(prefixes), g, epsilon, m, poison.rng)
        seeds = np.asarray(seeds, dtype=np.uint64)
        y = np.asarray(y, dtype=np.int64)
        if seeds.shape != (m,) or y.shape != (m,) or (y.size and (y.min() < 0 or y.max() >= g)):
            raise PluginError(
                f"attack '{poison.attack.name}': craft_hashed must return {m} seeds and {m} values in [0, {g})"
            )
        return olh.support_counts(seeds, y, candidates, epsilon, g)

    @staticmethod
    def _counts_per_round(counts: np.ndarray, sizes: np.ndarray, rng: np.random.Generator) -> list[np.ndarray]:
        """Each round's users as a histogram: every user in every round (``split: budget``, all
        sizes n), or a uniformly random split into groups of the given sizes (a chain of
        multivariate hypergeometric draws: O(s) per group, never O(n))."""
        n = int(counts.sum())
        if all(int(s) == n for s in sizes):
            return [counts] * len(sizes)
        left = counts.copy()
        out = []
        for size in sizes[:-1]:
            drawn = rng.multivariate_hypergeometric(left, int(size), method="marginals")
            left = left - drawn
            out.append(drawn)
        out.append(left)
        return out

    @staticmethod
    def _users_per_round(
        values: np.ndarray, counts: np.ndarray, sizes: np.ndarray, rng: np.random.Generator
    ) -> list[np.ndarray]:
        """Each round's users' items (the per-user path): the population shuffled and cut."""
        users = np.repeat(values, counts)
        n = users.size
        if all(int(s) == n for s in sizes):
            return [users] * len(sizes)
        rng.shuffle(users)
        return np.split(users, np.cumsum(sizes)[:-1])


@hookimpl
def ldpbench_register_protocols(registry):
    registry.register(PEM)
