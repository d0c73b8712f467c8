"""The frequency-oracle contract: :class:`Oracle`."""

from __future__ import annotations

import functools
from abc import abstractmethod
from typing import Any, ClassVar

import numpy as np

from ldpbench.types.data import Channel, Estimate
from ldpbench.types.plugin import Plugin, implements
from ldpbench.types.tags import OracleTags

#: The smallest domain size anywhere: a spec's datasets (refused at validate, FILE:LINE), ``ldpbench
#: audit`` and ``check-plugin`` (``--domain``) share it, so a size is valid everywhere or nowhere
#: (at d = 1 there is nothing to estimate and q* = P(v in Support | another item) is undefined).
MIN_DOMAIN = 2

#: Oracle methods that only make sense together: a finite report space.
FINITE_OUTPUT_GROUP = ("channel", "report_histogram", "support_counts_from_histogram")


@functools.lru_cache(maxsize=512)
def _class_tags(cls: type, chunk_users: int | None) -> OracleTags:
    """:meth:`Oracle.tags`'s default for a class (which methods it overrides, its class
    attributes) and ``chunk_users``: computed once per class and value, since a per-user run of a
    multidimensional protocol asks for it once per attribute (an immutable dataclass, shared)."""
    finite = all(implements(cls, Oracle, m) for m in FINITE_OUTPUT_GROUP)
    histogram_sampler = finite and implements(cls, Oracle, "sample_report_histogram")
    return OracleTags(
        aggregate=implements(cls, Oracle, "sample_support_counts") or histogram_sampler,
        exact_aggregate=bool(cls.exact_aggregate),
        exact_marginals=bool(cls.exact_aggregate if cls.exact_marginals is None else cls.exact_marginals),
        finite_output=finite,
        aggregate_histogram=histogram_sampler,
        output_table=implements(cls, Oracle, "output_table"),
        output_rows=implements(cls, Oracle, "output_rows"),
        support_matrix=implements(cls, Oracle, "support_matrix"),
        report_density=implements(cls, Oracle, "report_log_likelihood"),
        chunk_users=chunk_users,
    )


