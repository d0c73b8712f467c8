"""The data model and the plugin interfaces: what every plugin kind must provide.

Data (DESIGN.md, "The data model"):

- :class:`Population` — a histogram of items, one item per user, with optional structure.
- :class:`Estimate` — an oracle's frequency vector plus what later steps need.
- :class:`Channel` — ``P(report | item)`` of a finite-output oracle as a linear operator (for EM).

Plugin interfaces, one abstract base class per kind: :class:`Oracle`, :class:`PostProcessor`,
:class:`PriorFamily`, :class:`Metric`, :class:`Dataset`, :class:`Protocol`, :class:`Executor`.
A plugin class sets ``name`` (lowercase, hyphenated) and ``params`` (a tuple of
:class:`~ldpbench.params.Param`); its constructor receives the validated parameter values as
keyword arguments, and stores them verbatim (scikit-learn's convention: no logic in ``__init__``
beyond storing and cheap derived constants). Plugins never touch global random state: every method
that draws takes an explicit :class:`numpy.random.Generator`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .params import Param

# ----------------------------------------------------------------------------------------------
# Data
# ----------------------------------------------------------------------------------------------


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
    """

    counts: np.ndarray
    name: str = ""
    labels: Sequence[str] | None = None
    parents: np.ndarray | None = None
    parent_labels: Sequence[str] | None = None
    info: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        counts = np.asarray(self.counts)
        if counts.ndim != 1:
            raise ValueError("Population.counts must be one-dimensional")
        if counts.size and (counts.min() < 0):
            raise ValueError("Population.counts must be non-negative")
        object.__setattr__(self, "counts", counts.astype(np.int64, copy=False))

    @property
    def d(self) -> int:
        """Domain size."""
        return int(self.counts.size)

    @property
    def n(self) -> int:
        """Number of users."""
        return int(self.counts.sum())

    @property
    def frequencies(self) -> np.ndarray:
        """True frequencies as fractions (sum to 1)."""
        n = self.n
        return self.counts / n if n else np.zeros(self.d)

    def replace(self, **changes: Any) -> Population:
        return dataclasses.replace(self, **changes)

    def sample(self, m: int, rng: np.random.Generator) -> Population:
        """``m`` users drawn without replacement (a multivariate hypergeometric draw)."""
        if m > self.n:
            raise ValueError(f"cannot sample {m} users from a population of {self.n}")
        counts = rng.multivariate_hypergeometric(self.counts, m, method="marginals")
        return self.replace(counts=counts)


class Channel(ABC):
    """The report distribution ``P(y | x)`` of a finite-output oracle, as a linear operator.

    ``forward(theta)[y] = sum_x P(y|x) theta[x]`` and ``backward(w)[x] = sum_y P(y|x) w[y]``.
    Structured oracles (GRR, HR) implement both in O(d) or O(K log K), so that EM never builds the
    ``m x d`` matrix; :meth:`dense` is for small domains and tests.
    """

    n_items: int
    n_reports: int

    @abstractmethod
    def forward(self, theta: np.ndarray) -> np.ndarray: ...

    @abstractmethod
    def backward(self, w: np.ndarray) -> np.ndarray: ...

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
    :param parts: per-budget-group estimates when users have personalized budgets.
    :param items: indices into the population's domain when the estimate covers only some items
        (Blender's head list); ``None`` means the whole domain in order.
    :param query_transforms: post-processors that act on query answers (Post-Pos); applied by
        :meth:`answer`.
    :param steps: names of the post-processors applied so far.
    :param info: diagnostics (EM iterations, fitted prior parameters, ...), JSON-able.
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
    parts: tuple[Estimate, ...] = ()
    items: np.ndarray | None = None
    query_transforms: tuple[Any, ...] = ()
    steps: tuple[str, ...] = ()
    info: Mapping[str, Any] = field(default_factory=dict)

    @property
    def d(self) -> int:
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
        return dataclasses.replace(self, **changes)

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


# ----------------------------------------------------------------------------------------------
# Plugin interfaces
# ----------------------------------------------------------------------------------------------


class Plugin(ABC):
    """What all plugin classes share: a registered ``name``, declared ``params``, stored values."""

    #: The registered name: lowercase words joined by hyphens (``norm-sub``).
    name: ClassVar[str] = ""
    #: Declared parameters (see :mod:`ldpbench.params`).
    params: ClassVar[tuple[Param, ...]] = ()
    #: Bump when the plugin's numbers change for the same inputs: ``compare`` then marks rows
    #: "not comparable" instead of "regressed".
    algorithm_version: ClassVar[str] = "1"

    def __init__(self, **params: Any) -> None:
        # Declared defaults fill in what is not given, so that ``NormSub()`` built by hand behaves
        # like one built from a spec (``plugins.create`` validates and passes every value).
        values = {p.name: p.default for p in type(self).params if not p.required}
        values.update(params)
        for key, value in values.items():
            setattr(self, key, value)
        self._param_values = values

    def get_params(self) -> dict[str, Any]:
        return dict(self._param_values)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._param_values.items())
        return f"{type(self).__name__}({args})"


