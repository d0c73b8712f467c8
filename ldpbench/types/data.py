"""The data model: what flows between plugins.

- :class:`Population` — a histogram of items, one item per user, with optional structure.
- :class:`Poisoning` — what a metric knows of a poisoned cell: the targets and the fake users.
- :class:`Estimate` — an oracle's frequency vector plus what later steps need.
- :class:`Channel` — ``P(report | item)`` of a finite-output oracle as a linear operator (for EM).
- :class:`QueryEstimates` — query-level estimates a protocol reports beside a record-level one.
- :class:`IdentifiedItems` — a heavy-hitter protocol's result: the items it found, with their
  estimated frequencies (docs/data-model.md).
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ldpbench.types.domain import FREQUENCIES, IDENTIFIED_ITEMS, IDENTIFIED_ITEMSETS, RECORDS, Domain
from ldpbench.types.rounds import Rounds, is_rounds_mean, round_of
from ldpbench.types.tags import ChannelTags


def bucket_of(d: int, k: int) -> np.ndarray:
    """``(d,)``: the bucket of each item of ``[d]`` among ``k`` contiguous buckets,
    ``floor(x k / d)`` (equal widths when k divides d; widths differ by at most one otherwise)."""
    return (np.arange(d, dtype=np.int64) * k) // d


def declared_buckets(estimate: Any, d: int) -> int:
    """``k`` when ``estimate`` declares itself over ``k`` contiguous buckets of ``[d]``
    (``info["buckets"]``, an integer with ``1 <= k < d``): it is then scored against
    :meth:`Population.bucketed`; 0 otherwise."""
    if not isinstance(estimate, Estimate) or not isinstance(estimate.info, Mapping):
        return 0
    k = estimate.info.get("buckets")
    if isinstance(k, (int, np.integer)) and not isinstance(k, bool) and 1 <= k < d:
        return int(k)
    return 0


@dataclass(frozen=True, eq=False)
class Poisoning:
    """What the metrics of a poisoned cell know beyond the genuine users (docs/poisoning.md): the
    attack's label, the target items, the number ``m`` of fake users and their fraction
    ``beta = m / (n + m)`` among the reports. Carried by the truth handed to metrics
    (:attr:`Population.poisoning`); never by an :class:`Estimate`, so a post-processor (a defense)
    never sees the targets nor which users are fake.
    """

    attack: str
    targets: np.ndarray  #: sorted distinct items (int64)
    fake_users: int  #: m
    beta: float  #: m / (n + m)
    #: One bool per row of ``Estimate.report_supports`` (``True``: a fake user's report), when the
    #: engine kept the reports (a pipeline step with ``requires_reports``, the per-user path); else
    #: ``None``. For the detection metrics only.
    fake_reports: np.ndarray | None = None

    def __post_init__(self) -> None:
        targets = np.asarray(self.targets, dtype=np.int64)
        if targets.ndim != 1 or (targets.size > 1 and not np.all(targets[1:] > targets[:-1])):
            raise ValueError("Poisoning.targets must be a strictly increasing vector of items")
        if int(self.fake_users) < 0:
            raise ValueError("Poisoning.fake_users must be non-negative")
        targets = targets.copy()
        targets.flags.writeable = False
        object.__setattr__(self, "targets", targets)
        object.__setattr__(self, "fake_users", int(self.fake_users))
        object.__setattr__(self, "beta", float(self.beta))
        if self.fake_reports is not None:
            labels = np.asarray(self.fake_reports, dtype=bool).copy()
            if labels.ndim != 1 or int(labels.sum()) != self.fake_users:
                raise ValueError("Poisoning.fake_reports must be one bool per report, fake_users of them True")
            labels.flags.writeable = False
            object.__setattr__(self, "fake_reports", labels)


@dataclass(frozen=True, eq=False)
class Population:
    """Users as a histogram: ``counts[v]`` users hold item ``v`` (one item per user).

    :param counts: non-negative integer counts, length ``d``.
    :param name: a label for leaderboards.
    :param labels: optional item labels (e.g. the query string of each item).
    :param parents: optional structure: ``parents[v]`` is the index of item ``v``'s parent in
        ``parent_labels`` (record -> query for Blender's (query, URL) records).
    :param parent_labels: labels of the parent level.
    :param info: provenance and notes (``source``, ``partial``, ``synthetic`` ...).
    :param domain: where items come from; ``None`` means the enumerable ``[len(counts)]``. A
        bit-string domain (:meth:`Domain.bit_strings`) is never enumerated: the histogram is then
        sparse, ``counts[i]`` users holding item ``values[i]``.
    :param values: for a bit-string domain, the distinct items held (``uint64``, strictly
        increasing, one per entry of ``counts``); ``None`` for an enumerable domain, where entry
        ``v`` is item ``v``.
    :param record: the shape of a user's record (``ldpbench.types.domain.RECORDS``): ``item``
        (one item each: the histogram says everything) or, declared by a dataset whose users hold
        more, ``set``, ``tuple`` or ``sequence``; a mechanism whose tags do not take the shape is
        refused at validation (docs/data-model.md).
    :param offsets: for ``record = "set"``: user ``i`` holds ``members[offsets[i]:offsets[i+1]]``
        (int64, length ``n + 1``, ``offsets[0] = 0``, non-decreasing; an empty set is allowed).
    :param members: for ``record = "set"``: the histogram positions (indices into ``counts``, not
        domain items) of every user's items, distinct within a user. ``counts`` is then the item
        count over all sets: ``counts[v]`` users hold item ``v``, checked against ``members``
        (build one with :meth:`from_sets`); ``n`` is the number of users, not ``counts.sum()``.
    :param attributes: for ``record = "tuple"``: the users' rows, an
        :class:`~ldpbench.types.attributes.Attributes`; ``counts`` are then its marginal
        histograms end to end and ``n`` its number of users (docs/multidimensional.md).
    :param rounds: for ``record = "sequence"``: each user's item in each round
        (:class:`~ldpbench.types.rounds.Rounds`); ``counts`` is then round 0's histogram
        (docs/longitudinal.md).
    :param poisoning: for the truth of a poisoned cell only (docs/poisoning.md): the targets and
        the number of fake users, for the metrics; the population itself (``counts``, ``n``) is the
        genuine users'. ``None`` for an unattacked cell, and always in what a dataset loads.
    """

    counts: np.ndarray
    name: str = ""
    labels: Sequence[str] | None = None
    parents: np.ndarray | None = None
    parent_labels: Sequence[str] | None = None
    info: Mapping[str, Any] = field(default_factory=dict)
    domain: Domain | None = None
    values: np.ndarray | None = None
    record: str = "item"
    offsets: np.ndarray | None = None
    members: np.ndarray | None = None
    attributes: Any = None
    rounds: Rounds | None = None
    poisoning: Poisoning | None = None

    def __post_init__(self) -> None:
        if self.record not in RECORDS:
            raise ValueError(f"Population.record must be one of {', '.join(RECORDS)}, not {self.record!r}")
        counts = np.asarray(self.counts)
        if counts.ndim != 1:
            raise ValueError("Population.counts must be one-dimensional")
        if counts.size and (counts.min() < 0):
            raise ValueError("Population.counts must be non-negative")
        object.__setattr__(self, "counts", counts.astype(np.int64, copy=False))
        if self.domain is not None and not self.domain.is_enumerable:
            if self.values is None:
                raise ValueError("a population over a bit-string domain needs 'values', the items its counts are of")
            values = np.asarray(self.values)
            if values.dtype != np.uint64 or values.shape != counts.shape:
                raise ValueError("Population.values must be a uint64 vector as long as counts")
            if values.size > 1 and not np.all(values[1:] > values[:-1]):
                raise ValueError("Population.values must be strictly increasing")
            if self.domain.bits < 64 and values.size and int(values[-1]) >> self.domain.bits:
                raise ValueError(f"Population.values holds an item outside {self.domain.describe()}")
        elif self.values is not None:
            raise ValueError(
                "Population.values is for a bit-string domain; an enumerable one indexes items by position"
            )
        elif self.domain is not None and self.domain.size != counts.size:
            raise ValueError(f"an enumerable domain of {self.domain.size} items needs {self.domain.size} counts")
        if self.record == "set":
            self._check_sets()
        elif self.offsets is not None or self.members is not None:
            raise ValueError(f"Population.offsets and members are for record 'set', not {self.record!r}")
        if self.record == "tuple":
            if self.attributes is None:
                raise ValueError("a population with record 'tuple' needs 'attributes' (ldpbench.types.attributes)")
            self.attributes.check_counts(self.counts)
        elif self.attributes is not None:
            raise ValueError(f"Population.attributes is for record 'tuple', not {self.record!r}")
        if self.record == "sequence":
            if self.rounds is None:
                raise ValueError("a population with record 'sequence' needs 'rounds' (each user's item per round)")
            self.rounds.check(self.counts)
        elif self.rounds is not None:
            raise ValueError(f"Population.rounds is for record 'sequence', not {self.record!r}")

    def _check_sets(self) -> None:
        """The CSR pair of a set-valued population, validated (vectorized: O(M log M) for M members)."""
        if self.offsets is None or self.members is None:
            raise ValueError("a population with record 'set' needs 'offsets' (n + 1) and 'members' (its users' items)")
        offsets, members = np.asarray(self.offsets), np.asarray(self.members)
        if offsets.ndim != 1 or offsets.size < 1 or members.ndim != 1:
            raise ValueError("Population.offsets and members must be one-dimensional, offsets of length n + 1 >= 1")
        if not (np.issubdtype(offsets.dtype, np.integer) and np.issubdtype(members.dtype, np.integer)):
            raise ValueError("Population.offsets and members must be integer arrays")
        offsets, members = offsets.astype(np.int64, copy=False), members.astype(np.int64, copy=False)
        if offsets[0] != 0 or offsets[-1] != members.size or np.any(np.diff(offsets) < 0):
            raise ValueError("Population.offsets must start at 0, never decrease and end at len(members)")
        d = self.counts.size
        if members.size and (members.min() < 0 or members.max() >= d):
            raise ValueError(f"Population.members must be histogram positions in 0 .. {d - 1}")
        if members.size > 1:
            rows = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
            within = rows[1:] == rows[:-1]
            if not np.all(members[1:][within] > members[:-1][within]):  # not ascending in every set: sort
                order = np.lexsort((members, rows))
                rows, ordered = rows[order], members[order]
                same = (rows[1:] == rows[:-1]) & (ordered[1:] == ordered[:-1])
                if np.any(same):
                    raise ValueError(
                        f"Population.members lists an item twice in the set of user {int(rows[1:][same][0])}"
                    )
        if not np.array_equal(np.bincount(members, minlength=d), self.counts):
            raise ValueError(
                "Population.counts must be the item counts over all sets (np.bincount(members, minlength=d))"
            )
        object.__setattr__(self, "offsets", offsets)
        object.__setattr__(self, "members", members)

    @classmethod
    def from_sets(cls, offsets: np.ndarray, members: np.ndarray, d: int, **fields: Any) -> Population:
        """A set-valued population (``record = "set"``) from its CSR pair, the counts derived."""
        members = np.asarray(members, dtype=np.int64)
        counts = np.bincount(members, minlength=d) if members.size else np.zeros(d, dtype=np.int64)
        return cls(counts, record="set", offsets=np.asarray(offsets, dtype=np.int64), members=members, **fields)

    @property
    def set_sizes(self) -> np.ndarray:
        """Each user's number of items (``record = "set"`` only)."""
        if self.offsets is None:
            raise ValueError("set_sizes is defined for a set-valued population only")
        return np.diff(self.offsets)

    @property
    def item_domain(self) -> Domain:
        """The domain, ``[d]`` when none was given."""
        return self.domain if self.domain is not None else Domain.enumerable(self.counts.size)

    @property
    def items(self) -> np.ndarray:
        """The item of every histogram entry: ``values``, or ``0 .. d-1`` (uint64)."""
        return self.values if self.values is not None else np.arange(self.counts.size, dtype=np.uint64)

    @property
    def d(self) -> int:
        """Entries of the histogram: the domain size ``d`` of an enumerable domain, the number of
        distinct items held over a bit-string domain."""
        return int(self.counts.size)

    @property
    def n(self) -> int:
        """Number of users (of sets, for a set-valued population; of rows, for a tuple one)."""
        if self.offsets is not None:
            return int(self.offsets.size - 1)
        if self.attributes is not None:
            return int(self.attributes.n)
        return int(self.counts.sum())

    @property
    def frequencies(self) -> np.ndarray:
        """True frequencies as fractions of the users (sum to 1; for sets, the share of users
        holding each item, which sum to the mean set size)."""
        n = self.n
        return self.counts / n if n else np.zeros(self.d)

    def replace(self, **changes: Any) -> Population:
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)

    def bucketed(self, k: int) -> Population:
        """The population over ``k`` contiguous buckets of ``[d]`` (item x in bucket
        ``bucket_of(d, k)[x] = floor(x k / d)``): what an estimate over buckets is scored against
        (an estimate whose ``info["buckets"]`` is k, e.g. dBitFlipPM's, docs/longitudinal.md). A
        one-item population; labels ``lo-hi`` (first and last item of the bucket)."""
        if not 1 <= k <= self.d:
            raise ValueError(f"{k} buckets of a domain of {self.d}")
        of = bucket_of(self.d, k)
        counts = np.bincount(of, weights=self.counts, minlength=k).astype(np.int64)
        first = np.searchsorted(of, np.arange(k))
        last = np.append(first[1:], self.d) - 1
        labels = [f"{a}-{b}" if a != b else str(a) for a, b in zip(first, last)]
        return Population(counts, name=f"{self.name}:buckets={k}", labels=labels, info=dict(self.info))

    def round_population(self, t: int) -> Population:
        """Round ``t``'s users (0-based) as a one-item population (a sequence population only)."""
        if self.rounds is None:
            raise ValueError("round_population is defined for a sequence population only")
        return self.replace(counts=self.rounds.counts(t, self.d), record="item", rounds=None)

    def truth_for(self, label: str) -> Population:
        """What an output labelled ``label`` is scored against: round t's users for an output
        ``mechanism:round-t`` of a sequence population, every round's users together (the mean of
        the rounds' frequencies) for ``mechanism:rounds-mean`` (docs/longitudinal.md), else the
        population."""
        if self.rounds is not None and is_rounds_mean(label):
            # Every round's users counted: frequencies are the mean of the rounds' (n is n * T).
            total = np.bincount(self.rounds.items.ravel(), minlength=self.d)
            return self.replace(counts=total, record="item", rounds=None)
        t = round_of(label) if self.rounds is not None else None
        if t is None or not 0 <= t < self.rounds.T:  # type: ignore[union-attr]
            return self
        return self.round_population(t)

    def sample(self, m: int, rng: np.random.Generator) -> Population:
        """``m`` users drawn without replacement (a multivariate hypergeometric draw)."""
        if m > self.n:
            raise ValueError(f"cannot sample {m} users from a population of {self.n}")
        if self.offsets is not None:
            return self._sample_sets(m, rng)
        if self.attributes is not None:
            return self.attributes.sample_population(self, m, rng)
        if self.rounds is not None:  # m users with their whole sequences (kept in their order)
            rounds = self.rounds.take(np.sort(rng.choice(self.n, size=m, replace=False)))
            return self.replace(counts=rounds.counts(0, self.d), rounds=rounds)
        counts = rng.multivariate_hypergeometric(self.counts, m, method="marginals")
        return self.replace(counts=counts)

    def _sample_sets(self, m: int, rng: np.random.Generator) -> Population:
        """``m`` of the users, with their sets, drawn without replacement (kept in their order)."""
        offsets = self.offsets
        assert offsets is not None and self.members is not None
        chosen = np.sort(rng.choice(self.n, size=m, replace=False))
        sizes = np.diff(offsets)[chosen]
        new_offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        starts = np.repeat(offsets[chosen] - new_offsets[:-1], sizes)
        members = self.members[starts + np.arange(new_offsets[-1])]
        counts = np.bincount(members, minlength=self.d)
        return self.replace(counts=counts, offsets=new_offsets, members=members)