class Oracle(Plugin):
    """A frequency oracle (pure LDP protocol in the sense of [W17]).

    Constructed per (domain size, budget): ``Oracle(d=..., epsilon=..., **params)``.

    Two simulation paths must agree in distribution (the conformance kit checks it):

    - **per-user**: :meth:`perturb` (client side, vectorized over a chunk of users) then
      :meth:`support_counts` (aggregator side); the engine sums support counts over chunks.
    - **aggregate**: :meth:`sample_support_counts` draws the support counts directly from their
      exact distribution given the true counts, in O(d) where possible.

    :meth:`estimate` turns support counts into the estimate ``f_v = (c_v / n - q*) / (p* - q*)``
    ([W17]; [W20] §III), unbiased for a pure protocol.

    Required: :attr:`p_star`, :attr:`q_star`, :meth:`perturb`, :meth:`support_counts`. Everything
    else is optional and announced by :meth:`tags` (an :class:`~ldpbench.types.OracleTags`),
    which by default reads what the class overrides:

    ================================  ==========================================================
    tag                               on when the class overrides
    ================================  ==========================================================
    ``aggregate``                     :meth:`sample_support_counts`, or (finite output)
                                      :meth:`sample_report_histogram`
    ``finite_output``                 :meth:`channel`, :meth:`report_histogram` and
                                      :meth:`support_counts_from_histogram`
    ``aggregate_histogram``           :meth:`sample_report_histogram` (with finite output)
    ``bernoulli_support``             never: the oracle states it by overriding :meth:`tags`
                                      (its support counts are sums of per-user Bernoulli(p*)
                                      / Bernoulli(q*) bits; ``ibu`` reads them then)
    ``unbiased``                      always, unless the oracle states ``False`` by overriding
                                      :meth:`tags`; it must then implement
                                      :meth:`expected_estimate`
    ``output_table``                  :meth:`output_table`
    ``output_rows``                   :meth:`output_rows`
    ``support_matrix``                :meth:`support_matrix`
    ``report_density``                :meth:`report_log_likelihood`
    ``exact_aggregate``               class attribute :attr:`exact_aggregate`
    ``exact_marginals``               class attribute :attr:`exact_marginals`, else
                                      ``exact_aggregate``
    ``chunk_users``                   property :attr:`chunk_users`
    ================================  ==========================================================

    The registry refuses a class that implements part of a group (a channel without a report
    histogram); the spec validator refuses a spec that needs a capability the tags deny.
    """

    #: Whether the aggregate shortcut is exact in distribution (say under which assumption in the
    #: class docstring); read through :meth:`tags`.
    exact_aggregate: ClassVar[bool] = True
    #: Whether each support count of the aggregate shortcut has its exact law, where their joint
    #: law does not (``None``: as :attr:`exact_aggregate`); read through :meth:`tags`.
    exact_marginals: ClassVar[bool | None] = None

    def __init__(self, d: int, epsilon: float, **params: Any) -> None:
        super().__init__(**params)
        #: Domain size: items are ``0 .. d-1``.
        self.d = int(d)
        #: The privacy budget each user's report satisfies (epsilon-LDP).
        self.epsilon = float(epsilon)

    @classmethod
    def contract_problems(kind, cls: type) -> list[str]:
        """The oracle's registration rules: a finite report space is declared whole (with
        :data:`FINITE_OUTPUT_GROUP` together, never a part of it), ``sample_report_histogram``
        and ``output_rows`` only with what they need, ``exact_aggregate`` a bool. Read with the same
        derivation as :meth:`tags`: e.g. an oracle with a ``channel`` but no ``report_histogram``
        would look finite-output to nobody and silently lose EM, so it is refused at registration."""
        problems = super().contract_problems(cls)
        have = [m for m in FINITE_OUTPUT_GROUP if implements(cls, Oracle, m)]
        if have and len(have) < len(FINITE_OUTPUT_GROUP):
            lacking = [m for m in FINITE_OUTPUT_GROUP if m not in have]
            problems.append(
                f"a finite report space needs {', '.join(FINITE_OUTPUT_GROUP)} together: it implements "
                f"{', '.join(have)} but not {', '.join(lacking)}"
            )
        if implements(cls, Oracle, "sample_report_histogram") and len(have) < len(FINITE_OUTPUT_GROUP):
            problems.append(
                "sample_report_histogram needs a finite report space (" + ", ".join(FINITE_OUTPUT_GROUP) + ")"
            )
        if implements(cls, Oracle, "output_rows") and not implements(cls, Oracle, "output_table"):
            problems.append("output_rows indexes rows of output_table, which it does not implement")
        if not isinstance(cls.exact_aggregate, bool):
            problems.append(f"exact_aggregate must be True or False, got {cls.exact_aggregate!r}")
        if cls.exact_marginals is not None and not isinstance(cls.exact_marginals, bool):
            problems.append(f"exact_marginals must be True, False or None, got {cls.exact_marginals!r}")
        elif cls.exact_aggregate is True and cls.exact_marginals is False:
            problems.append("exact_marginals cannot be False when exact_aggregate is True (the joint law fixes them)")
        return problems

    # -- capabilities ----------------------------------------------------------------------
    def tags(self) -> OracleTags:
        """The optional capabilities of this instance (see the table in the class docstring).

        Override to state more (``dataclasses.replace(super().tags(), output_table=self.d <= 12)``);
        never to claim a method the class does not implement (the kit checks it).
        """
        return _class_tags(type(self), self.chunk_users)

    @property
    def chunk_users(self) -> int | None:
        """Users per chunk on the per-user path, for oracles whose reports are large (O(d) per
        user); ``None`` (the default) lets the engine choose. Must not depend on the machine."""
        return None

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

    def encode_reports(self, reports: Any, n_users: int) -> Any:
        """What each of the ``n_users`` clients of a :meth:`perturb` chunk transmits: its canonical
        message. A ``(n_users, width)`` ``uint8`` array (row ``u``: user ``u``'s bytes, padded so
        that no two different messages become equal) or one ``bytes`` per user.

        This is what the audits judge (docs/audit.md): epsilon-LDP is a property of the message,
        so everything a report carries (the order of its items, every field, its dtype) must be in
        it, and nothing else. The default (:func:`ldpbench.types.reports.default_encoding`)
        serializes a NumPy array row by row, or a dataclass of such arrays field by field, exactly
        as held (no sorting): an oracle with another report type overrides it.
        """
        from ldpbench.types.reports import default_encoding

        return default_encoding(reports, n_users)

    # -- aggregator side -------------------------------------------------------------------
    @abstractmethod
    def support_counts(self, reports: Any) -> np.ndarray:
        """``c_v`` = number of reports whose support contains ``v``, for every ``v`` (int64, length d)."""

    def sample_support_counts(self, true_counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Support counts drawn directly from their distribution given the true counts (optional:
        the ``aggregate`` tag). Same law as summing :meth:`support_counts` over :meth:`perturb`."""
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

    def expected_estimate(self, f: np.ndarray) -> np.ndarray:
        """``E[f_hat]`` for true frequencies ``f``: ``f`` itself for an unbiased oracle (the
        default). An oracle whose tags state ``unbiased=False`` overrides it with its exact mean;
        ``theory`` and the conformance kit read it."""
        return np.array(f, dtype=float)

    def variance(self, n: int, f: np.ndarray) -> np.ndarray:
        """Exact per-item variance of the estimate (V-exact, [W20] §III, with the f_v term, for a
        pure protocol; an oracle that is not one overrides it with its own)."""
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
        ``S[y, v] = v in Support(y)``. Enumerating every output is only feasible for small ``d``
        (optional: the ``output_table`` tag).
        """
        raise NotImplementedError(f"{type(self).__name__} has no output table")

    def output_rows(self, reports: Any) -> np.ndarray:
        """The row of :meth:`output_table` of each report (int array, one per user; small domains
        only). Optional (the ``output_rows`` tag): the kit then tests the reports' joint law
        exactly instead of only their support counts."""
        raise NotImplementedError(f"{type(self).__name__} has no output_rows")

    def support_matrix(self, reports: Any) -> np.ndarray:
        """Per-user supports: a boolean array of shape ``(n_users, d)``, row ``u`` = the items
        supported by user ``u``'s report (its row sums are what :meth:`support_counts` adds up).
        Optional (the ``support_matrix`` tag): the empirical privacy audit attacks reports through it.
        """
        raise NotImplementedError(f"{type(self).__name__} has no support_matrix")

    def report_log_likelihood(self, reports: Any) -> np.ndarray:
        """For reports with a density (continuous output, e.g. SHE's Laplace-noised vectors):
        ``L[u, v] = log p(report u | user holds v)`` up to an additive constant per report, shape
        ``(n_users, d)``. Optional (the ``report_density`` tag): the empirical audit attacks such
        reports with likelihood-ratio events ``{L[:, v1] - L[:, v2] > t}`` and checks that the
        declared privacy loss never exceeds epsilon."""
        raise NotImplementedError(f"{type(self).__name__} declares no report density")

    def channel(self) -> Channel | None:
        """``P(report | item)`` for oracles whose reports take finitely many values (GRR, HR);
        ``None`` otherwise. Part of the ``finite_output`` group."""
        return None

    def report_histogram(self, reports: Any) -> np.ndarray:
        """Histogram of reports over the channel's report space (``finite_output`` group)."""
        raise NotImplementedError(f"{type(self).__name__} has no finite report space")

    def sample_report_histogram(self, true_counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The report histogram drawn directly from its distribution (optional for finite-output
        oracles: the ``aggregate_histogram`` tag)."""
        raise NotImplementedError(f"{type(self).__name__} has no report-histogram sampler")

    def support_counts_from_histogram(self, histogram: np.ndarray) -> np.ndarray:
        """Support counts from a report histogram (``finite_output`` group)."""
        raise NotImplementedError(f"{type(self).__name__} has no finite report space")