class Oracle(Plugin):
    """A frequency oracle (pure LDP protocol in the sense of [W17]).

    Constructed per (domain size, budget): ``Oracle(d=..., epsilon=..., **params)``.

    Two simulation paths must agree in distribution (the conformance kit checks it):

    - **per-user**: :meth:`perturb` (client side, vectorized over a chunk of users) then
      :meth:`support_counts` (aggregator side); the engine sums support counts over chunks.
    - **aggregate**: :meth:`sample_support_counts` draws the support counts directly from their
      exact distribution given the true counts, in O(d) where possible.

    :meth:`estimate` turns support counts into the unbiased estimate
    ``f_v = (c_v / n - q*) / (p* - q*)`` ([W17]; [W20] §III).
    """

    #: Whether :meth:`sample_support_counts` is exact in distribution (say under which assumption
    #: in the class docstring).
    exact_aggregate: ClassVar[bool] = True

    def __init__(self, d: int, epsilon: float, **params: Any) -> None:
        super().__init__(**params)
        self.d = int(d)
        self.epsilon = float(epsilon)

    # -- constants -------------------------------------------------------------------------
    @property
    @abstractmethod
    def p_star(self) -> float:
        """P(v in Support(report) | user holds v)."""

    @property
    @abstractmethod
    def q_star(self) -> float:
        """P(v in Support(report) | user holds v' != v)."""

    # -- client side -----------------------------------------------------------------------
    @abstractmethod
    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> Any:
        """Reports of users holding ``values`` (an int array), vectorized."""

    # -- aggregator side -------------------------------------------------------------------
    @abstractmethod
    def support_counts(self, reports: Any) -> np.ndarray:
        """``c_v`` = number of reports whose support contains ``v``, for every ``v`` (int64, length d)."""

    def sample_support_counts(self, true_counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Support counts drawn directly from their distribution given the true counts."""
        raise NotImplementedError(f"{type(self).__name__} has no aggregate shortcut")

    def estimate(self, support_counts: np.ndarray, n: int) -> Estimate:
        """The unbiased estimate from support counts (fraction scale)."""
        p, q = self.p_star, self.q_star
        c = np.asarray(support_counts, dtype=np.float64)
        f = (c / n - q) / (p - q)
        return Estimate(
            frequencies=f,
            n=int(n),
            epsilon=self.epsilon,
            mechanism=self.name,
            p_star=p,
            q_star=q,
            variance=np.full(self.d, self.noise_variance(n)),
            support_counts=np.asarray(support_counts),
        )

    def variance(self, n: int, f: np.ndarray) -> np.ndarray:
        """Exact per-item variance of the unbiased estimate (V-exact, [W20] §III, with the f_v term)."""
        p, q = self.p_star, self.q_star
        f = np.asarray(f, dtype=float)
        return (q * (1 - q) + f * (p - q) * (1 - p - q)) / (n * (p - q) ** 2)

    def noise_variance(self, n: int) -> float:
        """Variance without the f_v term (V-approx): q*(1-q*) / (n (p*-q*)^2)."""
        p, q = self.p_star, self.q_star
        return q * (1 - q) / (n * (p - q) ** 2)

    # -- finite output space (optional) ------------------------------------------------------
    def output_table(self) -> tuple[np.ndarray, np.ndarray]:
        """The exact output law on a small domain, for the epsilon-LDP audit.

        Returns ``(P, S)``, both of shape ``(n_outputs, d)``: ``P[y, v] = P(output y | v)`` and
        ``S[y, v] = v in Support(y)``. Enumerating every output is only feasible for small ``d``.
        """
        raise NotImplementedError

    def channel(self) -> Channel | None:
        """``P(report | item)`` for oracles whose reports take finitely many values (GRR, HR)."""
        return None

    def report_histogram(self, reports: Any) -> np.ndarray:
        """Histogram of reports over the channel's report space (finite-output oracles)."""
        raise NotImplementedError

    def sample_report_histogram(self, true_counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The report histogram drawn directly from its distribution (finite-output oracles)."""
        raise NotImplementedError

    def support_counts_from_histogram(self, histogram: np.ndarray) -> np.ndarray:
        """Support counts from a report histogram (finite-output oracles)."""
        raise NotImplementedError


class PostProcessor(Plugin):
    """``Estimate -> Estimate`` (Base-Pos, Norm-Sub, Calibrate, EM, ...); chainable.

    A post-processor that acts on **query answers** rather than on the vector (Post-Pos of
    [W20]) sets ``acts_on = "queries"`` and implements :meth:`answer`; the default :meth:`apply`
    then attaches it to the estimate, and metrics call :meth:`Estimate.answer`.
    """

    acts_on: ClassVar[str] = "estimate"

    def apply(self, estimate: Estimate, rng: np.random.Generator) -> Estimate:
        if self.acts_on == "queries":
            return estimate.replace(query_transforms=estimate.query_transforms + (self,))
        raise NotImplementedError(f"{type(self).__name__}.apply")

    def answer(self, sums: np.ndarray, estimate: Estimate) -> np.ndarray:
        """Transform raw query answers (only for ``acts_on == "queries"``)."""
        raise NotImplementedError(f"{type(self).__name__}.answer")


class PriorFamily(Plugin):
    """A parametric prior over true **counts** for Calibrate and Power ([JG19] §III-C).

    The prior is a law on an integer support ``K = {lo, ..., hi}`` (inclusive; Calibrate uses
    ``lo = default_support_min`` unless the user says otherwise and ``hi = n``), given by an
    unnormalized log weight ``log_weight(k, theta)``: ``P(k | theta) = exp(log_weight(k, theta)) / Z``.
    ``theta`` is a tuple of floats in the order of ``parameter_names``, in the count scale.

    What a family must implement:

    - :meth:`log_weight` (vectorized over ``k``);
    - :meth:`fit_mean_variance`: the mean-variance method of [JG19] Eq. 17-20 (solve
      ``E_theta[f] = mean(f_hat)`` and, for two-parameter families, ``Var_theta[f] = var(f_hat) -
      sigma_s^2``);
    - :meth:`fit_mle`: maximum likelihood under Gaussian noise, [JG19] Eq. 16.

    The built-in families subclass ``ldpbench_plugins.priors.PriorFamilyBase``, which provides
    ``fit_mle``, :meth:`log_normalizer` and :meth:`moments` through Calibrate's posterior engine;
    a third-party family can subclass it too and then needs only ``log_weight`` and
    ``fit_mean_variance``. Register a family with the ``ldpbench_register_prior_families`` hook.

    Optional hints let the posterior engine replace sums over many integers by quadrature (the
    Poisson summation formula makes a sum over the integers of a function that is smooth on the
    integer scale equal to its integral). A family that sets ``smooth = True`` promises that
    ``log_weight`` accepts real ``k`` and is analytic on the support except near
    :meth:`rough_points`, varying on a length scale of at least :meth:`smooth_scale` there. With
    ``smooth = False`` (the default) the engine sums over integers only: exact, but slower for
    large noise.
    """

    #: Names of the family's parameters, in the order ``theta`` and the ``fit_*`` results use.
    parameter_names: ClassVar[tuple[str, ...]] = ()
    #: The lowest count of the default support (a power law lives on {1, ..., n}, most on {0, ..., n}).
    default_support_min: ClassVar[int] = 0
    #: Whether ``log_weight`` is a smooth function of real ``k`` away from :meth:`rough_points`.
    smooth: ClassVar[bool] = False

    @abstractmethod
    def log_weight(self, k: np.ndarray, theta: Sequence[float]) -> np.ndarray:
        """Unnormalized log prior weight of counts ``k`` (a float array; integers unless ``smooth``)."""

    @abstractmethod
    def fit_mean_variance(
        self, estimates: np.ndarray, noise_var: float, support: tuple[int, int]
    ) -> tuple[float, ...]:
        """Parameters matching the estimates' mean and variance minus the noise ([JG19] Eq. 17-20).

        :param estimates: the count-scale estimates ``f_hat`` of the d items.
        :param noise_var: the count-scale noise variance ``sigma_s^2`` ([JG19] Eq. 14).
        :param support: ``(lo, hi)``, inclusive.
        """

    @abstractmethod
    def fit_mle(self, estimates: np.ndarray, noise_var: float, support: tuple[int, int]) -> tuple[float, ...]:
        """Maximum-likelihood parameters under Gaussian noise ([JG19] Eq. 16)."""

    # -- hints for the posterior engine (optional) ----------------------------------------------
    def rough_points(self, theta: Sequence[float]) -> tuple[float, ...]:
        """Points (on or off the support) where ``log_weight`` is not analytic: a kink (Laplace's
        mode), a singularity (0 for a power law, -1 for Poisson). The support ends count anyway."""
        return ()

    def smooth_scale(self, k: np.ndarray, theta: Sequence[float]) -> np.ndarray:
        """Local length scale over which ``log_weight`` bends (e.g. the Gaussian's tau); ``inf``
        for a log weight that is linear or that bends ever more slowly."""
        return np.full(np.shape(k), np.inf)

    def effective_support(self, theta: Sequence[float], support: tuple[int, int]) -> tuple[int, int]:
        """A sub-interval of ``support`` outside which the weight is below ``exp(-700)`` times its
        maximum (the engine then ignores those counts). Default: the whole support."""
        return support

    def to_unconstrained(self, theta: Sequence[float]) -> np.ndarray:
        """Map ``theta`` to unconstrained coordinates for the maximum-likelihood optimizer."""
        return np.asarray(theta, dtype=float)

    def from_unconstrained(self, u: np.ndarray) -> tuple[float, ...]:
        """Inverse of :meth:`to_unconstrained`."""
        return tuple(float(v) for v in u)

    # -- the normalized law (defaults: exact sums over the support) ------------------------------
    def log_normalizer(self, theta: Sequence[float], support: tuple[int, int]) -> float:
        """``log Z = log sum_{k in support} exp(log_weight(k))``."""
        lo, hi = self.effective_support(theta, support)
        total, top = 0.0, -np.inf
        for start in range(lo, hi + 1, 1 << 20):
            lw = self.log_weight(np.arange(start, min(hi, start + (1 << 20) - 1) + 1, dtype=float), theta)
            new_top = max(top, float(lw.max()))
            total = total * math.exp(top - new_top) + float(np.exp(lw - new_top).sum())
            top = new_top
        return top + math.log(total)

    def log_pmf(self, k: np.ndarray, theta: Sequence[float], support: tuple[int, int]) -> np.ndarray:
        """Log prior probability of counts ``k`` (normalized on ``support``, inclusive)."""
        k = np.asarray(k, dtype=float)
        out = self.log_weight(k, theta) - self.log_normalizer(theta, support)
        return np.where((k >= support[0]) & (k <= support[1]), out, -np.inf)

    def moments(self, theta: Sequence[float], support: tuple[int, int]) -> tuple[float, float]:
        """Mean and variance of the law on ``support`` (the discretized, truncated law)."""
        lo, hi = self.effective_support(theta, support)
        k = np.arange(lo, hi + 1, dtype=float)
        w = np.exp(self.log_weight(k, theta) - self.log_normalizer(theta, (lo, hi)))
        mean = float((k * w).sum())
        return mean, float((((k - mean) ** 2) * w).sum())


class Metric(Plugin):
    """``(truth, estimate, rng) -> float``: one number per cell and pipeline."""

    #: ``True`` for scores (precision, NDCG); ``False`` for errors (MSE).
    greater_is_better: ClassVar[bool] = False

    @abstractmethod
    def score(self, truth: Population, estimate: Estimate, rng: np.random.Generator) -> float:
        """Compare the estimate with the true population.

        ``truth`` is the population the users were drawn from; compare on fractions
        (``truth.frequencies``), restricted to ``estimate.items`` when that is set.
        """

    def theory(self, truth: Population, estimate: Estimate, variance: np.ndarray) -> float:
        """Optional: the expected score of an unbiased ``estimate`` with per-item ``variance``
        (fraction scale), e.g. MSE = mean(variance). NaN (the default) when the metric has no
        such formula. The engine stores it as the row's ``theory`` (:mod:`ldpbench.theory`)."""
        return math.nan


class Dataset(Plugin):
    """A population: a shipped histogram, a user's file, or a synthetic generator."""

    @abstractmethod
    def load(self, rng: np.random.Generator) -> Population:
        """Build the population. ``rng`` is keyed by the spec seed and the dataset, not the repeat."""


class Protocol(Plugin):
    """An end-to-end mechanism that is not "one oracle, then post-processing" (Blender).

    :meth:`run` returns one or more labelled estimates (e.g. ``opt-in``, ``client``, ``blended``),
    each of which goes through the spec's pipelines and metrics like an oracle's estimate.
    """

    @abstractmethod
    def run(
        self, population: Population, epsilon: float, rng: np.random.Generator, *, simulation: str = "aggregate"
    ) -> Mapping[str, Estimate]:
        """Simulate the protocol on the population's users and return labelled estimates.

        :param simulation: the run's simulation mode, ``aggregate`` or ``per-user`` (the spec's
            ``simulation:``); a protocol with both an exact aggregate shortcut and a faithful
            per-user path chooses by it, like an oracle.
        """


@dataclass(frozen=True)
class TaskLost:
    """What an executor yields instead of a task's result when the process running it died.

    A worker killed by a segfault, ``os._exit`` or the OOM killer returns no rows; the runner
    stores the cell as failed (``reason`` in every row's ``error``), so the run completes with
    exit 3 and a rerun retries the cell, as for a plugin that raised.
    """

    task: Any
    reason: str


class Executor(Plugin):
    """Runs cell tasks: in-process, on a local process pool, on a cluster."""

    @abstractmethod
    def map_unordered(self, fn: Callable[[Any], Any], tasks: Iterable[Any]) -> Iterator[Any]:
        """Apply the picklable ``fn`` to every task; yield results as they finish, or a
        :class:`TaskLost` for a task whose process died."""

    def close(self) -> None:
        """Release workers."""


#: The plugin kinds, their base classes and the hook that registers them.
KINDS: dict[str, type[Plugin]] = {
    "oracle": Oracle,
    "postprocessor": PostProcessor,
    "prior": PriorFamily,
    "metric": Metric,
    "dataset": Dataset,
    "protocol": Protocol,
    "executor": Executor,
}