class Channel(ABC):
    """The report distribution ``P(y | x)`` of a finite-output oracle, as a linear operator.

    ``forward(theta)[y] = sum_x P(y|x) theta[x]`` and ``backward(w)[x] = sum_y P(y|x) w[y]``.
    Structured oracles (GRR, HR) implement both in O(d) or O(K log K), so that EM never builds the
    ``m x d`` matrix; :meth:`dense` is for small domains and tests.
    """

    #: Number of items ``d`` (columns).
    n_items: int
    #: Number of distinct reports (rows).
    n_reports: int

    @abstractmethod
    def forward(self, theta: np.ndarray) -> np.ndarray:
        """``P theta``: the report distribution of users whose items follow ``theta`` (length ``n_reports``)."""

    @abstractmethod
    def backward(self, w: np.ndarray) -> np.ndarray:
        """``P^T w``: for each item, the sum over reports of ``P(y | x) w[y]`` (length ``n_items``)."""

    def tags(self) -> ChannelTags:
        """Structure consumers may exploit (default: none; GRR's channel states its ``(p, q)``)."""
        return ChannelTags()

    def dense(self) -> np.ndarray:
        """The ``(n_reports, n_items)`` matrix, column by column (small domains only)."""
        eye = np.eye(self.n_items)
        return np.stack([self.forward(eye[x]) for x in range(self.n_items)], axis=1)


