"""Simulate one oracle on a population of users: the per-user path or the aggregate path.

- ``per-user``: users are perturbed chunk by chunk (:func:`user_chunks`) so memory stays bounded
  for any ``n``; the aggregator sums support counts (or report histograms) over chunks.
- ``aggregate``: the oracle draws the aggregate directly from its exact distribution, O(d).

Both return the oracle's unbiased :class:`~ldpbench.types.Estimate`; for finite-output oracles
the estimate also carries the report histogram and the channel (what EM needs), and it carries the
oracle's ``bernoulli_support`` tag (what IBU needs to use the support counts' likelihood).

Which methods are called is read from the oracle's declared :meth:`~ldpbench.types.Oracle.tags`
only. This is the one simulation path: the engine, personalized budgets and the conformance kit
all go through :func:`simulate`, so an oracle the kit accepts runs in a benchmark.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from ldpbench.boundary.values import PluginOutputError, checked_counts, checked_estimate, checked_sums, readonly
from ldpbench.errors import LdpbenchError
from ldpbench.types import Estimate, Oracle, OracleTags

SIMULATIONS = ("aggregate", "per-user")

#: Users per chunk on the per-user path. Fixed (never derived from the machine) so that the random
#: stream, and hence every number, is the same everywhere. Oracles whose reports are O(d) per user
#: ask for smaller chunks with the ``chunk_users`` tag.
DEFAULT_CHUNK_USERS = 1 << 20


def user_chunks(counts: np.ndarray, chunk: int) -> Iterator[np.ndarray]:
    """The users' items, ``chunk`` users at a time, without materializing all ``n`` of them.

    Users are taken in item order; the order is irrelevant because every user is perturbed
    independently.
    """
    counts = np.asarray(counts, dtype=np.int64)
    ends = np.cumsum(counts)
    n = int(ends[-1]) if ends.size else 0
    for start in range(0, n, chunk):
        stop = min(start + chunk, n)
        positions = np.arange(start, stop, dtype=np.int64)
        yield np.searchsorted(ends, positions, side="right")


class MissingCapability(LdpbenchError):
    """An oracle was asked for a simulation path its tags say it does not have.

    The spec validator refuses such specs first (``ldpbench.spec.capabilities``); this is the
    engine's own guard for direct callers.
    """


def aggregate_draw(
    oracle: Oracle, counts: np.ndarray, rng: np.random.Generator, tags: OracleTags | None = None
) -> tuple[np.ndarray | None, np.ndarray]:
    """``(report histogram or None, support counts)`` drawn by the aggregate path the oracle's
    tags declare: the report histogram when ``aggregate_histogram``, else the support counts.

    :raises MissingCapability: the oracle declares no aggregate path.
    """
    tags = tags or oracle.tags()
    if not tags.aggregate:
        raise MissingCapability(
            f"oracle '{oracle.name}' has no aggregate path (it implements neither "
            f"sample_support_counts nor a report-histogram sampler): use simulation: per-user"
        )
    who = f"oracle '{oracle.name}'"
    if tags.aggregate_histogram:
        hist = readonly(
            checked_counts(
                who, "a report histogram", oracle.sample_report_histogram(counts, rng), oracle.channel().n_reports
            )
        )
        return hist, checked_counts(who, "support counts", oracle.support_counts_from_histogram(hist), oracle.d)
    return None, _checked_support(oracle, tags, oracle.sample_support_counts(counts, rng))


def _checked_support(oracle: Oracle, tags: OracleTags, support: object) -> np.ndarray:
    """Support counts as int64 counts, or as finite float sums when the tags declare
    ``real_valued_counts`` (SHE's summed Laplace reports)."""
    who = f"oracle '{oracle.name}'"
    if tags.real_valued_counts:
        return checked_sums(who, "support sums", support, oracle.d)
    return checked_counts(who, "support counts", support, oracle.d)


def per_user_draw(
    oracle: Oracle,
    counts: np.ndarray,
    rng: np.random.Generator,
    chunk: int,
    tags: OracleTags | None = None,
    supports: list[np.ndarray] | None = None,
) -> tuple[np.ndarray | None, np.ndarray]:
    """``(report histogram or None, support counts)`` of users perturbed ``chunk`` at a time; the
    histogram is summed over chunks for finite-output oracles, else the support counts. With a
    list ``supports``, each chunk's ``oracle.support_matrix(reports)`` is appended to it."""
    tags = tags or oracle.tags()
    who = f"oracle '{oracle.name}'"
    what = "a report histogram" if tags.finite_output else "support counts"
    width = oracle.channel().n_reports if tags.finite_output else oracle.d
    acc = None
    for values in user_chunks(counts, chunk):
        reports = oracle.perturb(readonly(values), rng)  # a plugin sorting its input in place fails loudly
        if supports is not None:
            supports.append(_checked_support_matrix(oracle, reports, values.size))
        if tags.finite_output:
            part = checked_counts(who, what, oracle.report_histogram(reports), width)
        else:  # checked before any cast: a NaN must not become a count
            part = _checked_support(oracle, tags, oracle.support_counts(reports))
        acc = part.copy() if acc is None else acc + part
    if acc is None:
        raise ValueError("cannot simulate an oracle on zero users")
    if tags.finite_output:
        hist = readonly(acc)
        return hist, checked_counts(who, "support counts", oracle.support_counts_from_histogram(hist), oracle.d)
    return None, acc


def _checked_support_matrix(oracle: Oracle, reports: Any, n_users: int) -> np.ndarray:
    """``oracle.support_matrix(reports)`` as an ``(n_users, d)`` bool array, or a PluginOutputError."""
    return _checked_matrix(oracle, oracle.support_matrix(reports), n_users)


def _checked_matrix(oracle: Oracle, matrix: Any, n_users: int) -> np.ndarray:
    """A support matrix the oracle returned, as an ``(n_users, d)`` bool array, or a PluginOutputError."""
    matrix = np.asarray(matrix)
    if matrix.shape != (n_users, oracle.d):
        raise PluginOutputError(
            f"oracle '{oracle.name}' returned a support matrix of shape {matrix.shape}, expected ({n_users}, {oracle.d})"
        )
    return matrix.astype(bool, copy=False)


def report_order(rng: np.random.Generator, n_reports: int) -> np.ndarray:
    """The order in which kept reports are shown to a defense: one permutation of all ``n + m``
    reports (genuine first, fake last, before it), the only draw from ``rng``. The engine draws it
    again from a generator of the same identity for the metrics' labels
    (:func:`ldpbench.engine.poisoning.fake_report_labels`)."""
    return rng.permutation(n_reports)


def _with_fake_reports(
    oracle: Oracle, tags: OracleTags, hist: np.ndarray | None, support: np.ndarray, reports: Any
) -> tuple[np.ndarray | None, np.ndarray]:
    """The genuine aggregate plus the fake reports', through the oracle's own aggregator (the same
    calls :func:`per_user_draw` makes for a chunk of genuine reports)."""
    who = f"oracle '{oracle.name}' (fake reports)"
    if tags.finite_output and hist is not None:
        width = oracle.channel().n_reports
        total = readonly(hist + checked_counts(who, "a report histogram", oracle.report_histogram(reports), width))
        return total, checked_counts(who, "support counts", oracle.support_counts_from_histogram(total), oracle.d)
    return None, support + _checked_support(oracle, tags, oracle.support_counts(reports))


#: What identifies the note of :func:`marginal_aggregate_note` among an estimate's warnings (the
#: oracle's name in it becomes its label once the engine names the mechanism).
MARGINAL_CLAIM = "draws each support count from its exact law but not their joint law (exact_marginals)"


def marginal_aggregate_note(name: str) -> str:
    """The warning of an aggregate path whose counts have their exact laws but not their joint law.

    Rows whose metric's expectation depends on those laws alone, with no post-processing, drop it
    (:func:`ldpbench.engine.cell.notes_for`)."""
    return (
        f"oracle '{name}': aggregate simulation {MARGINAL_CLAIM}: per-item means and variances are "
        f"exact, scores that depend on the joint law (post-processed or ranked estimates) approximate "
        f"the per-user path"
    )


def approximate_aggregate_note(name: str) -> str:
    """The warning an estimate of an oracle whose aggregate path is not exact carries."""
    return (
        f"oracle '{name}': aggregate simulation approximates the per-user law (exact_aggregate is "
        f"False; see the oracle's documentation, or use simulation: per-user)"
    )


def simulate(
    oracle: Oracle,
    counts: np.ndarray,
    rng: np.random.Generator,
    simulation: str = "aggregate",
    *,
    chunk_users: int | None = None,
    fake_reports: Any = None,
    fake_users: int = 0,
    fake_chunks: Iterable[Any] = (),
    keep_reports: np.random.Generator | None = None,
) -> Estimate:
    """The oracle's estimate for users holding the items given by ``counts``.

    :param simulation: ``aggregate`` (the oracle's shortcut: needs the ``aggregate`` tag) or
        ``per-user`` (:meth:`~ldpbench.types.Oracle.perturb` chunk by chunk).
    :param chunk_users: users per chunk on the per-user path; default: the oracle's
        ``chunk_users`` tag, else :data:`DEFAULT_CHUNK_USERS`. (The kit uses small chunks to
        exercise the summation over chunks.)
    :param fake_reports: the reports of ``fake_users`` fake users crafted by an attack
        (docs/poisoning.md), in the oracle's report encoding: aggregated exactly as a chunk of
        genuine reports (:meth:`~ldpbench.types.Oracle.report_histogram` added to the genuine
        histogram for a finite-output oracle, else :meth:`~ldpbench.types.Oracle.support_counts`
        added to the genuine support counts), and the estimate is over ``n + fake_users`` reports.
        With none (the default) nothing differs from an unattacked run: the genuine users' draws
        come first, from the same stream.
    :param fake_chunks: the fake users' reports as consecutive chunks (together ``fake_users``
        reports), each aggregated as ``fake_reports`` is, one at a time: what the engine passes, so
        that memory stays bounded for any ``m`` as on the per-user path.
    :param keep_reports: per-user path only: keep every report's support
        (``Estimate.report_supports``, for a defense that declares ``requires_reports``), the
        genuine and the fake ones shuffled together by :func:`report_order` drawn from this
        generator (its own stream: the estimate is the same as without it).
    :raises MissingCapability: aggregate simulation of an oracle without an aggregate path.
    """
    counts = readonly(np.asarray(counts, dtype=np.int64))  # the oracle must not write into the truth
    n = int(counts.sum())
    if n <= 0:
        raise ValueError("cannot simulate an oracle on zero users")
    tags = oracle.tags()
    kept: list[np.ndarray] | None = None
    if simulation == "aggregate":
        hist, support = aggregate_draw(oracle, counts, rng, tags)
    elif simulation == "per-user":
        chunk = int(chunk_users or tags.chunk_users or DEFAULT_CHUNK_USERS)
        kept = [] if keep_reports is not None else None
        hist, support = per_user_draw(oracle, counts, rng, chunk, tags, kept)
    else:
        raise ValueError(f"unknown simulation {simulation!r}; expected one of {SIMULATIONS}")
    if keep_reports is not None and simulation != "per-user":
        raise ValueError("only the per-user path can keep the reports")
    if fake_users:
        fake_kept: list[np.ndarray] = []
        for chunk in [fake_reports] if fake_reports is not None else fake_chunks:
            hist, support = _with_fake_reports(oracle, tags, hist, support, chunk)
            if kept is not None:
                part = np.asarray(oracle.support_matrix(chunk))
                if part.ndim != 2 or part.shape[1] != oracle.d:  # rows: checked for all chunks below
                    raise PluginOutputError(
                        f"oracle '{oracle.name}' returned a support matrix of shape {part.shape}, expected (m, {oracle.d})"
                    )
                fake_kept.append(part)
        if kept is not None:  # one check of the fake reports' supports, whatever the chunking
            matrix = np.concatenate(fake_kept, axis=0) if fake_kept else np.zeros((0, oracle.d), dtype=bool)
            kept.append(_checked_matrix(oracle, matrix, int(fake_users)))
        n += int(fake_users)
    est = checked_estimate(f"oracle '{oracle.name}'", oracle.estimate(readonly(support), n), oracle.d)
    if keep_reports is not None:
        matrix = np.concatenate(kept, axis=0)
        est = est.replace(report_supports=readonly(matrix[report_order(keep_reports, matrix.shape[0])]))
    if simulation == "aggregate" and not tags.exact_aggregate:
        # Not silent: the rows' notes say the numbers come from an approximation of the oracle,
        # and of which claim (docs/plugins/reference.md, OracleTags).
        note = marginal_aggregate_note if tags.exact_marginals else approximate_aggregate_note
        est = est.with_warning(note(oracle.name))
    # What the oracle declares about its aggregate rides along for likelihood-based steps (EM, IBU).
    if hist is not None:  # one copy, not two: a per-user run of a multidimensional protocol makes many
        return est.replace(bernoulli_support=tags.bernoulli_support, report_histogram=hist, channel=oracle.channel())
    return est.replace(bernoulli_support=tags.bernoulli_support)
