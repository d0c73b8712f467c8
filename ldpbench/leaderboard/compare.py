"""Baseline vs current leaderboard: the noise-aware regression gate.

Each leaderboard row (dataset, users, epsilon, oracle, pipeline, metric) of the baseline is matched
with the current one and gets a status, marked as asv's ``compare`` marks them:

=================  ====  =====================================================================
status             mark  when
=================  ====  =====================================================================
``failing``        ``!`` repeats fail now (``failed > 0``) and none failed in the baseline
``more failures``  ``!`` repeats failed in both, and a larger share of them fails now (the count,
                         when both ran the same number of repeats)
``not comparable`` ``x`` the fingerprints (plugin identities: code and version; parameters;
                         data) or the metric's direction differ: the numbers measure different
                         things
``worse``          ``+`` the mean moved the wrong way by more than the threshold **and** by more
                         than ``z * sqrt(se_b² + se_c²)`` (its statistical noise)
``better``         ``-`` the same, the right way
``fixed``          ``-`` failed in the baseline, no failures now
``missing``        ``?`` only in the baseline (lost coverage)
``new``                  only in the current leaderboard
``unchanged``            anything else (within threshold or within noise)
=================  ====  =====================================================================

Thresholds follow pytest-benchmark's ``--benchmark-compare-fail``: ``mse:5%`` (relative to the
baseline mean), ``mse:0.001`` (absolute), and a bare ``5%`` or ``0.001`` sets the default for every
metric (:data:`DEFAULT_THRESHOLD` otherwise). A metric threshold applies to the label itself
(``set-query(rho=10):2%``) or to every label of a plugin (``set-query:2%``). A row whose standard
errors are unknown (a single repeat) is judged by the threshold alone, as asv does without stats.

Each compared row also says the smallest change the gate could have flagged on it, its
*detectable change* ``max(threshold, z * sqrt(se_b² + se_c²))`` (:func:`detectable_change`): a
regression smaller than that passes unseen. The verdict line gives its median and range over the
rows, so a passing gate says how much it could see.

``worse``, ``failing``, ``more failures``, ``missing`` and ``not comparable`` are regressions:
:attr:`Comparison.regressed`
makes ``ldpbench compare`` exit with :attr:`~ldpbench.errors.ExitCode.REGRESSION`. A plugin that
raises is a bug, not noise, so any rise in failed repeats fails the gate; a baseline row that is no
longer produced is lost coverage, which the gate must see too, unless the caller allows it
(``--allow-missing``, for a deliberate change of the spec). A row that cannot be compared is a
row the gate is blind to, so it fails too unless allowed (``--allow-not-comparable``, after a
deliberate change of a plugin, before re-baselining). A mean that was finite and is now NaN or
infinite is ``worse``; a baseline with such a mean is refused. ``new`` rows are informational.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tabulate import tabulate

from ldpbench.errors import UsageError
from ldpbench.leaderboard.aggregate import GROUP_COLUMNS
from ldpbench.leaderboard.load import load_leaderboard  # noqa: F401 - also importable from here, as before
from ldpbench.leaderboard.render import format_epsilon, format_mean_se, format_number
from ldpbench.results.jsoncodec import dumps_json
from ldpbench.results.store import LEADERBOARD_FILE  # noqa: F401 - likewise
from ldpbench.results.versioning import REGENERATE_LEADERBOARD
from ldpbench.util.suggest import closest

#: The standard-error multiple a change must exceed (``--z``; the CI gate's too). A leaderboard
#: has hundreds of rows and each row's standard error is itself estimated from 10-20 repeats, so a
#: per-row 3-sigma rule flags one or more of them on a mere change of seed about half the time
#: (measured on specs/ci.yaml, 6 reseeded runs); at 5 sigma none did.
DEFAULT_Z = 5.0


class Status(str, enum.Enum):
    """A row's verdict, in report order (regressions first), with its asv-style mark, whether it
    fails the gate (``always``; ``allowed``: unless the caller allows it; ``never``) and how the
    verdict line counts it ("2 newly failing", not "2 failing")."""

    FAILING = ("failing", "!", "always", "newly failing")
    MORE_FAILURES = ("more failures", "!", "always", "with more failures")
    WORSE = ("worse", "+", "always", "worse")
    MISSING = ("missing", "?", "allowed", "missing")
    NOT_COMPARABLE = ("not comparable", "x", "allowed", "not comparable")
    BETTER = ("better", "-", "never", "better")
    FIXED = ("fixed", "-", "never", "fixed")
    NEW = ("new", " ", "never", "new")
    UNCHANGED = ("unchanged", " ", "never", "unchanged")

    mark: str
    gate: str
    counted_as: str

    def __new__(cls, value: str, mark: str, gate: str, counted_as: str) -> Status:
        member = str.__new__(cls, value)
        member._value_ = value
        member.mark, member.gate, member.counted_as = mark, gate, counted_as
        return member

    def __str__(self) -> str:  # the text, in messages and f-strings alike
        return self.value

    __format__ = str.__format__

    @property
    def rank(self) -> int:
        """Position in report order."""
        return list(Status).index(self)


#: Status text -> asv-style mark (derived from :class:`Status`).
MARKS = {s.value: s.mark for s in Status}
#: Statuses that always fail the gate; ``missing`` and ``not comparable`` do too unless allowed.
REGRESSIONS = frozenset(s.value for s in Status if s.gate == "always")


# ----------------------------------------------------------------------------------------------
# Thresholds
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Threshold:
    """How far a mean may move before it counts: a fraction of the baseline, or an amount."""

    limit: float
    relative: bool

    def exceeded(self, delta: float, baseline: float) -> bool:
        """Whether a change ``delta`` (any sign) from ``baseline`` exceeds the threshold."""
        if self.relative:
            return abs(delta) > self.limit * abs(baseline)
        return abs(delta) > self.limit

    def amount(self, baseline: float) -> float:
        """The threshold as an absolute change from ``baseline`` (a change must exceed it)."""
        return self.limit * abs(baseline) if self.relative else self.limit

    def __str__(self) -> str:
        return f"{self.limit * 100:g}%" if self.relative else f"{self.limit:g}"


#: Without ``--threshold``: a change must exceed 5% of the baseline (and its noise).
DEFAULT_THRESHOLD = Threshold(0.05, relative=True)


@dataclass(frozen=True)
class Thresholds:
    """The default threshold and per-metric overrides."""

    default: Threshold = DEFAULT_THRESHOLD
    per_metric: Mapping[str, Threshold] = field(default_factory=dict)

    def for_metric(self, label: str) -> Threshold:
        """The threshold of a metric label: exact label, then plugin name (``set-query``), then default."""
        if label in self.per_metric:
            return self.per_metric[label]
        return self.per_metric.get(label.split("(", 1)[0], self.default)

    def __str__(self) -> str:
        parts = [f"{self.default} (default)"] + [f"{m} {t}" for m, t in self.per_metric.items()]
        return ", ".join(parts)


def parse_threshold_value(text: str, where: str) -> Threshold:
    """``5%`` -> relative 0.05, ``0.001`` -> absolute; anything else is a :class:`UsageError`."""
    raw = text.strip()
    relative = raw.endswith("%")
    number = raw[:-1].strip() if relative else raw
    try:
        value = float(number)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0 or not number:
        raise UsageError(
            f"bad threshold '{where}': expected [METRIC:]LIMIT with LIMIT a percentage (5%) "
            "or a non-negative number (0.001), e.g. --threshold mse:5%"
        )
    return Threshold(value / 100 if relative else value, relative)


def parse_thresholds(specs: Iterable[str]) -> Thresholds:
    """Parse ``--threshold`` values: ``mse:5%``, ``mse:0.001``, bare ``5%`` (the default)."""
    default = DEFAULT_THRESHOLD
    per_metric: dict[str, Threshold] = {}
    for spec in specs:
        metric, sep, value = spec.rpartition(":")
        if sep and not metric.strip():
            raise UsageError(f"bad threshold '{spec}': the metric name before ':' is empty")
        threshold = parse_threshold_value(value, spec)
        if sep:
            per_metric[metric.strip()] = threshold
        else:
            default = threshold
    return Thresholds(default, per_metric)


# ----------------------------------------------------------------------------------------------
# Loading either side
# ----------------------------------------------------------------------------------------------


def check_baseline_means(rows: Iterable[Mapping[str, Any]], name: str) -> None:
    """Refuse a baseline row with successful repeats but a NaN or infinite mean.

    Such a mean compares with nothing (every difference with NaN is NaN), so the row could never
    regress: the bad number would be frozen in as the reference. Rows whose every repeat failed
    (a null mean with ``failed > 0``) are legitimate: they compare as failures.
    """
    for row in rows:
        if row["repeats"] > 0 and not math.isfinite(row["mean"]):
            raise UsageError(
                f"baseline {name}: row {_describe_key(row_key(row))} has a mean of {row['mean']} over "
                f"{row['repeats']} repeats; a non-finite number cannot be a baseline ({REGENERATE_LEADERBOARD})"
            )
        # An infinite standard error (repeats that overflowed when squared) is a noise term no
        # change can exceed: the row would pass the gate whatever it does. NaN is "one repeat".
        if row["repeats"] > 0 and math.isinf(row["stderr"]):
            raise UsageError(
                f"baseline {name}: row {_describe_key(row_key(row))} has a standard error of "
                f"{row['stderr']}; a row no change can exceed cannot be a baseline ({REGENERATE_LEADERBOARD})"
            )


def row_key(row: Mapping[str, Any]) -> tuple[Any, ...]:
    """The identity of a leaderboard row; a NaN epsilon (personalized budgets) is ``None``."""
    eps = row["epsilon"]
    return tuple(None if k == "epsilon" and math.isnan(eps) else row[k] for k in GROUP_COLUMNS)


def _index(rows: list[dict[str, Any]], path: str, side: str) -> dict[tuple[Any, ...], dict[str, Any]]:
    index: dict[tuple[Any, ...], dict[str, Any]] = {}
    for row in rows:
        key = row_key(row)
        if key in index:
            raise UsageError(f"{side} {path}: duplicate leaderboard row {_describe_key(key)}")
        index[key] = row
    return index


def _describe_key(key: tuple[Any, ...]) -> str:
    return " ".join(f"{k}={v}" for k, v in zip(GROUP_COLUMNS, key))


# ----------------------------------------------------------------------------------------------
# Comparing
# ----------------------------------------------------------------------------------------------


@dataclass
class Change:
    """One matched (or unmatched) leaderboard row and its verdict."""

    key: tuple[Any, ...]
    status: Status
    baseline: dict[str, Any] | None
    current: dict[str, Any] | None
    delta: float = math.nan  # current mean - baseline mean
    noise: float = math.nan  # z * sqrt(se_b² + se_c²)
    threshold: Threshold | None = None
    reason: str = ""
    #: The smallest |change| the gate flags on this row: max(threshold, noise) (NaN when the
    #: row was not compared numerically: missing, new, failing, not comparable, NaN now).
    detectable: float = math.nan

    def __post_init__(self) -> None:
        self.status = Status(self.status)  # also given as its text

    @property
    def mark(self) -> str:
        return self.status.mark

    @property
    def relative(self) -> float:
        """``delta`` as a fraction of the baseline mean (NaN when undefined)."""
        if self.baseline is None or not math.isfinite(self.delta):
            return math.nan
        base = self.baseline["mean"]
        return self.delta / abs(base) if base else math.nan

    @property
    def detectable_relative(self) -> float:
        """``detectable`` as a fraction of the baseline mean (NaN when undefined)."""
        if self.baseline is None or not math.isfinite(self.detectable):
            return math.nan
        base = self.baseline["mean"]
        return self.detectable / abs(base) if base and math.isfinite(base) else math.nan

    def as_dict(self) -> dict[str, Any]:
        out = dict(zip(GROUP_COLUMNS, self.key))
        side = self.current or self.baseline or {}
        out.update(
            status=self.status.value,
            mark=self.mark.strip(),
            greater_is_better=side.get("greater_is_better"),
            baseline_mean=self.baseline["mean"] if self.baseline else None,
            baseline_stderr=self.baseline["stderr"] if self.baseline else None,
            current_mean=self.current["mean"] if self.current else None,
            current_stderr=self.current["stderr"] if self.current else None,
            delta=self.delta,
            relative=self.relative,
            noise=self.noise,
            threshold=str(self.threshold) if self.threshold else None,
            reason=self.reason,
            detectable=self.detectable,
            detectable_relative=self.detectable_relative,
        )
        return out


@dataclass
class Comparison:
    """Every row's :class:`Change`, in report order, plus the settings that produced them."""

    changes: list[Change]
    thresholds: Thresholds
    z: float
    #: Whether baseline rows absent from the current leaderboard are tolerated (``--allow-missing``).
    allow_missing: bool = False
    #: Whether rows whose fingerprints differ are tolerated (``--allow-not-comparable``).
    allow_not_comparable: bool = False
    #: What fails the gate besides its rows: a baseline of the scaffold's example code compared
    #: with other code (:func:`ldpbench.leaderboard.provenance.code_findings`).
    blockers: list[str] = field(default_factory=list)
    #: What the verdict line cannot say: rows better beyond their noise (maybe a biased
    #: estimator), code changed since the baseline, a baseline from a dirty work tree.
    notes: list[str] = field(default_factory=list)

    def fails_gate(self, change: Change) -> bool:
        """Whether this row alone makes the comparison a regression."""
        allowed = {Status.MISSING: self.allow_missing, Status.NOT_COMPARABLE: self.allow_not_comparable}
        return change.status.gate == "always" or (change.status.gate == "allowed" and not allowed[change.status])

    @property
    def regressions(self) -> list[Change]:
        """The rows that fail the gate, in report order."""
        return [c for c in self.changes if self.fails_gate(c)]

    @property
    def regressed(self) -> bool:
        return bool(self.blockers) or any(self.fails_gate(c) for c in self.changes)

    @property
    def headline(self) -> str:
        """The verdict's first words: ``OK``, ``REGRESSION`` (a row fails the gate), or, where only
        a blocker fails it, what the blocker is: ``STALE BASELINE`` (the baseline holds the
        scaffold example's numbers) — not a regression of any row."""
        if not self.regressed:
            return "OK"
        if self.regressions:
            return "REGRESSION"
        from ldpbench.leaderboard.provenance import SCAFFOLD_EXAMPLE

        return "STALE BASELINE" if all(SCAFFOLD_EXAMPLE in b for b in self.blockers) else "FAILED"

    @property
    def headline_reason(self) -> str:
        """What follows the headline when no row failed the gate but a blocker did."""
        if self.headline == "STALE BASELINE":
            return "the baseline holds the example's numbers, not your code's (no row regressed); "
        if self.headline == "FAILED":
            return "no row regressed; "
        return ""

    def counts(self) -> dict[str, int]:
        """Rows per status text, every status present, in report order."""
        counts = {s.value: 0 for s in Status}
        for change in self.changes:
            counts[change.status.value] += 1
        return counts


