"""The boundary between the harness and plugin code: what goes in is read-only, what comes out is checked.

Two kinds of accident corrupt a benchmark without any error:

- a plugin that writes into an array it was handed (``truth.counts[0] += 1000`` in a metric)
  changes the numbers of every later pipeline of the cell, and of every later cell sharing the
  cached population, differently for one worker and for four;
- a plugin that returns a bad number (a NaN histogram cast to int64 is ``-2**63``; an estimate
  of the wrong length is broadcast or silently truncated) turns into a plausible-looking score.

So every array handed to a plugin is a read-only view (:func:`readonly`, :func:`frozen_population`,
:func:`frozen_estimate`): writing into it raises ``ValueError: assignment destination is
read-only`` inside the plugin, which fails its rows. And every output is checked here before the
harness uses it (:func:`checked_counts`, :func:`checked_estimate`, :func:`checked_metric_value`):
a violation raises :class:`PluginOutputError`, which fails the rows that depend on it, naming the
plugin and what was wrong. These guard against mistakes, not malice: a plugin is trusted code
(see docs/trust.md).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ldpbench.types import Estimate, IdentifiedItems, IdentifiedItemsets, Population

__all__ = [
    "PluginOutputError",
    "checked_counts",
    "checked_estimate",
    "checked_identified",
    "checked_result",
    "checked_metric_value",
    "checked_population",
    "checked_sums",
    "frozen_estimate",
    "frozen_population",
    "frozen_result",
    "readonly",
]


class PluginOutputError(ValueError):
    """A plugin returned something the harness cannot score: wrong type, shape, dtype or values."""


def readonly(array: Any) -> Any:
    """A read-only view of ``array`` (``None`` stays ``None``; non-arrays are converted)."""
    if array is None:
        return None
    a = np.asarray(array)
    if a.flags.writeable:
        a = a.view()
        a.flags.writeable = False
    return a


def frozen_population(population: Population) -> Population:
    """``population`` with its arrays (counts, parents, values) read-only."""
    return population.replace(
        counts=readonly(population.counts), parents=readonly(population.parents), values=readonly(population.values)
    )


def frozen_result(result: Estimate | IdentifiedItems) -> Estimate | IdentifiedItems:
    """A mechanism's result with every array read-only (either result kind)."""
    if isinstance(result, IdentifiedItemsets):
        return result.replace(
            items=readonly(result.items),
            frequencies=readonly(result.frequencies),
            itemset_offsets=readonly(result.itemset_offsets),
            itemset_members=readonly(result.itemset_members),
        )
    if isinstance(result, IdentifiedItems):
        return result.replace(items=readonly(result.items), frequencies=readonly(result.frequencies))
    return frozen_estimate(result)


def frozen_estimate(estimate: Estimate) -> Estimate:
    """``estimate`` with every array it carries read-only (its per-group ``parts`` too)."""
    return estimate.replace(
        frequencies=readonly(estimate.frequencies),
        variance=readonly(estimate.variance),
        support_counts=readonly(estimate.support_counts),
        report_histogram=readonly(estimate.report_histogram),
        items=readonly(estimate.items),
        report_supports=readonly(estimate.report_supports),
        flagged_reports=readonly(estimate.flagged_reports),
        parts=tuple(frozen_estimate(p) for p in estimate.parts),
    )


def _describe_bad(values: np.ndarray, mask: np.ndarray) -> str:
    """``3 of 16 values, first at index 2: nan``: where the first offending value is."""
    bad = np.flatnonzero(mask)
    first = int(bad[0])
    return f"{bad.size} of {values.size} values, first at index {first}: {values.flat[first].item()!r}"


