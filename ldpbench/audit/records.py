"""The whole-record audit of a multidimensional protocol (docs/audit.md, docs/multidimensional.md).

A user holding a tuple of attributes sends one report of the whole record. The protocol's
``report_table(sizes, epsilon)`` is that report's exact law ``P[x, y]`` over every record of
``[d_1] x ... x [d_a]`` at small sizes; from it, the exact epsilon over any two records
(``max_y max_{x, x'} ln P[x, y] / P[x', y]``) and over records that differ in one attribute, each
compared with what ``record_accounting`` declares (``any_records``, ``one_attribute``): a proof
or a counterexample for the table. Then the reports the protocol's own code draws
(``perturb_records``) are tested against the table (Pearson's chi-square for the first and the
last record of every size, Bonferroni over all of them at level ``alpha``), so the proof is about
the code that runs and not only about a table written beside it.

Verdicts never claim more than was checked: a missing table, accounting or ``perturb_records``
is "could not check" (partial), never a pass; a ratio above the declared bound, a table that is no
law, reports that do not follow it or a plugin that raises is a failure.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ldpbench.boundary.failures import describe_exception
from ldpbench.errors import LdpbenchError

#: Attribute domains audited by default: two and three attributes, equal and unequal sizes.
SIZES: tuple[tuple[int, ...], ...] = ((2, 2), (2, 3), (2, 2, 2))
#: Reports drawn per audited record for the chi-square test.
TRIALS = 20_000
#: Relative slack of the exact ratios against a declared bound (floating point only).
SLACK = 1e-9


def max_log_ratio(P: np.ndarray) -> float:
    """``max_y max_{x, x'} ln P[x, y] / P[x', y]`` (``inf`` if a report is possible for one record
    and impossible for another)."""
    hi, lo = P.max(axis=0), P.min(axis=0)
    used = hi > 0
    if np.any(lo[used] <= 0):
        return math.inf
    return float(np.max(np.log(hi[used] / lo[used]))) if used.any() else 0.0


def attribute_log_ratio(P: np.ndarray, sizes: Sequence[int]) -> float:
    """As :func:`max_log_ratio`, over pairs of records that differ in exactly one attribute."""
    grid = P.reshape(*sizes, P.shape[1])
    worst = 0.0
    for j in range(len(sizes)):
        moved = np.moveaxis(grid, j, 0)  # (d_j, ..., reports): the other attributes fixed
        hi, lo = moved.max(axis=0), moved.min(axis=0)
        used = hi > 0
        if np.any(lo[used] <= 0):
            return math.inf
        if used.any():
            worst = max(worst, float(np.max(np.log(hi[used] / lo[used]))))
    return worst


def chi_square_pvalue(observed: np.ndarray, expected: np.ndarray) -> float:
    """Pearson's test of counts against expected counts (0 if a count falls where none is expected)."""
    from scipy.special import chdtrc

    used = expected > 0
    if observed[~used].sum() > 0:
        return 0.0
    stat = float(np.sum((observed[used] - expected[used]) ** 2 / expected[used]))
    return float(chdtrc(max(int(used.sum()) - 1, 1), stat))


@dataclass
class RecordPoint:
    """One (sizes, epsilon) point of the audit."""

    sizes: tuple[int, ...]
    epsilon: float
    any_records: float | None = None  # exact, from the table
    one_attribute: float | None = None
    declared_any: float | None = None
    declared_one: float | None = None
    reports_p: list[float] = field(default_factory=list)  # chi-square p-values, one per audited record
    reports_level: float = 0.0
    problems: list[str] = field(default_factory=list)  # failures
    unchecked: list[str] = field(default_factory=list)  # what could not be checked

    @property
    def failed(self) -> bool:
        return bool(self.problems)


@dataclass
class RecordsAudit:
    """The whole-record audit of one protocol over a grid of attribute sizes and budgets."""

    name: str
    params: Mapping[str, Any]
    trials: int
    alpha: float
    points: list[RecordPoint] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return bool(self.errors or any(p.failed for p in self.points))

    @property
    def audited(self) -> bool:
        return any(p.any_records is not None for p in self.points)

    @property
    def partial(self) -> bool:
        return any(p.unchecked for p in self.points)

    @property
    def verdict(self) -> str:
        if self.errors:
            return "FAILED: the plugin raised while being audited"
        if any(p.failed for p in self.points):
            return "LEAK: the whole report is less private than declared, or the code does not draw the audited law"
        if not self.audited:
            return "not audited: the protocol declares no report_table (the exact law of a whole report)"
        if self.partial:
            return "partial: no ratio above the declared bounds where checked, but some part could not be checked"
        return (
            "consistent: the exact law meets the declared bounds at every audited size and budget, "
            "and the protocol's reports follow it"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "plugin": self.name,
            "params": dict(self.params),
            "audit": "whole-record",
            "verdict": self.verdict,
            "failed": self.failed,
            "partial": self.partial,
            "trials": self.trials,
            "alpha": self.alpha,
            "errors": list(self.errors),
            "points": [
                {
                    "sizes": list(p.sizes),
                    "epsilon": p.epsilon,
                    "any_records": p.any_records,
                    "declared_any_records": p.declared_any,
                    "one_attribute": p.one_attribute,
                    "declared_one_attribute": p.declared_one,
                    "reports_pvalues": p.reports_p,
                    "reports_level": p.reports_level,
                    "problems": p.problems,
                    "could_not_check": p.unchecked,
                }
                for p in self.points
            ],
        }

    def lines(self) -> list[str]:
        label = self.name + "".join(f" {k}={v}" for k, v in self.params.items())
        out = [
            f"whole-record audit of {label} (exact epsilon of report_table; perturb_records against it)",
            f"  {'sizes':<10} {'eps':>5}  {'any two records':<22} {'one attribute':<22} reports",
        ]

        def pair(found: float | None, declared: float | None) -> str:
            if found is None:
                return "not checked"
            return f"{found:.4f} / " + ("undeclared" if declared is None else f"{declared:.4f}")

        for p in self.points:
            reports = (
                f"chi-square min p = {min(p.reports_p):.3g} (level {p.reports_level:.2g})"
                if p.reports_p
                else "not checked"
            )
            sizes = "x".join(map(str, p.sizes))
            out.append(
                f"  {sizes:<10} {p.epsilon:>5g}  {pair(p.any_records, p.declared_any):<22} "
                f"{pair(p.one_attribute, p.declared_one):<22} {reports}"
            )
        out.append("  (exact / declared)")
        for p in self.points:
            for msg in p.problems:
                out.append(f"  LEAK {'x'.join(map(str, p.sizes))} eps {p.epsilon:g}: {msg}")
        unchecked = sorted({m for p in self.points for m in p.unchecked})
        for msg in unchecked:
            out.append(f"  could not check: {msg}")
        for err in self.errors:
            out.append(f"error: {err}")
        out.append(f"verdict: {self.verdict}")
        return out


