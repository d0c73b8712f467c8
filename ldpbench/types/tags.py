"""Capability tags: what an optional part of a plugin's contract it provides, declared once.

Modelled on scikit-learn's estimator tags (``__sklearn_tags__``, SLEP 020): a plugin's
``tags()`` returns a frozen dataclass whose default the base class derives from what the plugin
class implements (a method it overrides) or declares (a class attribute), and which a plugin may
override to state more, e.g.::

    def tags(self) -> OracleTags:
        return dataclasses.replace(super().tags(), output_table=self.d <= 12)

The engine, the spec validator, the registry and the conformance kit read capabilities only from
here, never by probing attributes: a capability that is not in a tag is not part of the contract.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ldpbench.types.domain import FREQUENCIES


@dataclass(frozen=True)
class OracleTags:
    """What an :class:`~ldpbench.types.Oracle` instance can do beyond the required methods.

    Every oracle enumerates its domain ``[d]`` (its estimate is a length-``d`` vector), so none
    runs on a bit-string domain (docs/data-model.md): the spec validator refuses the pairing.
    """

    #: An aggregate shortcut exists: ``sample_support_counts``, or ``sample_report_histogram`` for a
    #: finite-output oracle. Without it only ``simulation: per-user`` can run the oracle.
    aggregate: bool = False
    #: The aggregate shortcut draws from the exact law of the per-user path (else an approximation,
    #: which the class docstring must state).
    exact_aggregate: bool = True
    #: Each support count of the aggregate shortcut has its exact law, even where their joint law
    #: does not (``exact_aggregate`` False: SS, CMS and PGR with ``aggregate: marginal``). The raw
    #: estimate's per-item means and variances, and so its expected MSE and L1, are then those of
    #: the per-user path: rows scored by a metric that says so (``MetricTags.marginal_expectation``)
    #: without post-processing carry no "approximate" note. Derived: the class attribute
    #: ``exact_marginals``, else ``exact_aggregate``.
    exact_marginals: bool = True
    #: Reports take finitely many values: ``channel()``, ``report_histogram()`` and
    #: ``support_counts_from_histogram()`` are implemented, so EM-family post-processors apply.
    finite_output: bool = False
    #: The aggregate shortcut yields the report histogram (``sample_report_histogram``), so an
    #: aggregate-path estimate carries what EM needs.
    aggregate_histogram: bool = False
    #: The support counts are sums over users of Bernoulli bits: whether a report supports item
    #: ``v`` is Bernoulli(``p*``) for a user holding ``v`` and Bernoulli(``q*``) for any other
    #: user, independently across users -- the definition of a pure protocol (Wang et al., USENIX
    #: Security 2017, §3) held exactly, with integer counts (GRR, OUE, SUE, OLH, BLH, SS, HR; not
    #: SHE's sums of Laplace noise, nor a sketch). Each count is then Binomial(n, q* + (p* - q*)
    #: f_v) for users drawn from ``f``, and ``ibu`` maximizes the product of these per-item
    #: likelihoods from the support counts alone. Never derived: an oracle states it.
    bernoulli_support: bool = False
    #: The estimate is unbiased for every true distribution: ``E[f_hat] = f``. An oracle whose
    #: estimator is biased by design (Apple's CMS with its fixed hash family: the bias depends on
    #: which items collide) states ``False`` and implements ``expected_estimate(f)``, its exact
    #: mean. The kit then tests the simulated mean against that mean instead of the truth (and
    #: the output table's moments against both declared moments), and a row's ``theory`` adds the
    #: squared bias to the variance. Never derived: an oracle states it.
    unbiased: bool = True
    #: ``output_table()`` gives the exact output law at this instance's ``d`` (for the audits).
    output_table: bool = False
    #: ``output_rows(reports)`` maps reports to rows of ``output_table()``.
    output_rows: bool = False
    #: ``support_matrix(reports)`` gives the per-user ``(n_users, d)`` boolean support.
    support_matrix: bool = False
    #: Users per chunk on the per-user path (``None``: the engine's default chunk).
    chunk_users: int | None = None
    #: ``support_counts`` and ``sample_support_counts`` return real-valued per-item sums of the
    #: reports, not counts (SHE adds up Laplace-noised one-hot vectors): the harness checks them as
    #: finite floats, and the estimate is not a pure protocol's (its ``p_star``/``q_star`` are None).
    real_valued_counts: bool = False
    #: ``report_log_likelihood(reports)`` gives the density of continuous reports under every item:
    #: the empirical audit attacks them with likelihood-ratio events instead of support sets.
    report_density: bool = False
    #: The output table's worst likelihood ratio equals ``e^eps``. Off for an oracle whose reports,
    #: as the table describes them, spend less than the budget it declares (THE reads only the
    #: support sets of eps-LDP reports): the kit then checks the bound without asking that it be
    #: attained.
    attains_epsilon: bool = True
    #: The oracle assumed when a bare estimate vector is post-processed without naming one
    #: (``ldpbench.postprocess``); exactly one installed oracle should claim it.
    default: bool = False


@dataclass(frozen=True)
class PostProcessorTags:
    """What a :class:`~ldpbench.types.PostProcessor` needs and how it acts."""

    #: ``"estimate"``: ``apply`` changes the vector; ``"queries"``: ``answer`` transforms query
    #: answers at query time (Post-Pos).
    acts_on: Literal["estimate", "queries"] = "estimate"
    #: Needs the report histogram and channel of a finite-output oracle (EM and its variants):
    #: a spec pairing it with an oracle whose tags lack ``finite_output`` is refused at validation.
    requires_channel: bool = False
    #: Needs a likelihood of what the oracle aggregated (IBU): the report histogram and channel
    #: of a finite-output oracle, or support counts the oracle declares ``bernoulli_support``. A
    #: spec pairing it with an oracle that declares neither is refused at validation.
    requires_likelihood: bool = False
    #: Needs a randomized-response channel (``ChannelTags.randomized_response``: GRR) and one
    #: budget for all users (the closed-form MLE of ``mle-rr``); a spec pairing it with another
    #: oracle, or with personalized budgets, is refused at validation.
    requires_randomized_response: bool = False
    #: Needs a pure protocol's ``p_star``/``q_star`` on the estimate (MLE-Apx): a spec pairing it
    #: with an oracle whose tags declare ``real_valued_counts`` (SHE) is refused at validation.
    requires_pure: bool = False
    #: Needs each report's support (``Estimate.report_supports``, an ``(N, d)`` boolean matrix):
    #: a defense that inspects individual reports (Cao et al.'s fake-user detection,
    #: docs/poisoning.md). The engine keeps them only on the per-user path and only for an oracle
    #: with ``support_matrix``: a spec pairing it with another oracle, or with ``simulation:
    #: aggregate``, is refused at validation.
    requires_reports: bool = False
    #: Mines itemsets of the reports' supports (Cao et al.'s detection): needs reports that support
    #: several items each; a spec pairing it with an oracle whose every report supports exactly
    #: one item (``p* + (d - 1) q* = 1``: GRR and its kin) is refused at validation.
    requires_itemset_reports: bool = False
    #: The pipeline a spec gets when it lists none; exactly one installed post-processor should claim it.
    default: bool = False
    #: The results it takes (``ldpbench.types.domain.RESULTS``): a spec putting it after a
    #: mechanism whose result is another kind is refused at validation. The identity (``base``)
    #: takes every kind; a step that changes a frequency vector takes only ``frequencies``.
    results: tuple[str, ...] = (FREQUENCIES,)


@dataclass(frozen=True)
class MetricTags:
    """What a :class:`~ldpbench.types.Metric` declares beyond scoring."""

    #: In the metrics a spec gets when it lists none.
    default: bool = False
    #: The results it scores (``ldpbench.types.domain.RESULTS``): a frequency vector
    #: (:class:`~ldpbench.types.Estimate`) or identified items
    #: (:class:`~ldpbench.types.IdentifiedItems`). A spec pairing it with a mechanism whose result
    #: is another kind is refused at validation, naming the nearest metric that scores it.
    results: tuple[str, ...] = (FREQUENCIES,)
    #: The expected score of a frequency estimate depends only on each item's estimate's own law
    #: (a sum over the items of a function of one item: MSE, L1), not on their joint law. An
    #: oracle's aggregate path with exact marginals (``OracleTags.exact_marginals``) then gives the
    #: score's expectation exactly, and such rows carry no "approximate" note.
    marginal_expectation: bool = False
    #: It scores a poisoned cell against the attack's targets (``truth.poisoning``,
    #: docs/poisoning.md): a spec listing it without ``attacks`` is refused at validation.
    poisoning: bool = False


@dataclass(frozen=True)
class ProtocolTags:
    """What a :class:`~ldpbench.types.Protocol` returns and what it needs of the population."""

    #: The kind of each output (``ldpbench.types.domain.RESULTS``): ``frequencies`` (Blender) or
    #: ``identified-items`` (a heavy-hitter protocol).
    result: str = FREQUENCIES
    #: The protocol lists every item of the domain (a frequency oracle over ``[d]`` does): a spec
    #: running it on a dataset whose domain is not enumerable (64-bit strings) is refused at
    #: validation. A prefix-extending method lists only candidates, and states ``False``.
    enumerates_domain: bool = True
    #: The record shapes it accepts (``ldpbench.types.domain.RECORDS``).
    records: tuple[str, ...] = ("item",)
    #: An exact aggregate path exists (``simulation: aggregate``); without it only
    #: ``simulation: per-user`` runs it.
    aggregate: bool = True
    #: What each output's estimate offers the post-processors (``None``: not declared, not checked;
    #: ``False``: a spec following the protocol with a step that needs it is refused by
    #: ``validate`` at the step's line, docs/multidimensional.md): a report histogram with its
    #: channel (EM-family steps, ``requires_channel``) ...
    output_channel: bool | None = None
    #: ... that channel being randomized response (``requires_randomized_response``, ``mle-rr``) ...
    output_randomized_response: bool | None = None
    #: ... any likelihood of the aggregate: a channel, or Bernoulli support counts with the
    #: protocol's ``p*``, ``q*`` (``requires_likelihood``, ``ibu``).
    output_likelihood: bool | None = None


@dataclass(frozen=True)
class ExecutorTags:
    """When an :class:`~ldpbench.types.Executor` is chosen without being named."""

    #: ``"serial"``: the default for ``--workers 1``; ``"parallel"``: the default otherwise;
    #: ``None``: used only when named.
    default_for: Literal["serial", "parallel"] | None = None
    #: True: the runner hands this executor bundles of cells that share a metric stream
    #: (:class:`~ldpbench.engine.cell.CellBundle`, run with ``run_bundle``, whose result is a list
    #: of row lists, one per cell) instead of single cells, so that one worker draws a repeat's
    #: random queries once. For executors that spread tasks over processes; a ``TaskLost`` of a
    #: bundle is rerun cell by cell.
    bundles: bool = False


@dataclass(frozen=True)
class ChannelTags:
    """Structure of a :class:`~ldpbench.types.Channel` that consumers may exploit."""

    #: ``(p, q)`` when the channel is square and ``P(y | x) = q + (p - q) [x = y]`` (GRR, or the
    #: identity for epsilon = inf): EM then runs in closed form per item. ``None`` otherwise.
    randomized_response: tuple[float, float] | None = None


__all__ = ["ChannelTags", "ExecutorTags", "MetricTags", "OracleTags", "PostProcessorTags", "ProtocolTags"]


@dataclass(frozen=True)
class AttackTags:
    """What an :class:`~ldpbench.types.Attack` is defined for."""

    #: The oracles (by registered name) whose report encoding the attack crafts; a spec pairing it
    #: with any other mechanism is refused at validation, naming these.
    oracles: tuple[str, ...] = ()
    #: The protocols (by registered name) whose rounds the attack crafts reports for
    #: (:meth:`~ldpbench.types.Attack.craft_hashed`, called by the protocol in every round).
    protocols: tuple[str, ...] = ()