def checked_counts(who: str, what: str, counts: Any, length: int) -> np.ndarray:
    """``counts`` as int64 if it is a length-``length`` vector of finite non-negative integers.

    Support counts and report histograms count reports; anything else (a NaN that an int64 cast
    would turn into ``-2**63``, a fractional value, a negative count, a 2-D array) is a bug in
    ``who``, reported as :class:`PluginOutputError` naming ``what`` it returned.
    """
    a = np.asarray(counts)
    if a.dtype == object or not (
        np.issubdtype(a.dtype, np.integer) or np.issubdtype(a.dtype, np.floating) or a.dtype == np.bool_
    ):
        raise PluginOutputError(f"{who} returned {what} of dtype {a.dtype}, expected integer counts")
    if a.shape != (length,):
        raise PluginOutputError(f"{who} returned {what} of shape {a.shape}, expected ({length},)")
    if np.issubdtype(a.dtype, np.floating):
        finite = np.isfinite(a)
        if not finite.all():
            raise PluginOutputError(f"{who} returned {what} with non-finite values ({_describe_bad(a, ~finite)})")
        fractional = a != np.round(a)
        if fractional.any():
            raise PluginOutputError(f"{who} returned {what} with non-integer values ({_describe_bad(a, fractional)})")
    negative = a < 0
    if negative.any():
        raise PluginOutputError(f"{who} returned {what} with negative counts ({_describe_bad(a, negative)})")
    # Checked before the cast, which wraps silently: uint64 2**64-1 becomes -1 and a float 1e19
    # or 2**63 becomes -2**63, a plausible-looking count after the negative check has passed.
    too_large = a > _INT64_MAX_AS[a.dtype.kind] if a.dtype.kind in _INT64_MAX_AS else np.zeros(a.shape, bool)
    if too_large.any():
        raise PluginOutputError(
            f"{who} returned {what} with counts beyond int64 ({_describe_bad(a, too_large)}); "
            "a count of reports cannot exceed 2**63 - 1"
        )
    return a.astype(np.int64, copy=False)


#: The largest value of each dtype kind that an int64 cast keeps: unsigned integers up to
#: 2**63 - 1; floats below 2**63 (float64(2**63 - 1) rounds up to 2**63, which wraps, so the
#: bound is the float just below it). Signed integers of at most 64 bits always fit.
_INT64_MAX_AS: dict[str, Any] = {
    "u": np.uint64(np.iinfo(np.int64).max),
    "f": np.nextafter(np.float64(2.0**63), 0.0),
}


def checked_sums(who: str, what: str, sums: Any, length: int) -> np.ndarray:
    """``sums`` as float64 if it is a length-``length`` vector of finite real numbers.

    For oracles whose tags declare ``real_valued_counts`` (SHE adds up real-valued reports): a
    NaN or infinite sum, or a vector of the wrong shape, is a bug in ``who``.
    """
    a = np.asarray(sums)
    if a.dtype == object or not (np.issubdtype(a.dtype, np.integer) or np.issubdtype(a.dtype, np.floating)):
        raise PluginOutputError(f"{who} returned {what} of dtype {a.dtype}, expected real numbers")
    if a.shape != (length,):
        raise PluginOutputError(f"{who} returned {what} of shape {a.shape}, expected ({length},)")
    a = a.astype(np.float64, copy=False)
    finite = np.isfinite(a)
    if not finite.all():
        raise PluginOutputError(f"{who} returned {what} with non-finite values ({_describe_bad(a, ~finite)})")
    return a


def _check_frequencies(who: str, estimate: Estimate, d: int | None) -> None:
    f = np.asarray(estimate.frequencies)
    if f.dtype == object or not (np.issubdtype(f.dtype, np.floating) or np.issubdtype(f.dtype, np.integer)):
        raise PluginOutputError(f"{who} returned frequencies of dtype {f.dtype}, expected floats")
    if estimate.items is not None:
        items = np.asarray(estimate.items)
        if items.ndim != 1 or not np.issubdtype(items.dtype, np.integer):
            raise PluginOutputError(
                f"{who} returned items of shape {items.shape} and dtype {items.dtype}, "
                "expected a vector of item indices"
            )
        if d is not None and items.size and (items.min() < 0 or items.max() >= d):
            raise PluginOutputError(f"{who} returned items outside the domain 0..{d - 1}")
        expected: int | None = items.size
    else:
        expected = d
    if f.ndim != 1 or (expected is not None and f.size != expected):
        want = f"({expected},)" if expected is not None else "a vector"
        raise PluginOutputError(f"{who} returned frequencies of shape {f.shape}, expected {want}")
    finite = np.isfinite(f)
    if not finite.all():
        raise PluginOutputError(f"{who} returned frequencies with non-finite values ({_describe_bad(f, ~finite)})")


