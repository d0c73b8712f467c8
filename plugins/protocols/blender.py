"""Blender: heavy hitters of (query, URL) records in the hybrid opt-in + local model.

[A17] Avent, Korolova, Zeber, Hovden, Livshits, "Blender: Enabling Local Search with a Hybrid
Differential Privacy Model", USENIX Security 2017 (Fig. 2-7, Theorems 3-6).

Users hold one record each (m_O = m_C = 1 in the paper's experiments). A fraction ``opt_in_fraction``
of them opts in to a trusted curator (central model); the rest are clients (local model):

1. the opt-in users are split at random into S (``f_o`` of them) and T;
2. CreateHeadList on S: records whose Laplace-noised count exceeds tau (central, (eps, delta));
3. EstimateOptinProbabilities on T: Laplace mechanism on the head-list counts (central, (eps, 0)),
   then the list is cut to the ``head_list_size`` most probable records;
4. every client runs LocalAlg on the head list (local, (eps, delta): queries with
   (f_c eps, f_c delta), URLs with the rest), and the server denoises the reports;
5. BlendProbabilities: per record, inverse-variance weighting of the two estimates (Theorem 6),
   optionally projected onto the probability simplex.

:meth:`Blender.run` returns three estimates over the same head list, ``opt-in``, ``client`` and
``blended`` (the columns of [A17] Fig. 9). Each covers the head-list records only (``<*, *>`` is
excluded; ``Estimate.items`` names the records) and carries in ``info`` the query-level estimates,
the head-list structure, the wildcard's estimate and the group sizes; ``variance`` holds the
per-record variance estimates (of the estimate before the optional projection). The query-level
estimates are also the declared field :attr:`~ldpbench.types.Estimate.query_estimates`, which
goes with that record vector only: a consumer (the ``ndcg`` metric) reads it through
:meth:`~ldpbench.types.Estimate.current_query_estimates`, which drops it once a post-processor
has changed the records.

Records and queries. With record structure (``Population.parents``: record -> query) a record is
a (query, URL) pair. A population without it (a flat histogram: aol-queries' query log, or any
oracle dataset) holds queries only: each item is a query and the user's record is ``(q, *)``, the
query's wildcard record ([A17] Fig. 6 lines 10-11 map a URL outside ``HL[q]`` to ``*``; a query
without a URL is that case). Such a record is its query's ``<q, *>`` slot, so a listed query has
one URL slot (``k_q = 1``, ``t_q = 1``: the URL stage reports the truth) and its client record
estimate is its query estimate, with no URL-stage division (see ``_blender_headlist``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ldpbench import hookimpl
from ldpbench.errors import ParamError
from ldpbench.params import Param
from ldpbench.types import Estimate, Population, Protocol
from ldpbench_plugins.numerics.simplex import project_to_simplex

from ._blender_client import (
    CLIENT_VARIANCES,
    estimate_client,
    local_alg_constants,
    report_histogram_aggregate,
    report_histogram_per_user,
)
from ._blender_headlist import HeadList, create_head_list, laplace_scale, threshold
from ._blender_optin import estimate_optin

#: The labels of the estimates :meth:`Blender.run` returns.
GROUPS = ("opt-in", "client", "blended")
#: How the client reports are simulated: the spec's ``simulation`` modes.
SAMPLERS = ("aggregate", "per-user")


def blend_weights(var_optin: np.ndarray, var_client: np.ndarray) -> np.ndarray:
    """``w = var_C / (var_O + var_C)`` ([A17] Fig. 7 line 3; Theorem 6).

    The weight of the opt-in estimate that minimizes ``w^2 var_O + (1 - w)^2 var_C``. Variance
    estimates are clipped at 0 first (only the printed Theorem-5 variant can make them negative);
    when both are 0 the two estimates are averaged.
    """
    vo = np.clip(np.asarray(var_optin, dtype=float), 0, None)
    vc = np.clip(np.asarray(var_client, dtype=float), 0, None)
    total = vo + vc
    return np.divide(vc, total, out=np.full(total.shape, 0.5), where=total > 0)


def blend(
    p_optin: np.ndarray, var_optin: np.ndarray, p_client: np.ndarray, var_client: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """BlendProbabilities ([A17] Fig. 7): the blended estimate, its variance and the weights."""
    w = blend_weights(var_optin, var_client)
    p = w * np.asarray(p_optin) + (1 - w) * np.asarray(p_client)
    var = w**2 * np.clip(var_optin, 0, None) + (1 - w) ** 2 * np.clip(var_client, 0, None)
    return p, var, w


def split_users(
    counts: np.ndarray, n_s: int, n_t: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Record counts of S, T (the opt-in users) and C (the rest) for a uniformly random split.

    The opt-in users are ``n_s + n_t`` users drawn without replacement, in random order (the first
    ``n_s`` form S): O(|O| log d) work besides three length-d bincounts.
    """
    counts = np.asarray(counts, dtype=np.int64)
    ends = np.cumsum(counts)
    n = int(ends[-1]) if ends.size else 0
    optin_users = rng.choice(n, n_s + n_t, replace=False, shuffle=True)
    records = np.searchsorted(ends, optin_users, side="right")
    s_counts = np.bincount(records[:n_s], minlength=counts.size).astype(np.int64)
    t_counts = np.bincount(records[n_s:], minlength=counts.size).astype(np.int64)
    return s_counts, t_counts, counts - s_counts - t_counts