@dataclass(frozen=True, eq=False)
class Estimate:
    """A frequency estimate and everything a post-processor or a metric may need.

    All vectors are in the **fraction scale** (frequencies sum to 1 in truth); count-scale values
    are ``n`` times these (variances ``n**2`` times). A post-processor sees only this object,
    never the truth.

    :param frequencies: the estimate, length ``d`` (or ``len(items)``).
    :param n: the number of users who reported.
    :param epsilon: the privacy budget (``nan`` when users had different budgets, see ``parts``).
    :param mechanism: the label of the oracle or protocol that produced it.
    :param p_star, q_star: the pure-protocol support probabilities (``None`` if not pure).
    :param variance: per-item noise variance of the unprocessed estimate, **without** the
        ``f_v`` term (the "V-approx" of [W17]/[JG19]: data-independent, what Base-Cut, Calibrate and
        Power use as sigma^2). The exact variance is ``Oracle.variance(n, f)``.
    :param support_counts: the aggregated support counts ``c_v``.
    :param report_histogram: the histogram of reports, for finite-output oracles.
    :param channel: ``P(report | item)`` matching ``report_histogram``.
    :param bernoulli_support: ``support_counts`` are sums of per-user Bernoulli(p*) / Bernoulli(q*)
        support bits, as the producing oracle declares (its ``bernoulli_support`` tag; set by the
        simulation, never guessed from the numbers): what ``ibu`` needs without a report histogram.
    :param parts: per-budget-group estimates when users have personalized budgets.
    :param items: indices into the population's domain when the estimate covers only some items
        (Blender's head list); ``None`` means the whole domain in order.
    :param query_transforms: post-processors that act on query answers (Post-Pos); applied by
        :meth:`answer`.
    :param steps: names of the post-processors applied so far.
    :param warnings: results that are usable but not what was asked for (EM stopped at its
        iteration cap, a prior fit clamped), one sentence each, prefixed by the step's name when
        that helps; a step appends to those it received. The runner stores them, "; "-joined, in
        the result rows' ``notes``.
    :param query_estimates: query-level estimates a protocol computed beside the record vector
        (Blender); read them through :meth:`current_query_estimates`, which drops them once a
        post-processor has changed the vector they go with.
    :param info: diagnostics (EM iterations, fitted prior parameters, ...), JSON-able, for people:
        no plugin reads another plugin's ``info``; what is read is a typed field. One declared key:
        ``info["diagnostics"]``, a small mapping of JSON scalars (a per-repeat choice worth
        studying, e.g. ``em-murakami``'s alpha), which the engine copies to the row's ``info`` column.
    :param report_supports: each report's support, an ``(N, d)`` boolean matrix (``N`` the
        reports, fake ones included, in an order that tells nothing of who sent them), kept by the
        engine only on the per-user path for a pipeline with a step that declares
        ``requires_reports`` (a defense inspecting reports, docs/poisoning.md); else ``None``.
    :param flagged_reports: a detecting defense's verdict, one bool per row of
        ``report_supports`` (``True``: judged fake); read by the detection metrics.
    """

    frequencies: np.ndarray
    n: int
    epsilon: float
    mechanism: str = ""
    p_star: float | None = None
    q_star: float | None = None
    variance: np.ndarray | None = None
    support_counts: np.ndarray | None = None
    report_histogram: np.ndarray | None = None
    channel: Channel | None = None
    bernoulli_support: bool = False
    parts: tuple[Estimate, ...] = ()
    items: np.ndarray | None = None
    query_transforms: tuple[Any, ...] = ()
    steps: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    query_estimates: QueryEstimates | None = None
    info: Mapping[str, Any] = field(default_factory=dict)
    report_supports: np.ndarray | None = None
    flagged_reports: np.ndarray | None = None

    #: The result kind (docs/data-model.md): what metrics and post-processors declare they take.
    result: ClassVar[str] = FREQUENCIES

    @property
    def d(self) -> int:
        """Number of items the estimate covers."""
        return int(np.asarray(self.frequencies).size)

    @property
    def counts(self) -> np.ndarray:
        """The estimate in the count scale."""
        return self.n * np.asarray(self.frequencies, dtype=float)

    @property
    def noise_sd(self) -> float | None:
        """sqrt of the (V-approx) noise variance, fraction scale, if it is the same for all items."""
        if self.variance is None:
            return None
        v = np.asarray(self.variance, dtype=float)
        return float(math.sqrt(v.flat[0])) if v.size and np.all(v == v.flat[0]) else None

    def replace(self, **changes: Any) -> Estimate:
        """A copy with some fields changed (the estimate is immutable)."""
        return dataclasses.replace(self, **changes)

    def with_warning(self, message: str) -> Estimate:
        """A copy with ``message`` appended to :attr:`warnings`."""
        return self.replace(warnings=self.warnings + (str(message),))

    def with_query_estimates(
        self, queries: np.ndarray, frequencies: np.ndarray, variance: np.ndarray | None = None
    ) -> Estimate:
        """A copy carrying query-level estimates that go with exactly this frequency vector."""
        qe = QueryEstimates(
            queries=np.asarray(queries, dtype=np.int64),
            frequencies=np.asarray(frequencies, dtype=float),
            variance=None if variance is None else np.asarray(variance, dtype=float),
            frequencies_digest=self.frequencies_digest(),
        )
        return self.replace(query_estimates=qe)

    def current_query_estimates(self) -> QueryEstimates | None:
        """:attr:`query_estimates` while the vector is still the one they were computed with.

        Not name-based: any step that changes ``frequencies`` or ``items`` drops them, an identity
        step (``base``) keeps them.
        """
        qe = self.query_estimates
        if qe is None or qe.frequencies_digest != self.frequencies_digest():
            return None
        return qe

    def answer(self, sums: np.ndarray) -> np.ndarray:
        """Turn raw query answers (sums of ``frequencies`` over query sets) into the method's answers.

        For most pipelines this is the identity; a query-time post-processor such as Post-Pos
        clips each answer.
        """
        out = np.asarray(sums, dtype=float)
        for transform in self.query_transforms:
            out = transform.answer(out, self)
        return out

    def item_answers(self) -> np.ndarray:
        """Answers to the d single-item queries (equals ``frequencies`` without Post-Pos)."""
        return self.answer(np.asarray(self.frequencies, dtype=float))

    def frequencies_digest(self) -> str:
        """A short fingerprint of ``frequencies`` (and ``items``): the numbers, not how they came.

        A plugin that leaves side results in ``info`` which go with this exact vector (a
        protocol's query-level estimates) stores the digest beside them; a consumer recomputes it
        to tell whether a post-processor has changed the vector since. An identity step keeps it.
        """
        h = hashlib.blake2b(digest_size=8)
        f = np.ascontiguousarray(self.frequencies, dtype=np.float64)
        h.update(f"{f.size};".encode())
        h.update(f.tobytes())
        if self.items is not None:
            h.update(b"items;")
            h.update(np.ascontiguousarray(self.items, dtype=np.int64).tobytes())
        return h.hexdigest()