def detectable_change(threshold: Threshold, baseline_mean: float, noise: float) -> float:
    """The smallest |change| of a row that :func:`compare_rows` flags: it must exceed both the
    threshold and the noise ``z * sqrt(se_b² + se_c²)``, so anything up to the larger of the two
    passes, whatever its cause. Without standard errors (one repeat) the noise is 0 and the
    threshold alone decides."""
    return max(threshold.amount(baseline_mean), noise)


def _se(row: Mapping[str, Any]) -> float:
    se = row["stderr"]
    return 0.0 if se is None or math.isnan(se) else se


def _fingerprint_reason(baseline: Mapping[str, Any], current: Mapping[str, Any]) -> str:
    """Why two rows' fingerprints differ, as far as the rows tell: the simulation mode is in the
    leaderboard (an approximate aggregate path and a per-user run measure different laws);
    a plugin's code, parameters or data are only in the fingerprint."""
    sb, sc = baseline.get("simulation"), current.get("simulation")
    if sb and sc and sb != sc:
        return f"the simulation mode differs ({sb} in the baseline, {sc} now)"
    return "fingerprint differs (a plugin's algorithm_version, its parameters or its data)"


def compare_rows(baseline: Mapping[str, Any], current: Mapping[str, Any], thresholds: Thresholds, z: float) -> Change:
    """The verdict on one row present in both leaderboards."""
    key = row_key(current)
    # delta is reported for every matched row; only the numeric verdict below acts on it.
    change = Change(key, Status.UNCHANGED, dict(baseline), dict(current), delta=current["mean"] - baseline["mean"])
    # Failures are judged before anything else, fingerprints included: a plugin that raises is a
    # bug, not noise, so more of it is a regression whatever the numbers of the other repeats say.
    failed_b, failed_c = baseline["failed"], current["failed"]
    total_b, total_c = failed_b + baseline["repeats"], failed_c + current["repeats"]
    error = f": {current['error']}" if current.get("error") else ""
    if failed_c > 0 and failed_b == 0:
        change.status, change.reason = Status.FAILING, f"{failed_c} of {total_c} repeats fail{error}"
        return change
    # A larger share of failed repeats (cross-multiplied: exact on integers). With the same number
    # of repeats on both sides this is simply "more repeats fail"; with another repeat count the
    # share keeps 1 of 20 -> 2 of 40 from reading as a regression.
    if failed_c * total_b > failed_b * total_c:
        change.status = Status.MORE_FAILURES
        change.reason = f"{failed_c} of {total_c} repeats fail, {failed_b} of {total_b} in the baseline{error}"
        return change
    fb, fc = baseline.get("fingerprint"), current.get("fingerprint")
    if fb and fc and fb != fc:
        change.status, change.reason = (
            Status.NOT_COMPARABLE,
            _fingerprint_reason(baseline, current),
        )
        return change
    unfingerprinted = [
        side for side, row, fp in (("baseline", baseline, fb), ("current", current, fc)) if row["repeats"] and not fp
    ]
    if unfingerprinted:
        # Without a fingerprint the gate cannot tell whether both sides measure the same thing.
        change.status = Status.NOT_COMPARABLE
        change.reason = f"no fingerprint in the {' and the '.join(unfingerprinted)} row: what it measures is unknown"
        return change
    if total_c < total_b:
        # The repeats are part of what the baseline measured: fewer of them widen the noise (one
        # has none at all), so a regression the baseline's design would catch could pass unseen.
        change.status = Status.NOT_COMPARABLE
        change.reason = f"{total_c} repeats, {total_b} in the baseline: less sensitive than the baseline"
        return change
    if bool(baseline["greater_is_better"]) != bool(current["greater_is_better"]):
        change.status, change.reason = Status.NOT_COMPARABLE, "the metric's direction differs"
        return change
    if baseline["failed"] > 0 and current["failed"] == 0:
        change.status, change.reason = Status.FIXED, "failed in the baseline, no failures now"
    mb, mc = baseline["mean"], current["mean"]
    if math.isfinite(mb) and not math.isfinite(mc):
        # A number that was there and is now NaN or infinite is a broken result, whichever way
        # the metric points (inf - mb would otherwise read as "better" for a greater-is-better one).
        change.status = Status.WORSE
        change.reason = "no mean now (NaN)" if math.isnan(mc) else f"the mean is {mc} now"
        return change
    if math.isnan(mb) or math.isnan(mc):
        if change.status is Status.UNCHANGED:
            change.reason = "no successful repeat " + ("in either" if math.isnan(mb) else "now")
        return change
    threshold = thresholds.for_metric(current["metric"])
    delta = mc - mb
    # hypot, not sqrt(a² + b²): squaring a standard error of 1e200 raises OverflowError.
    noise = z * math.hypot(_se(baseline), _se(current))
    change.delta, change.noise, change.threshold = delta, noise, threshold
    change.detectable = detectable_change(threshold, mb, noise)
    if math.isnan(delta):  # inf - inf: only a hand-made baseline row (compare refuses it)
        return change
    if not math.isfinite(noise) or not math.isfinite(delta):
        # A mean or noise that overflowed (repeats of 1e100 squared) is a broken result, and an
        # infinite noise term would otherwise hide any change: it fails the gate.
        change.status = Status.WORSE
        what = "the difference of the means" if math.isfinite(noise) else "the noise term (standard error)"
        change.reason = f"{what} overflowed to {delta if math.isfinite(noise) else noise}"
        return change
    if not delta:
        return change
    beyond_threshold = threshold.exceeded(delta, mb)
    beyond_noise = abs(delta) > noise
    noise_text = f"{z:g}σ noise ({format_number(noise, 2)})"
    if beyond_threshold and beyond_noise:
        worse = delta < 0 if current["greater_is_better"] else delta > 0
        fixed = change.status is Status.FIXED
        if fixed and not worse:
            return change  # fixed, and better too: "fixed" says more
        change.status = Status.WORSE if worse else Status.BETTER
        change.reason = ("failures fixed, but the mean is " if fixed else "") + f"beyond {threshold}"
        change.reason += f" and {noise_text}" if noise else ""
    elif change.status is Status.FIXED:
        return change
    else:
        within = ([] if beyond_threshold else [str(threshold)]) + ([] if beyond_noise else [noise_text])
        change.reason = "within " + " and ".join(within)
    if any(math.isnan(r["stderr"]) for r in (baseline, current)):
        change.reason += "; a standard error is unknown (one repeat): threshold decides"
    return change