def _project(p: np.ndarray, p_star: float) -> tuple[np.ndarray, float]:
    """Project ``(p, p_star)`` onto the probability simplex (the wildcard takes part, as in [A17] §4.1)."""
    out = project_to_simplex(np.append(p, p_star), 1.0)
    return out[:-1], float(out[-1])


@dataclass(frozen=True)
class Level:
    """One group's estimate at one level (records, or queries): per-entry probabilities and
    variance estimates, and the wildcard's (``<*, *>``), which rides along for the projection."""

    p: np.ndarray
    variance: np.ndarray
    star: float
    star_variance: float

    def blend(self, client: Level) -> tuple[Level, np.ndarray]:
        """BlendProbabilities of this (opt-in) level with the client's ([A17] Fig. 7); the weights."""
        p, var, w = blend(self.p, self.variance, client.p, client.variance)
        star, star_var, _ = blend(self.star, self.star_variance, client.star, client.star_variance)
        return Level(p, var, float(star), float(star_var)), w


@dataclass(frozen=True)
class GroupEstimate:
    """What one group (opt-in, client, or their blend) estimates, at record and at query level."""

    records: Level
    queries: Level
    #: Blended only: the opt-in estimate's weight per record and per query ([A17] Theorem 6).
    weights: np.ndarray | None = None
    query_weights: np.ndarray | None = None


def optin_group(optin: Any, head_list: HeadList) -> GroupEstimate:
    """The opt-in estimate: its query estimates are sums over the query's records, variances
    summed ([A17] §4.1)."""
    rq, nq = head_list.record_query, head_list.k - 1
    star = (optin.p_star, optin.variance_star)
    return GroupEstimate(
        records=Level(optin.p, optin.variance, *star),
        queries=Level(
            np.bincount(rq, weights=optin.p, minlength=nq), np.bincount(rq, weights=optin.variance, minlength=nq), *star
        ),
    )


def client_group(client: Any, head_list: HeadList) -> GroupEstimate:
    """The clients' denoised estimate; the query level's last entry is the wildcard query's."""
    slots, nq = head_list.record_slots, head_list.k - 1
    return GroupEstimate(
        records=Level(client.p_slot[slots], client.variance_slot[slots], client.p_star, client.variance_star),
        queries=Level(
            client.p_query[:nq], client.variance_query[:nq], float(client.p_query[-1]), float(client.variance_query[-1])
        ),
    )


def blended_group(optin: GroupEstimate, client: GroupEstimate) -> GroupEstimate:
    """BlendProbabilities ([A17] Fig. 7) at both levels."""
    records, weights = optin.records.blend(client.records)
    queries, query_weights = optin.queries.blend(client.queries)
    return GroupEstimate(records, queries, weights, query_weights)