def _declared(value: Any) -> float | None:
    return None if value is None else float(value)


def records_audit(
    protocol: Any,
    *,
    name: str,
    params: Mapping[str, Any] | None = None,
    epsilons: Sequence[float],
    sizes: Sequence[tuple[int, ...]] = SIZES,
    trials: int = TRIALS,
    alpha: float = 0.05,
    seed: int = 0,
) -> RecordsAudit:
    """Audit ``protocol``'s whole report at every ``sizes`` x ``epsilons`` point (module docstring).
    ``alpha``: the probability that a correct protocol's reports fail the chi-square tests, split
    over every test (Bonferroni)."""
    result = RecordsAudit(name, dict(params or {}), trials, alpha)
    grid = [(tuple(int(d) for d in s), float(e)) for s in sizes for e in epsilons]
    level = alpha / max(2 * len(grid), 1)
    for k, (sz, eps) in enumerate(grid):
        point = RecordPoint(sz, eps, reports_level=level)
        result.points.append(point)
        try:
            _audit_point(protocol, point, trials, np.random.default_rng([seed, k]))
        except LdpbenchError as exc:  # NotApplicable and friends: this point cannot be audited
            point.unchecked.append(f"{'x'.join(map(str, sz))} eps {eps:g}: {exc}")
        except Exception as exc:  # noqa: BLE001 - a raising plugin fails the audit, with its message
            result.errors.append(f"{'x'.join(map(str, sz))} eps {eps:g}: {describe_exception(exc)}")
    return result


def _audit_point(protocol: Any, point: RecordPoint, trials: int, rng: np.random.Generator) -> None:
    sizes, eps = point.sizes, point.epsilon
    table = protocol.report_table(sizes, eps)
    if table is None:
        point.unchecked.append("report_table is not declared: no exact epsilon, no test of the reports")
        return
    P = np.asarray(table, dtype=float)  # noqa: N806
    records = list(itertools.product(*(range(d) for d in sizes)))
    if P.ndim != 2 or P.shape[0] != len(records):
        point.problems.append(f"report_table has shape {P.shape}, not one row per record ({len(records)})")
        return
    if np.any(P < 0) or not np.allclose(P.sum(axis=1), 1.0):
        point.problems.append("a row of report_table is not a probability law")
        return
    point.any_records, point.one_attribute = max_log_ratio(P), attribute_log_ratio(P, sizes)
    acc = protocol.record_accounting(eps, sizes)
    if acc is None:
        point.unchecked.append("record_accounting is not declared: the exact epsilons have no bound to meet")
    else:
        point.declared_any, point.declared_one = _declared(acc.get("any_records")), _declared(acc.get("one_attribute"))
        for found, declared, what in (
            (point.any_records, point.declared_any, "any two records"),
            (point.one_attribute, point.declared_one, "records differing in one attribute"),
        ):
            if declared is None:
                point.unchecked.append(f"record_accounting declares no bound over {what}")
            elif found > declared * (1 + SLACK) + 1e-12:
                point.problems.append(f"over {what} the exact epsilon is {found:.4f} > the declared {declared:.4f}")
    for r in (0, len(records) - 1):
        rows = np.tile(np.asarray(records[r], dtype=np.int64), (trials, 1))
        drawn = protocol.perturb_records(rows, sizes, eps, rng)
        if drawn is None:
            point.unchecked.append("perturb_records is not declared: the table is not tied to the code that runs")
            return
        reports = np.asarray(drawn)
        if reports.ndim == 2:
            columns = protocol.report_columns(reports, sizes, eps)
            if columns is None:
                point.unchecked.append(
                    "perturb_records returned one column per attribute and report_columns is not declared"
                )
                return
            reports = np.asarray(columns)
        index = reports.astype(np.int64).ravel()
        if index.size != trials or index.min() < 0 or index.max() >= P.shape[1]:
            point.problems.append(f"perturb_records of {records[r]} drew reports outside report_table's columns")
            return
        p = chi_square_pvalue(np.bincount(index, minlength=P.shape[1]), trials * P[r])
        point.reports_p.append(p)
        if p <= point.reports_level:
            point.problems.append(f"perturb_records of {records[r]} does not follow report_table (p = {p:.2g})")


__all__ = ["SIZES", "TRIALS", "RecordsAudit", "attribute_log_ratio", "max_log_ratio", "records_audit"]