def check_threshold_metrics(thresholds: Thresholds, *leaderboards: Iterable[Mapping[str, Any]]) -> None:
    """Refuse a per-metric threshold that names no metric of the leaderboards (a typo).

    A threshold applies to a metric label (``set-query(rho=10)``) or to a plugin name
    (``set-query``); one that matches neither would be ignored without a word, and the gate would
    silently use the default for the metric the user meant. Raises :class:`UsageError` with a
    did-you-mean over the names present.
    """
    labels = {str(row["metric"]) for rows in leaderboards for row in rows}
    names = labels | {label.split("(", 1)[0] for label in labels}
    problems = []
    for metric in thresholds.per_metric:
        if metric in names:
            continue
        hint = closest(metric, names)
        problems.append(f"'{metric}'" + (f" (did you mean '{hint}'?)" if hint else ""))
    if not problems:
        return
    known = sorted(names)
    listed = ", ".join(known[:20]) + (f", ... ({len(known)} in all)" if len(known) > 20 else "")
    raise UsageError(
        f"--threshold names a metric in neither leaderboard: {', '.join(problems)}; "
        + (f"the metrics are {listed}" if known else "both leaderboards are empty")
    )


def compare(
    baseline: Sequence[Mapping[str, Any]],
    current: Sequence[Mapping[str, Any]],
    thresholds: Thresholds | None = None,
    z: float = DEFAULT_Z,
    *,
    baseline_name: str = "baseline",
    current_name: str = "current",
    allow_missing: bool = False,
    allow_not_comparable: bool = False,
    manifests: tuple[Mapping[str, Any] | None, Mapping[str, Any] | None] | None = None,
) -> Comparison:
    """Compare two leaderboards (lists of row dicts, as :func:`load_leaderboard` returns).

    :param manifests: the baseline's and the current leaderboard's manifests, where known: what
        code produced each side (:func:`ldpbench.leaderboard.provenance.code_findings`). A baseline
        of the scaffold's example compared with other code fails the comparison.

    :param allow_missing: tolerate baseline rows that the current leaderboard lacks (a deliberate
        change of the spec); by default they fail the gate as lost coverage.
    :param allow_not_comparable: tolerate rows whose fingerprints differ (a plugin, its
        parameters or its data changed on purpose); by default they fail the gate, since a gate
        that cannot compare a row cannot see it regress.
    :raises UsageError: a bad ``z``, duplicate rows, a baseline row with a non-finite mean, or a
        threshold naming an absent metric.
    """
    if not (z >= 0 and math.isfinite(z)):
        raise UsageError(f"--z must be a non-negative number, got {z}")
    check_baseline_means(baseline, baseline_name)
    thresholds = thresholds or Thresholds()
    check_threshold_metrics(thresholds, baseline, current)
    base = _index([dict(r) for r in baseline], baseline_name, "baseline")
    cur = _index([dict(r) for r in current], current_name, "current")
    missing_reason = "not in the current leaderboard" + (
        "" if allow_missing else " (lost coverage; --allow-missing if the spec changed on purpose)"
    )
    changes = []
    for key, brow in base.items():
        if key in cur:
            changes.append(compare_rows(brow, cur[key], thresholds, z))
        else:
            changes.append(Change(key, Status.MISSING, brow, None, reason=missing_reason))
    for key, crow in cur.items():
        if key not in base:
            changes.append(Change(key, Status.NEW, None, crow, reason="not in the baseline"))
    changes.sort(key=lambda c: c.status.rank)  # stable: spec order within a status
    blockers: list[str] = []
    notes = better_note(changes)
    if manifests is not None:
        from ldpbench.leaderboard.provenance import code_findings

        blockers, code_notes = code_findings(*manifests, baseline_name=baseline_name)
        notes += code_notes
    return Comparison(
        changes,
        thresholds,
        z,
        allow_missing=allow_missing,
        allow_not_comparable=allow_not_comparable,
        blockers=blockers,
        notes=notes,
    )