def checked_estimate(who: str, estimate: Any, d: int | None) -> Estimate:
    """``estimate`` if it is an :class:`Estimate` whose frequencies are finite and of the right shape.

    The right shape is ``(len(items),)`` for a partial estimate (Blender's head list), else
    ``(d,)`` (``d=None``: any vector). Its per-group ``parts`` are checked the same way.
    """
    if not isinstance(estimate, Estimate):
        raise PluginOutputError(f"{who} returned {type(estimate).__name__}, not an Estimate")
    _check_frequencies(who, estimate, d)
    for i, part in enumerate(estimate.parts):
        checked_estimate(f"{who} (part {i})", part, d)
    return estimate


def checked_identified(who: str, result: Any) -> IdentifiedItems:
    """``result`` if it is :class:`IdentifiedItems` with distinct uint64 items, one finite
    frequency each, at most ``k`` of them, and a non-negative bits-per-user figure."""
    if not isinstance(result, IdentifiedItems):
        raise PluginOutputError(f"{who} returned {type(result).__name__}, not IdentifiedItems")
    items, f = np.asarray(result.items), np.asarray(result.frequencies)
    if items.ndim != 1 or items.dtype != np.uint64:
        raise PluginOutputError(f"{who} returned items of shape {items.shape} and dtype {items.dtype}, expected uint64")
    if f.shape != items.shape or not np.issubdtype(f.dtype, np.floating):
        raise PluginOutputError(f"{who} returned frequencies of shape {f.shape} for {items.size} items")
    finite = np.isfinite(f)
    if not finite.all():
        raise PluginOutputError(f"{who} returned frequencies with non-finite values ({_describe_bad(f, ~finite)})")
    if np.unique(items).size != items.size:
        raise PluginOutputError(f"{who} returned an item twice")
    if items.size > result.k:
        raise PluginOutputError(f"{who} returned {items.size} items, more than the k = {result.k} asked for")
    if not (result.bits_per_user >= 0 or math.isnan(result.bits_per_user)):
        raise PluginOutputError(f"{who} returned a negative bits_per_user")
    if isinstance(result, IdentifiedItemsets):
        offsets = np.asarray(result.itemset_offsets)
        members = np.asarray(result.itemset_members)
        if (
            offsets.ndim != 1
            or offsets.size != items.size + 1
            or not np.issubdtype(offsets.dtype, np.integer)
            or (offsets.size and (offsets[0] != 0 or offsets[-1] != members.size))
            or np.any(np.diff(offsets) < 1)
            or members.dtype != np.uint64
        ):
            raise PluginOutputError(
                f"{who} returned an itemset table that is not {items.size} non-empty uint64 itemsets "
                "(itemset_offsets: m + 1 increasing int64 from 0 to len(itemset_members))"
            )
    return result


def checked_result(who: str, result: Any, d: int | None) -> Estimate | IdentifiedItems:
    """A mechanism's or a post-processor's result, checked as the kind it is."""
    if isinstance(result, IdentifiedItems):
        return checked_identified(who, result)
    return checked_estimate(who, result, d)


def checked_population(who: str, population: Any) -> Population:
    """``population`` if it is a :class:`Population` with users (its counts are checked on creation)."""
    if not isinstance(population, Population):
        raise PluginOutputError(f"{who} returned {type(population).__name__}, not a Population")
    counts = population.counts
    if (counts < 0).any():  # a NaN count cast to int64 on creation
        raise PluginOutputError(f"{who} returned negative or non-finite counts")
    if population.n <= 0:
        raise PluginOutputError(f"{who} has no users")
    return population


def checked_metric_value(who: str, value: Any) -> float:
    """``value`` as a float if it is a finite real number.

    A NaN score (a metric that has nothing to compare) or an infinite one cannot be averaged or
    ranked: it is a failure of that row, never a result.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        if not (isinstance(value, np.ndarray) and value.shape == () and np.issubdtype(value.dtype, np.number)):
            raise PluginOutputError(f"{who} returned {type(value).__name__} {_short(value)}, expected a number")
    number = float(value)
    if not math.isfinite(number):
        raise PluginOutputError(f"{who} returned {number!r}, expected a finite number")
    return number


def _short(value: Any) -> str:
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a broken __repr__ must not hide the real problem
        return "(unprintable)"
    return text if len(text) <= 60 else text[:57] + "..."