class Blender(Protocol):
    """Blender ([A17]): opt-in users build a head list; clients report on it; both are blended.

    Works on any population: with record structure (``Population.parents``: record -> query) the
    head list is a query -> URLs map; without it every item is a query and its record is
    ``(q, *)`` (one URL slot per listed query; record estimates equal query estimates).
    """

    name = "blender"
    # 2: a population without record structure is modelled as (query, *) records (was: one real
    # URL per query plus <q, *>).
    algorithm_version = "2"
    params = (
        # A fraction of 0 leaves a group empty (no opt-in users, no head list, no query budget):
        # every estimate would divide by zero, so it is refused when the spec is validated.
        Param(
            "delta",
            float,
            1e-5,
            "delta of (eps, delta)-DP for both groups ([A17]: 1e-5 AOL, 1e-7 Yandex)",
            min=1e-300,
            max=1,
        ),
        Param(
            "opt_in_fraction",
            float,
            0.05,
            "fraction of users who opt in to the trusted curator (above 0)",
            min=0,
            max=1,
            forbid=(0,),
        ),
        Param(
            "f_o",
            float,
            0.95,
            "fraction of the opt-in users used to create the head list (above 0)",
            min=0,
            max=1,
            forbid=(0,),
        ),
        Param(
            "f_c",
            float,
            0.85,
            "fraction of the clients' budget spent on the query (above 0)",
            min=0,
            max=1,
            forbid=(0,),
        ),
        Param("head_list_size", int, 50, "M: maximum number of records in the final head list", min=1, max=10**8),
        Param("m_o", int, 1, "records collected per opt-in user (the privacy proof needs 1)", min=1, max=1000),
        Param("m_c", int, 1, "records collected per client (the variance theorems need 1)", min=1, max=1000),
        Param(
            "client_variance",
            str,
            "exact",
            "exact (unbiased plug-in) or paper (Theorem 5 as printed)",
            choices=CLIENT_VARIANCES,
        ),
        Param("project", bool, True, "project each estimate (with <*,*>) onto the probability simplex"),
        Param(
            "project_groups",
            str,
            "all",
            "which outputs 'project' acts on: all three, or the blended one only ([A17] Fig. 7 step 5 projects the blend)",
            choices=("all", "blended"),
        ),
        Param(
            "client_sampler",
            str,
            None,
            "aggregate (exact multinomial) or per-user (LocalAlg on every client); null: the run's simulation mode",
            choices=SAMPLERS,
            nullable=True,
        ),
    )

    # -- privacy -------------------------------------------------------------------------------
    def privacy_accounting(self, epsilon: float) -> list[dict[str, Any]]:
        """The guarantee each group of users receives at budget ``epsilon`` (for the run manifest).

        The groups are disjoint, so each user gets exactly the guarantee of her own group
        (parallel composition, [A17] §2).
        """
        eps = float(epsilon)
        eps1, delta1 = eps / self.m_c, self.delta / self.m_c
        b = laplace_scale(eps, self.m_o) if eps > 0 else float("inf")
        share_o = self.opt_in_fraction
        return [
            {
                "group": "opt-in, head-list creation (S)",
                "model": "central",
                "epsilon": eps,
                "delta": self.delta,
                "algorithm": f"CreateHeadList: record counts + Laplace(b={b:.6g}), kept above tau",
                "share_of_users": round(share_o * self.f_o, 12),
            },
            {
                "group": "opt-in, probability estimation (T)",
                "model": "central",
                "epsilon": eps,
                "delta": 0.0,
                "algorithm": f"Laplace mechanism on head-list record counts, b={b:.6g}",
                "share_of_users": round(share_o * (1 - self.f_o), 12),
            },
            {
                "group": "clients",
                "model": "local",
                "epsilon": eps,
                "delta": self.delta,
                "algorithm": "LocalAlg: two-stage randomized response on the head list",
                "query_stage": {"epsilon": self.f_c * eps1, "delta": self.f_c * delta1},
                "url_stage": {"epsilon": (1 - self.f_c) * eps1, "delta": (1 - self.f_c) * delta1},
                "share_of_users": round(1 - share_o, 12),
            },
        ]

    # -- the protocol --------------------------------------------------------------------------
    def _group_sizes(self, n: int) -> tuple[int, int, int]:
        n_o = int(round(self.opt_in_fraction * n))
        n_s = int(round(self.f_o * n_o))
        n_t, n_c = n_o - n_s, n - n_o
        if n_t < 2:
            raise ParamError(
                f"Blender: the opt-in estimation group T has {n_t} users (n={n}, opt_in_fraction="
                f"{self.opt_in_fraction}, f_o={self.f_o}); it needs at least 2"
            )
        if n_c < 2:
            raise ParamError(f"Blender: the client group has {n_c} users; it needs at least 2")
        return n_s, n_t, n_c

    def client_sampler_for(self, simulation: str | None = None) -> str:
        """The client sampler: the ``client_sampler`` parameter if given, else the run's
        ``simulation`` mode (a spec's ``simulation:``), else ``aggregate``."""
        sampler = self.client_sampler or simulation or "aggregate"
        if sampler not in SAMPLERS:
            raise ParamError(f"Blender: unknown simulation mode {sampler!r}; expected one of {SAMPLERS}")
        return sampler

    def run(
        self, population: Population, epsilon: float, rng: np.random.Generator, *, simulation: str = "aggregate"
    ) -> Mapping[str, Estimate]:
        """Simulate Blender on the population's users; return the ``opt-in``, ``client``, ``blended`` estimates.

        :param simulation: the run's simulation mode (``aggregate`` or ``per-user``, the spec's
            ``simulation:``; the engine passes it); it chooses the client sampler unless the
            ``client_sampler`` parameter is set.
        """
        tau = threshold(epsilon, self.delta, self.m_o)  # also validates epsilon and delta
        sampler = self.client_sampler_for(simulation)
        counts = population.counts
        # Without record structure every item is a query and its record is (q, *) (module docstring).
        query_only = population.parents is None
        parents = np.arange(population.d) if query_only else population.parents
        parents = np.asarray(parents, dtype=np.int64)
        n_s, n_t, n_c = self._group_sizes(population.n)

        s_counts, t_counts, c_counts = split_users(counts, n_s, n_t, rng)
        present = np.flatnonzero(c_counts)
        c_part = c_counts[present]

        # Opt-in users: head list, then probabilities.
        candidates = create_head_list(s_counts, epsilon, self.delta, self.m_o, rng)
        optin = estimate_optin(t_counts, candidates, epsilon, self.m_o, self.head_list_size, rng)
        head_list = HeadList.build(optin.records, parents, wildcard=True if query_only else None)

        # Clients: LocalAlg on the head list, then denoising.
        consts = local_alg_constants(epsilon, self.delta, self.m_c, self.f_c, head_list)
        slot_counts = np.bincount(head_list.slot_of(parents)[present], weights=c_part, minlength=head_list.n_slots)
        slot_counts = np.rint(slot_counts).astype(np.int64)
        if sampler == "aggregate":
            hist = report_histogram_aggregate(slot_counts, head_list, consts, rng)
        else:
            hist = report_histogram_per_user(slot_counts, head_list, consts, rng)
        client = estimate_client(hist, head_list, consts, self.client_variance)

        # Record and query level for each group; <*, *> rides along for the projection.
        optin_estimate, client_estimate = optin_group(optin, head_list), client_group(client, head_list)
        groups = {
            "opt-in": optin_estimate,
            "client": client_estimate,
            "blended": blended_group(optin_estimate, client_estimate),
        }

        common = {
            "head_list_size": head_list.size,
            "head_list_target": self.head_list_size,
            "head_list_candidates": int(candidates.size),
            "queries": head_list.queries.tolist(),
            "item_query": head_list.record_query.tolist(),
            "users": {"S": n_s, "T": n_t, "C": n_c},
            "tau": tau,
            "t": consts.t,
            "client_variance": self.client_variance,
            "client_sampler": sampler,
            "records": "(query, *)" if query_only else "(query, URL)",
            "projected": bool(self.project),
            "projected_groups": self.project_groups if self.project else "none",
            "variance_note": "per-record variance estimates of the estimate before projection",
        }
        sizes = {"opt-in": n_s + n_t, "client": n_c, "blended": population.n}
        out: dict[str, Estimate] = {}
        for label in GROUPS:
            projected = self.project and (self.project_groups == "all" or label == "blended")
            out[label] = _estimate(label, groups[label], head_list, projected, sizes[label], epsilon, common)
        return out