#: Rows the better-beyond-the-noise note names before it counts the rest.
_NAMED_BETTER = 3


def _row_name(key: tuple[Any, ...]) -> str:
    """``adult ε=1 lh4 · base mse``: a leaderboard row by identity (the run's tie note's form)."""
    row = dict(zip(GROUP_COLUMNS, key))
    users, eps = row.get("users"), row.get("epsilon")
    where = " ".join(
        str(x) for x in (row.get("dataset"), users or (format_epsilon(eps) if eps is not None else None)) if x
    )
    return f"{where} {row.get('oracle')} · {row.get('pipeline')} {row.get('metric')}"


def better_note(changes: Sequence[Change]) -> list[str]:
    """The note on rows better beyond their noise: in this field a lower error after a code change
    can mean a biased estimator (a wrong constant shrinks the estimates, and shrinkage lowers the
    MSE), which only the conformance kit's unbiasedness checks see."""
    better = [c for c in changes if c.status is Status.BETTER]
    if not better:
        return []
    oracles = list(dict.fromkeys(str(c.key[3]).split("(", 1)[0] for c in better))
    rows = "1 row" if len(better) == 1 else f"{len(better)} rows"
    named = [_row_name(c.key) for c in better[:_NAMED_BETTER]]
    more = f" and {len(better) - len(named)} more" if len(better) > len(named) else ""
    return [
        f"{rows} got better beyond the noise ({', '.join(named)}{more}; "
        f"oracle{'s' if len(oracles) > 1 else ''} {', '.join(oracles[:5])}{' ...' if len(oracles) > 5 else ''}): "
        f"if the code changed, a lower error can also mean a biased estimator (a wrong constant shrinks "
        f"the estimates, which lowers the MSE), and this gate cannot tell; run the conformance kit "
        f"(`ldpbench check-plugin {oracles[0]}`, or the plugin's tests/test_conformance.py) before "
        f"accepting the new numbers"
    ]