@dataclass(frozen=True, eq=False)
class QueryEstimates:
    """Query-level estimates a protocol reports beside a record-level :class:`Estimate`.

    Blender estimates query frequencies separately from (query, URL) record frequencies ([A17]
    Fig. 9: its client and blended query estimates are not sums of record estimates); a ranking
    metric uses them to order queries. They belong to one record vector, identified by
    ``frequencies_digest`` (:meth:`Estimate.frequencies_digest`).

    :param queries: query ids (indices into ``Population.parent_labels``).
    :param frequencies: the estimated frequency of each query, fraction scale.
    :param variance: their variance estimates, if known.
    :param frequencies_digest: the digest of the record vector these go with.
    """

    queries: np.ndarray
    frequencies: np.ndarray
    variance: np.ndarray | None
    frequencies_digest: str


@dataclass(frozen=True, eq=False)
class IdentifiedItems:
    """A heavy-hitter protocol's result: the items it identified, with estimated frequencies.

    Items are domain items (``uint64``: bit strings, or indices of ``[d]``), not positions in the
    population's histogram: an identified item may be held by nobody. Frequencies are fractions of
    all ``n`` users, as in :class:`Estimate`.

    :param items: the identified items, most frequent first (ties in any order).
    :param frequencies: their estimated frequencies, same length.
    :param n: the users who took part.
    :param epsilon: the budget each user's reports satisfy in total (the accounting is the
        protocol's :meth:`~ldpbench.types.Protocol.privacy_accounting`).
    :param k: how many items were asked for (``items`` may hold fewer).
    :param mechanism: the label of the protocol.
    :param bits_per_user: the mean number of bits a user sent, as the protocol encodes reports.
    :param server_seconds: the aggregator's wall-clock time (a measurement: it differs between
        runs, unlike every other field).
    :param rounds: one mapping per round of collection (``users``, ``epsilon``, ``candidates``...),
        JSON scalars, for people and for the conformance kit.
    :param warnings: as :attr:`Estimate.warnings`.
    :param info: diagnostics, as :attr:`Estimate.info`.
    """

    items: np.ndarray
    frequencies: np.ndarray
    n: int
    epsilon: float
    k: int
    mechanism: str = ""
    bits_per_user: float = math.nan
    server_seconds: float = math.nan
    rounds: tuple[Mapping[str, Any], ...] = ()
    steps: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    info: Mapping[str, Any] = field(default_factory=dict)

    #: The result kind (docs/data-model.md): what metrics and post-processors declare they take.
    result: ClassVar[str] = IDENTIFIED_ITEMS

    def replace(self, **changes: Any) -> IdentifiedItems:
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)

    def with_warning(self, message: str) -> IdentifiedItems:
        """A copy with ``message`` appended to :attr:`warnings`."""
        return self.replace(warnings=self.warnings + (str(message),))

    def frequencies_digest(self) -> str:
        """A short fingerprint of the items and their frequencies (as :meth:`Estimate.frequencies_digest`)."""
        h = hashlib.blake2b(digest_size=8)
        h.update(b"identified;")
        h.update(np.ascontiguousarray(self.items, dtype=np.uint64).tobytes())
        h.update(np.ascontiguousarray(self.frequencies, dtype=np.float64).tobytes())
        return h.hexdigest()