def _estimate(
    label: str,
    group: GroupEstimate,
    head_list: HeadList,
    projected: bool,
    n: int,
    epsilon: float,
    common: Mapping[str, Any],
) -> Estimate:
    """One output of :meth:`Blender.run`: the group's record estimate (projected onto the simplex
    if asked), with its query estimates and the run's diagnostics in ``info``."""
    rec, qry = group.records, group.queries
    p_rec, p_star = np.asarray(rec.p, dtype=float), rec.star
    p_query, p_star_q = np.asarray(qry.p, dtype=float), qry.star
    if projected:
        p_rec, p_star = _project(p_rec, p_star)
        p_query, p_star_q = _project(p_query, p_star_q)
    query_variance = np.asarray(qry.variance, dtype=float)
    info = dict(common)
    info.update(
        group=label,
        query_frequencies=p_query.tolist(),
        query_variance=query_variance.tolist(),
        star={"frequency": float(p_star), "variance": float(rec.star_variance)},
        star_query={"frequency": float(p_star_q), "variance": float(qry.star_variance)},
    )
    if group.weights is not None and group.query_weights is not None:
        info.update(weights=group.weights.tolist(), query_weights=group.query_weights.tolist())
    est = Estimate(
        frequencies=p_rec,
        n=n,
        epsilon=float(epsilon),
        mechanism=f"blender:{label}",
        variance=np.asarray(rec.variance, dtype=float),
        items=head_list.records.copy(),
        info=info,
    )
    # The query estimates go with exactly this record vector (see the module docstring).
    return est.with_query_estimates(head_list.queries, p_query, query_variance)


@hookimpl
def ldpbench_register_protocols(registry):
    registry.register(Blender)