# ----------------------------------------------------------------------------------------------
# Reporting
# ----------------------------------------------------------------------------------------------

COMPARE_FORMATS = ("markdown", "table", "json")


@dataclass(frozen=True)
class Detectability:
    """The detectable changes of the compared rows, relative to their baseline means."""

    rows: int  #: compared rows with a relative detectable change (baseline mean not 0)
    median: float
    smallest: float
    largest: float

    def __str__(self) -> str:
        if self.rows == 1:
            return f"detectable change: {_percent(self.median)} of the baseline mean (1 row)"
        return (
            f"detectable change: median {_percent(self.median)} of the baseline mean, "
            f"{_percent(self.smallest)} to {_percent(self.largest)} over {self.rows} rows"
        )

    def as_dict(self) -> dict[str, float | int]:
        return {"rows": self.rows, "median": self.median, "smallest": self.smallest, "largest": self.largest}


def detectability(result: Comparison) -> Detectability | None:
    """Median and range of the rows' relative detectable changes (None when no row has one)."""
    values = sorted(r for c in result.changes if math.isfinite(r := c.detectable_relative))
    if not values:
        return None
    mid = len(values) // 2
    median = values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2
    return Detectability(len(values), median, values[0], values[-1])


def _percent(fraction: float) -> str:
    """0.0686 -> '6.9%', 0.43 -> '43%', 0.0004 -> '0.04%'."""
    pct = fraction * 100
    return f"{pct:.0f}%" if pct >= 10 else f"{pct:.1f}%" if pct >= 1 else f"{pct:.2g}%"