def _no_itemsets() -> np.ndarray:
    return np.zeros(1, dtype=np.int64)


@dataclass(frozen=True, eq=False)
class IdentifiedItemsets(IdentifiedItems):
    """A frequent-itemset protocol's result: the itemsets it identified, with estimated frequencies
    (docs/data-model.md, result kind ``identified-itemsets``).

    Entry j is the itemset ``itemset_members[itemset_offsets[j]:itemset_offsets[j + 1]]`` (uint64
    domain items, increasing, at least one: a singleton is the itemset of one item); ``items`` holds
    the entries' indices ``0 .. m-1`` (uint64), so that everything :class:`IdentifiedItems` says of
    items holds of entries. ``frequencies[j]`` estimates the share of all ``n`` users whose set
    contains itemset j; ``k`` is how many itemsets were asked for.

    :param itemset_offsets: int64, ``m + 1`` entries from 0, increasing.
    :param itemset_members: uint64, the itemsets' items, one after another.
    """

    itemset_offsets: np.ndarray = field(default_factory=_no_itemsets)
    itemset_members: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.uint64))

    result: ClassVar[str] = IDENTIFIED_ITEMSETS

    def itemsets(self) -> list[tuple[int, ...]]:
        """The identified itemsets as tuples of items, in the result's order (for people)."""
        members = np.asarray(self.itemset_members, dtype=np.uint64).tolist()
        offsets = np.asarray(self.itemset_offsets, dtype=np.int64).tolist()
        return [tuple(members[a:b]) for a, b in zip(offsets[:-1], offsets[1:])]

    def frequencies_digest(self) -> str:
        """A short fingerprint of the itemsets and their frequencies."""
        h = hashlib.blake2b(digest_size=8)
        h.update(b"identified-itemsets;")
        h.update(np.ascontiguousarray(self.itemset_offsets, dtype=np.int64).tobytes())
        h.update(np.ascontiguousarray(self.itemset_members, dtype=np.uint64).tobytes())
        h.update(np.ascontiguousarray(self.frequencies, dtype=np.float64).tobytes())
        return h.hexdigest()
