"""Do the messages ``perturb`` produces follow the declared output table?

The exact audit (:mod:`.exact`) proves epsilon-LDP of ``Oracle.output_table()``; that proves
nothing about the oracle unless what a client sends has that law. This module draws reports at
every point the exact audit enumerated (domain size, budget, parameter setting), encodes them as
the client would send them (``Oracle.encode_reports``), and tests two things:

1. **The rows.** For each item ``v``, the table rows of ``m`` reports (``Oracle.output_rows``)
   against ``P(. | v)``: Pearson's chi-square test (:func:`chi_square_test`) with the outputs
   whose expected count is below :data:`MIN_EXPECTED` pooled into one cell, and an output of
   probability 0 that occurs failing at once.
2. **Nothing beyond the row.** Several messages may stand for one row (OLH's seeds, a merged table)
   but then which of them is sent must not depend on the item: for each row, a chi-square test of homogeneity
   of the message counts across items (messages seen fewer than :data:`MIN_EXPECTED` x 2 times pooled
   per row). Item order, an extra field, a dtype that depends on the item all show here. A message
   that :meth:`output_rows` maps to two rows fails at once (the row is not a function of what is sent).

**Level and power.** All tests of one audit share ``alpha`` (Bonferroni: each runs at
``alpha / tests``). The number of draws per item is chosen per table (:func:`draws_for_power`): any
law at total-variation distance ``delta`` from ``P(. | v)`` has chi-square divergence at least
``4 delta^2`` from it (Cauchy-Schwarz), so the chi-square statistic's noncentrality is at least
``4 m delta^2``; ``m`` is the smallest number of draws (at most :data:`MAX_DRAWS`) giving power
:data:`POWER` at ``delta =`` :data:`DELTA` on the table's degrees of freedom. A deviation confined to
the pooled rare outputs is seen only through the pooled cell. ``tests/statistical/test_law_power.py``
measures the false-alarm rate and this power by simulation.

**Confirmed on fresh draws.** A point whose tests reject is drawn again, independently, and is a
finding only if the second sample rejects too (a structural finding, a message in two rows or an
output of probability 0, needs no second look). A correct oracle is then called leaky with
probability at most ``sum over points of (its tests x level)^2`` -- far below ``alpha`` -- instead
of ``alpha`` itself, which had the built-in SS fail one audit in about two hundred seeds (its
default seed among them, X^2 = 109 on 55 dof, p = 2e-5). Each sample is sized for power
``sqrt(POWER)``, so a deviation of ``DELTA`` still fails both with probability at least
:data:`POWER`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ldpbench.types import Oracle
from ldpbench.types.reports import as_message_matrix, common_width, message_ids

#: Outputs expected fewer times than this are pooled into one cell of the chi-square test.
MIN_EXPECTED = 5.0
#: The deviation (total variation from the declared ``P(. | v)``) the draws are sized to catch ...
DELTA = 0.05
#: ... with this probability, at every (point, item) of the audit.
POWER = 0.9
#: Draws per item and point are at least this (small tables) and at most :data:`MAX_DRAWS`.
MIN_DRAWS = 2_000
MAX_DRAWS = 50_000


def chi_square_test(
    counts: np.ndarray, probs: np.ndarray, *, min_expected: float = MIN_EXPECTED
) -> tuple[float, int, float]:
    """``(X^2, degrees of freedom, p-value)`` of observed ``counts`` against the law ``probs``:
    Pearson's statistic, whose null mean is exactly the degrees of freedom even with sparse cells
    (the G statistic's is not: at 6,561 cells expected 7.6 times each it averages 6,723, and a G-test
    at level 1% fired 26% of the time under the null).

    Cells expected fewer than ``min_expected`` times are pooled into one (merged with the smallest
    other cell while it is still too small); an observation in a cell of probability 0 gives
    ``(inf, 0, 0.0)``: that output is impossible under the declared law.
    """
    from scipy.stats import chi2

    counts = np.asarray(counts, dtype=float)
    probs = np.asarray(probs, dtype=float)
    n = counts.sum()
    if n == 0:
        return 0.0, 0, 1.0
    if np.any(counts[probs <= 0] > 0):
        return math.inf, 0, 0.0
    live = probs > 0
    counts, probs = counts[live], probs[live] / probs[live].sum()
    expected = n * probs
    small = expected < min_expected
    obs = list(counts[~small])
    exp = list(expected[~small])
    if small.any():
        pooled_obs, pooled_exp = float(counts[small].sum()), float(expected[small].sum())
        if pooled_exp < min_expected and exp:
            k = int(np.argmin(exp))
            pooled_obs, pooled_exp = pooled_obs + obs.pop(k), pooled_exp + exp.pop(k)
        obs.append(pooled_obs)
        exp.append(pooled_exp)
    o, e = np.array(obs), np.array(exp)
    dof = o.size - 1
    if dof < 1:
        return 0.0, 0, 1.0
    x2 = float(np.sum((o - e) ** 2 / e))
    return x2, dof, float(chi2.sf(x2, dof))


def draws_for_power(dof: int, level: float, *, delta: float = DELTA, power: float = POWER) -> int:
    """The fewest draws (in [:data:`MIN_DRAWS`, :data:`MAX_DRAWS`]) whose chi-square test at ``level`` on
    ``dof`` degrees of freedom has ``power`` against noncentrality ``4 m delta^2`` (module docstring)."""
    from scipy.stats import chi2, ncx2

    dof = max(1, int(dof))
    critical = float(chi2.isf(level, dof))

    def reaches(m: int) -> bool:
        return float(ncx2.sf(critical, dof, 4.0 * m * delta**2)) >= power

    if reaches(MIN_DRAWS):
        return MIN_DRAWS
    if not reaches(MAX_DRAWS):
        return MAX_DRAWS
    lo, hi = MIN_DRAWS, MAX_DRAWS
    while hi - lo > 50:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if reaches(mid) else (mid, hi)
    return hi


def homogeneity_test(rows: np.ndarray, messages: np.ndarray, items: np.ndarray) -> tuple[float, int, float]:
    """``(X^2, dof, p-value)``: within each table row, is the choice among its messages independent of
    the item? One Pearson test of independence per row, summed. Per row, only items that produced the row
    at least ``2 x MIN_EXPECTED`` times enter, and messages seen fewer times than that are pooled."""
    from scipy.stats import chi2

    floor = 2 * MIN_EXPECTED
    rows, messages, items = (np.asarray(a, dtype=np.int64) for a in (rows, messages, items))
    n_items = int(items.max()) + 1 if items.size else 0
    # Items that produced the row often enough.
    _, row_id = np.unique(rows, return_inverse=True)
    row_id = row_id.reshape(-1)
    per_row_item = np.bincount(row_id * n_items + items, minlength=(row_id.max() + 1) * n_items if rows.size else 0)
    keep = per_row_item[row_id * n_items + items] >= floor
    row_id, messages, items = row_id[keep], messages[keep], items[keep]
    if row_id.size == 0:
        return 0.0, 0, 1.0
    # Messages seen often enough keep their identity; the others of a row become one "rare" message.
    _, msg_id = np.unique(messages, return_inverse=True)
    msg_id = msg_id.reshape(-1)
    seen = np.bincount(msg_id)
    bucket_key = np.where(seen[msg_id] >= floor, msg_id, -1 - row_id)
    _, bucket = np.unique(bucket_key, return_inverse=True)
    bucket = bucket.reshape(-1)
    n_buckets = int(bucket.max()) + 1
    bucket_row = np.zeros(n_buckets, dtype=np.int64)
    bucket_row[bucket] = row_id
    cell = np.bincount(bucket * n_items + items, minlength=n_buckets * n_items).reshape(n_buckets, n_items)
    n_rows = int(row_id.max()) + 1
    row_item = np.zeros((n_rows, n_items))
    np.add.at(row_item, bucket_row, cell)
    row_total = row_item.sum(axis=1)
    bucket_total = cell.sum(axis=1)
    expected = bucket_total[:, None] * row_item[bucket_row] / row_total[bucket_row][:, None]
    live = expected > 0
    g = float(np.sum((cell[live] - expected[live]) ** 2 / expected[live]))
    buckets_per_row = np.bincount(bucket_row, minlength=n_rows)
    items_per_row = (row_item > 0).sum(axis=1)
    dof = int(np.sum(np.maximum(buckets_per_row - 1, 0) * np.maximum(items_per_row - 1, 0)))
    if dof < 1:
        return 0.0, 0, 1.0
    return g, dof, float(chi2.sf(g, dof))


@dataclass(frozen=True)
class LawFinding:
    """The tests at one point of the exact audit."""

    d: int
    epsilon: float
    params: Mapping[str, Any]
    draws: int  #: reports drawn per item
    level: float  #: each test's level (alpha / tests)
    #: The smallest p-value of the row tests, and its item.
    rows_p: float = 1.0
    rows_item: int = 0
    rows_g: float = 0.0
    rows_dof: int = 0
    #: The homogeneity test of messages within rows.
    messages_p: float = 1.0
    messages_g: float = 0.0
    messages_dof: int = 0
    #: A finding that needs no test (a message in two rows, an impossible output), or ``""``.
    broken: str = ""

    @property
    def ok(self) -> bool:
        return not self.broken and self.rows_p > self.level and self.messages_p > self.level

    def describe(self) -> str:
        params = "".join(f", {k}={v}" for k, v in self.params.items())
        where = f"d={self.d}, epsilon={self.epsilon:g}{params}"
        if self.broken:
            return f"{where}: {self.broken}"
        if self.messages_p <= self.level:
            return (
                f"{where}: which message is sent for a table row depends on the item (homogeneity X^2 = "
                f"{self.messages_g:.1f} on {self.messages_dof} dof, p = {self.messages_p:.3g} <= {self.level:.3g}): "
                "the report carries more than its row (item order, a field, a dtype)"
            )
        return (
            f"{where}, item {self.rows_item}: the reports' rows do not follow P(. | v) of output_table "
            f"(X^2 = {self.rows_g:.1f} on {self.rows_dof} dof, p = {self.rows_p:.3g} <= {self.level:.3g}, "
            f"{self.draws} draws)"
        )


@dataclass(frozen=True)
class LawAudit:
    """Every point tested, or why none could be."""

    findings: tuple[LawFinding, ...] = ()
    alpha: float = 0.05
    #: The total-variation deviation per item the draws were sized to catch with power :data:`POWER`.
    delta: float = DELTA
    #: Why the test could not run (no ``output_rows``, the plugin's reports have no encoding), or ``""``.
    unavailable: str = ""
    skipped: tuple[str, ...] = field(default_factory=tuple)

    @property
    def available(self) -> bool:
        return not self.unavailable and bool(self.findings)

    @property
    def passed(self) -> bool:
        return all(f.ok for f in self.findings)

    @property
    def failures(self) -> tuple[LawFinding, ...]:
        return tuple(f for f in self.findings if not f.ok)

    def summary(self) -> str:
        if self.unavailable:
            return "not run: " + self.unavailable
        if not self.findings:
            return "not run: no output table was enumerated"
        draws = sorted({f.draws for f in self.findings})
        span = f"{draws[0]}" if len(draws) == 1 else f"{draws[0]}-{draws[-1]}"
        head = (
            f"{len(self.findings)} points, {span} encoded reports per item, alpha={self.alpha:g} over "
            f"{self.tests} tests (power {POWER:g} against total variation {self.delta:g} per item)"
        )
        if self.passed:
            return "passed: " + head
        return f"FAILED: {head}; " + self.failures[0].describe()

    @property
    def tests(self) -> int:
        return sum(f.d + 1 for f in self.findings)


def encoded_messages(oracle: Oracle, reports: Any, n_users: int) -> np.ndarray:
    """The ``(n_users, width)`` message matrix of one chunk (``Oracle.encode_reports``)."""
    return as_message_matrix(oracle.encode_reports(reports, n_users), n_users)


def read_only_items(v: int, m: int) -> np.ndarray:
    """``m`` users holding ``v``, as the read-only array every ``perturb`` is handed."""
    values = np.full(m, v, dtype=np.int64)
    values.flags.writeable = False
    return values


def check_point(
    oracle: Oracle,
    P: np.ndarray,
    params: Mapping[str, Any],
    level: float,
    rng: np.random.Generator,
    *,
    delta: float = DELTA,
    power: float = POWER,
) -> LawFinding:
    """Both tests of the module docstring at one point (``oracle`` built at it, ``P`` its table),
    on draws sized for ``power`` against ``delta``."""
    d, eps = oracle.d, oracle.epsilon
    live_rows = int((P > 0).sum(axis=0).max())
    m = draws_for_power(live_rows - 1, level, delta=delta, power=power)
    base = {"d": d, "epsilon": eps, "params": dict(params), "draws": m, "level": level}
    chunks, all_rows, all_items = [], [], []
    worst = (1.0, 0, 0.0, 0)
    for v in range(d):
        reports = oracle.perturb(read_only_items(v, m), rng)
        rows = np.asarray(oracle.output_rows(reports))
        if rows.shape != (m,) or (rows.size and not np.issubdtype(rows.dtype, np.integer)):
            return LawFinding(**base, broken=f"output_rows gave {rows.dtype} {rows.shape}, not {m} row indices")
        rows = rows.astype(np.int64)
        if rows.size and (rows.min() < 0 or rows.max() >= P.shape[0]):
            return LawFinding(**base, broken=f"output_rows gave rows outside [0, {P.shape[0]})")
        counts = np.bincount(rows, minlength=P.shape[0])
        g, dof, p = chi_square_test(counts, P[:, v])
        if math.isinf(g):
            y = int(np.flatnonzero((counts > 0) & (P[:, v] <= 0))[0])
            return LawFinding(
                **base, broken=f"item {v}: perturb produced output row {y} ({counts[y]} times), of probability 0"
            )
        if p < worst[0]:
            worst = (p, v, g, dof)
        chunks.append(encoded_messages(oracle, reports, m))
        all_rows.append(rows)
        all_items.append(np.full(m, v, dtype=np.int64))
    _, ids = message_ids(common_width(chunks))
    rows, items = np.concatenate(all_rows), np.concatenate(all_items)
    n_rows = P.shape[0]
    pairs = np.unique(ids * n_rows + rows)  # (message, row) pairs seen, sorted by message
    if pairs.size != np.unique(ids).size:
        msg = pairs // n_rows
        dup = msg[np.flatnonzero(np.diff(msg) == 0)[0]]
        where = (pairs[msg == dup] % n_rows).tolist()
        return LawFinding(
            **base,
            broken=f"one encoded message is output row {where[0]} and row {where[1]}: output_rows reads "
            "something the message does not carry (encode_reports drops part of the report)",
        )
    hg, hdof, hp = homogeneity_test(rows, ids, items)
    return LawFinding(
        **base,
        rows_p=worst[0],
        rows_item=worst[1],
        rows_g=worst[2],
        rows_dof=worst[3],
        messages_p=hp,
        messages_g=hg,
        messages_dof=hdof,
    )


def law_audit(
    points: Sequence[tuple[Oracle, Mapping[str, Any]]],
    *,
    alpha: float = 0.05,
    seed: int = 0,
    delta: float = DELTA,
) -> LawAudit:
    """Test every point ``(oracle, params)`` the exact audit enumerated (its ``output_table()``), at
    family-wise ``alpha``, with draws sized for power :data:`POWER` against total variation ``delta``.

    An oracle without ``output_rows`` cannot be tested (its reports cannot be tied to table rows):
    the result says so (``unavailable``), and is not a pass."""
    if not points:
        return LawAudit(alpha=alpha, unavailable="no output table was enumerated")
    if not points[0][0].tags().output_rows:
        return LawAudit(
            alpha=alpha,
            unavailable="the oracle has no output_rows, so its reports cannot be tied to rows of its output table",
        )
    tests = sum(o.d + 1 for o, _ in points)
    level = alpha / tests
    findings = []
    each = math.sqrt(POWER)  # two samples must both reject a real deviation (module docstring)
    for i, (oracle, params) in enumerate(points):
        P = np.asarray(oracle.output_table()[0], dtype=float)
        found = None
        for attempt in range(2):
            rng = np.random.default_rng(np.random.SeedSequence([int(seed), 8128, i, attempt]))
            found = check_point(oracle, P, params, level, rng, delta=delta, power=each)
            if found.ok or found.broken:
                break  # a pass, or a finding that no second sample could undo
        findings.append(found)
    return LawAudit(tuple(findings), alpha, delta=delta)