def verdict(result: Comparison) -> str:
    """One line: the outcome, the counts, the settings, and how large a change it could see."""
    counts = result.counts()
    summary = ", ".join(f"{counts[s.value]} {s.counted_as}" for s in Status if counts[s.value])
    summary = summary or "no rows"
    head = f"{result.headline}: {result.headline_reason}"
    allowed = "; missing rows allowed" if result.allow_missing else ""
    allowed += "; not-comparable rows allowed" if result.allow_not_comparable else ""
    seen = detectability(result)
    return f"{head}{summary} (threshold {result.thresholds}; noise z = {result.z:g}{allowed})" + (
        f"; {seen}" if seen else ""
    )


def summary_line(result: Comparison) -> str:
    """``compared / better / worse / not comparable / missing`` in one line (the pytest gate
    prints it even when it passes, so a gate that compared nothing is seen)."""
    counts = result.counts()
    compared = sum(1 for c in result.changes if c.baseline is not None and c.current is not None)
    worse = counts["worse"] + counts["failing"] + counts["more failures"]
    head = f"{result.headline}: {result.headline_reason}"
    seen = detectability(result)
    return (
        f"{head}{compared} compared, {counts['better'] + counts['fixed']} better, {worse} worse, "
        f"{counts['not comparable']} not comparable, {counts['missing']} missing, {counts['new']} new"
    ) + (f"; {seen}" if seen else "")


