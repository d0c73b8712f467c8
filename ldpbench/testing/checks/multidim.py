"""The protocol checks for multidimensional protocols (``ProtocolTags.records == ("tuple",)``:
users hold one item per attribute; docs/multidimensional.md). They run with the protocol kind's
checks (:mod:`ldpbench.testing.checks.protocol` lists them) and apply to tuple protocols only.

What a multidimensional protocol declares, besides ``run`` (one ``frequencies`` estimate per
attribute, labelled by the attribute's name):

- ``record_accounting(epsilon, sizes)``: ``{"per_attribute": [...], "any_records": e_any,
  "one_attribute": e_one}``: the budget each attribute's report is randomized at, and the bound
  the whole report meets over any two records and over records that differ in one attribute;
- ``report_table(sizes, epsilon)``: the exact law ``P[x, y]`` of a user's whole report over
  every record ``x`` of ``[d_1] x ... x [d_a]`` (row-major) and every whole report ``y``;
- optionally ``perturb_records(rows, sizes, epsilon, rng)``: whole reports, as an ``(n,)`` vector
  of ``report_table`` columns, or in the protocol's own encoding with ``report_columns(reports,
  sizes, epsilon)`` mapping them to columns.

The checks: the accounting is consistent (every attribute's budget positive, ``max(per_attribute)
<= any_records <= sum(per_attribute)`` — between sampling one attribute and composing all — and
``privacy_accounting`` declares a group within the budget); every attribute's estimate is unbiased
on each simulation path the protocol has (a Z-test per item against the sample's own variance);
the whole-record audit: ``report_table``'s exact epsilon over any two records at most
``any_records``, over one-attribute neighbours at most ``one_attribute``, and the reports the code
draws follow the table (Pearson chi-square).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ldpbench.audit.records import attribute_log_ratio, max_log_ratio  # the CLI audit's, re-exported
from ldpbench.testing.checks.machinery import CheckSkipped, Subject, _rng
from ldpbench.types import Population, Protocol
from ldpbench.types.attributes import Attributes, tuple_population


def is_multidimensional(protocol: Protocol) -> bool:
    """Whether the protocol takes tuple records only (the checks of this module concern it)."""
    return tuple(protocol.tags().records) == ("tuple",)


def _build(subject: Subject) -> Protocol:
    protocol = subject.build()
    assert isinstance(protocol, Protocol), f"{subject.label}: building it gave {type(protocol).__name__}"
    if not is_multidimensional(protocol):
        raise CheckSkipped("the checks concern multidimensional protocols (records: tuple)")
    return protocol


def small_population(sizes: Sequence[int], n: int, rng: np.random.Generator) -> Population:
    """``n`` users over ``sizes``: skewed, dependent attributes (each a shifted copy of a shared
    skewed draw plus noise), so that a mix-up of attributes or items biases an estimate."""
    base = rng.choice(max(sizes), size=n, p=_skewed(max(sizes)))
    cols = [(base + rng.integers(0, 2, size=n) * (j + 1)) % d for j, d in enumerate(sizes)]
    names = tuple(f"a{j}" for j in range(len(sizes)))
    return tuple_population(Attributes(names, tuple(sizes), np.stack(cols, axis=1)), name="kit-tuples")


def _skewed(d: int) -> np.ndarray:
    w = 0.6 ** np.arange(d)
    return w / w.sum()


def check_protocol_multidim_accounting(subject: Subject, cfg: Any) -> None:
    """``record_accounting`` declares, per audited shape, one positive budget per attribute and
    ``max(per_attribute) <= any_records <= sum(per_attribute)``; ``privacy_accounting`` declares a
    group within ``epsilon``."""
    protocol = _build(subject)
    groups = protocol.privacy_accounting(cfg.epsilon)
    assert groups, f"{subject.label}: privacy_accounting declared no group"
    assert all(float(g["epsilon"]) <= cfg.epsilon * (1 + 1e-12) for g in groups), (
        f"{subject.label}: a group declares more than epsilon = {cfg.epsilon}: {groups}"
    )
    for sizes in cfg.multidim_audit_sizes:
        acc = protocol.record_accounting(cfg.multidim_epsilon, tuple(sizes))
        assert acc is not None, (
            f"{subject.label}: a multidimensional protocol declares record_accounting(epsilon, sizes): the budget "
            "of each attribute's report and the bounds over any two records and over one attribute"
        )
        per = [float(e) for e in acc["per_attribute"]]
        assert len(per) == len(sizes) and all(e > 0 for e in per), (
            f"{subject.label}: per_attribute must give one positive budget per attribute, got {per} for {sizes}"
        )
        e_any = float(acc["any_records"])
        assert max(per) * (1 - 1e-9) <= e_any <= sum(per) * (1 + 1e-9), (
            f"{subject.label}: any_records = {e_any:g} is not between max(per_attribute) = {max(per):g} and "
            f"their sum {sum(per):g} ({sizes})"
        )
        assert float(acc["one_attribute"]) <= e_any * (1 + 1e-9), (
            f"{subject.label}: one_attribute exceeds any_records ({sizes})"
        )


def _paths(protocol: Protocol) -> tuple[str, ...]:
    return ("aggregate", "per-user") if protocol.tags().aggregate else ("per-user",)


def check_protocol_multidim_unbiased(subject: Subject, cfg: Any) -> None:
    """On a small population of dependent attributes, every attribute's estimate, on every
    simulation path the protocol has, is one ``frequencies`` vector over ``[d_j]`` labelled by the
    attribute, unbiased: each item's mean over ``multidim_repeats`` runs within
    ``multidim_z`` standard errors (the sample's own) of the attribute's true frequency (outputs
    ``name``, or ``name:round-t`` of a longitudinal solution)."""
    protocol = _build(subject)
    sizes = tuple(cfg.multidim_sizes)
    pop = small_population(sizes, cfg.multidim_n, _rng(cfg, "multidim-population"))
    attrs = pop.attributes
    for path in _paths(protocol):
        rng = _rng(cfg, "multidim-unbiased", path)
        runs = [protocol.run(pop, cfg.multidim_epsilon, rng, simulation=path) for _ in range(cfg.multidim_repeats)]
        for j, name in enumerate(attrs.names):
            # ``name``, or ``name:round-t`` per round (a longitudinal solution; every round holds
            # the same users here, a tuple population without rounds being one round)
            labels = [k for k in runs[0] if k == name or k.startswith(f"{name}:round-")]
            assert labels, f"{subject.label}: no output labelled {name!r} ({path}): {sorted(runs[0])}"
            f = attrs.marginal_counts(j) / attrs.n
            for label in labels:
                est = np.stack([np.asarray(r[label].frequencies, dtype=float) for r in runs])
                assert est.shape[1] == sizes[j], (
                    f"{subject.label}: {label}'s estimate has {est.shape[1]} items, not {sizes[j]}"
                )
                se = est.std(axis=0, ddof=1) / math.sqrt(cfg.multidim_repeats)
                z = np.abs(est.mean(axis=0) - f) / np.maximum(se, 1e-12)
                assert np.all(z <= cfg.multidim_z), (
                    f"{subject.label}: attribute {label} ({path}) biased: means {np.round(est.mean(axis=0), 4)} "
                    f"against {np.round(f, 4)} (z up to {z.max():.1f} > {cfg.multidim_z})"
                )


def check_protocol_multidim_whole_report(subject: Subject, cfg: Any) -> None:
    """The whole-record audit: ``report_table`` is a law per record, its exact epsilon over any two
    records at most ``any_records`` and over one-attribute neighbours at most ``one_attribute``
    (``record_accounting``), and ``perturb_records`` (when declared) draws reports that follow
    it (a chi-square test per audited record, family-wise level ``multidim_alpha``)."""
    protocol = _build(subject)
    from scipy.special import chdtrc  # Pearson's statistic's tail (scipy.stats costs seconds to import)

    eps = cfg.multidim_epsilon
    for sizes in map(tuple, cfg.multidim_audit_sizes):
        table, acc = protocol.report_table(sizes, eps), protocol.record_accounting(eps, sizes)
        assert table is not None and acc is not None, (
            f"{subject.label}: a multidimensional protocol declares report_table(sizes, epsilon), the exact law "
            "of a user's whole report, and record_accounting: the whole-record audit needs both"
        )
        P = np.asarray(table, dtype=float)
        assert P.shape[0] == math.prod(sizes), f"{subject.label}: report_table has {P.shape[0]} rows for {sizes}"
        assert np.all(P >= 0) and np.allclose(P.sum(axis=1), 1.0), f"{subject.label}: a row of report_table is no law"
        found_any, found_one = max_log_ratio(P), attribute_log_ratio(P, sizes)
        assert found_any <= float(acc["any_records"]) * (1 + 1e-9) + 1e-12, (
            f"{subject.label}: any two records {sizes}: exact epsilon {found_any:.4f} > declared {acc['any_records']:.4f}"
        )
        assert found_one <= float(acc["one_attribute"]) * (1 + 1e-9) + 1e-12, (
            f"{subject.label}: one attribute {sizes}: exact epsilon {found_one:.4f} > declared {acc['one_attribute']:.4f}"
        )
        records = list(itertools.product(*(range(d) for d in sizes)))
        picks = [0, len(records) - 1]
        for r in picks:
            rows = np.tile(np.asarray(records[r], dtype=np.int64), (cfg.multidim_trials, 1))
            drawn = protocol.perturb_records(rows, sizes, eps, _rng(cfg, "multidim-draw", sizes, r))
            if drawn is None:  # not declared: the table alone is audited
                break
            reports = np.asarray(drawn)
            if reports.ndim == 2:
                columns = protocol.report_columns(reports, sizes, eps)
                assert columns is not None, (
                    f"{subject.label}: perturb_records returned one column per attribute: declare "
                    "report_columns(reports, sizes, epsilon), the report_table column of each report"
                )
                reports = np.asarray(columns)
            index = reports.astype(np.int64)
            observed = np.bincount(index, minlength=P.shape[1])
            assert observed.size == P.shape[1], f"{subject.label}: perturb_records drew a report outside the table"
            expected = cfg.multidim_trials * P[r]
            used = expected > 0
            assert observed[~used].sum() == 0, f"{subject.label}: perturb_records drew a report the table gives 0"
            stat = float(np.sum((observed[used] - expected[used]) ** 2 / expected[used]))
            p = float(chdtrc(max(int(used.sum()) - 1, 1), stat))
            level = cfg.multidim_alpha / (2 * len(cfg.multidim_audit_sizes))
            assert p > level, (
                f"{subject.label}: perturb_records of {records[r]} does not follow report_table (p = {p:.2g})"
            )


#: The multidimensional checks, in the order they run (appended to the protocol kind's).
CHECKS = (check_protocol_multidim_accounting, check_protocol_multidim_unbiased, check_protocol_multidim_whole_report)