def _side_text(row: Mapping[str, Any] | None) -> str:
    if row is None:
        return "—"
    if math.isnan(row["mean"]):
        return f"failed ({row['failed']})" if row["failed"] else "—"
    text = format_mean_se(row["mean"], row["stderr"])
    return text + (f" ({row['failed']} failed)" if row["failed"] else "")


def _change_text(change: Change) -> str:
    if not math.isfinite(change.delta):
        return ""
    rel = change.relative
    if math.isfinite(rel):
        return f"{rel * 100:+.1f}%"
    return f"{change.delta:+.3g}"


def _detectable_text(change: Change) -> str:
    if not math.isfinite(change.detectable):
        return ""
    rel = change.detectable_relative
    return f"±{_percent(rel)}" if math.isfinite(rel) else f"±{change.detectable:.3g}"


def render_comparison(result: Comparison, fmt: str = "markdown", only_changed: bool = False) -> str:
    """The report: a verdict line, then a table of the rows (only the changed ones if asked)."""
    if fmt not in COMPARE_FORMATS:
        raise UsageError(f"unknown compare format '{fmt}' (choose from {', '.join(COMPARE_FORMATS)})")
    changes = [c for c in result.changes if not (only_changed and c.status is Status.UNCHANGED)]
    if fmt == "json":
        doc = {
            "verdict": "regression" if result.regressed else "ok",
            "counts": result.counts(),
            "z": result.z,
            "allow_missing": result.allow_missing,
            "allow_not_comparable": result.allow_not_comparable,
            "thresholds": {"default": str(result.thresholds.default)}
            | {m: str(t) for m, t in result.thresholds.per_metric.items()},
            "detectable": (seen.as_dict() if (seen := detectability(result)) else None),
            "blockers": list(result.blockers),
            "notes": list(result.notes),
            "rows": [c.as_dict() for c in changes],
        }
        return dumps_json(doc, indent=2) + "\n"
    show_users = any(c.key[1] for c in changes)
    headers = (
        ["", "dataset"]
        + (["users"] if show_users else [])
        + [
            "ε",
            "oracle",
            "pipeline",
            "metric",
            "baseline",
            "current",
            "change",
            "detectable",
            "status",
        ]
    )
    rows = []
    for c in changes:
        dataset, users, eps, oracle, pipeline, metric = c.key
        status = c.status.value + (f": {c.reason}" if c.reason else "")
        rows.append(
            [c.mark, dataset]
            + ([users] if show_users else [])
            + [
                format_epsilon(eps).removeprefix("ε="),
                oracle,
                pipeline,
                metric,
                _side_text(c.baseline),
                _side_text(c.current),
                _change_text(c),
                _detectable_text(c),
                status,
            ]
        )
    line = verdict(result) + "".join(f"\n\nFAILED: {b}" for b in result.blockers)
    line += "".join(f"\n\nnote: {n}" for n in result.notes)
    if fmt == "markdown":
        line = f"**{line.replace(':', '**:', 1)}"
        if not rows:
            return f"{line}\n\nNo changed rows.\n"
        rows = [[str(x).replace("|", "\\|") for x in r] for r in rows]
        return f"{line}\n\n{tabulate(rows, headers, tablefmt='github', disable_numparse=True)}\n"
    if not rows:
        return f"{line}\n\nNo changed rows.\n"
    return f"{line}\n\n{tabulate(rows, headers, tablefmt='simple', disable_numparse=True)}\n"
