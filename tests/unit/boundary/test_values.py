"""The plugin boundary (ldpbench/boundary/values.py, issue 10): outputs checked, inputs read-only."""

from __future__ import annotations

import numpy as np
import pytest

from ldpbench.boundary.values import (
    PluginOutputError,
    checked_counts,
    checked_estimate,
    checked_metric_value,
    frozen_estimate,
    frozen_population,
)
from ldpbench.engine.simulate import simulate
from ldpbench.types import Estimate, Population

# -- outputs ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("counts", "message"),
    [
        (np.array([1.0, np.nan, 2.0]), "non-finite values (1 of 3 values, first at index 1: nan)"),
        (np.array([1.0, np.inf, 2.0]), "non-finite values"),
        (np.array([1, -2, 3]), "negative counts"),
        (np.array([1.5, 2.0, 3.0]), "non-integer values"),
        (np.array([1, 2]), "of shape (2,), expected (3,)"),
        (np.ones((3, 1)), "of shape (3, 1), expected (3,)"),
        (np.array(["1", "2", "3"]), "of dtype <U1, expected integer counts"),
        (np.array([1, None, 3], dtype=object), "of dtype object"),
    ],
)
def test_bad_counts_are_refused_naming_the_plugin(counts, message):
    with pytest.raises(PluginOutputError, match="oracle 'x' returned support counts") as info:
        checked_counts("oracle 'x'", "support counts", counts, 3)
    assert message in str(info.value)


@pytest.mark.parametrize(
    "counts",
    [
        np.array([1, 2**64 - 1, 3], dtype=np.uint64),  # wrapped to -1 by the cast
        np.array([1.0, 1e19, 3.0]),  # to -2**63
        np.array([1.0, 2.0**63, 3.0]),  # to -2**63: float(2**63 - 1) is 2**63
        np.array([1, 2**63, 3], dtype=np.uint64),
    ],
)
def test_counts_that_do_not_fit_int64_are_refused_before_the_cast(counts):
    """Reproduction (issue 28): these passed the negative check, wrapped negative in the cast,
    and the cell was stored as a success with an MSE of 9.96e31."""
    with pytest.raises(PluginOutputError, match="counts beyond int64") as info:
        checked_counts("oracle 'x'", "support counts", counts, 3)
    assert "first at index 1" in str(info.value)


def test_the_largest_counts_int64_holds_pass():
    top = np.iinfo(np.int64).max
    assert checked_counts("o", "c", np.array([0, top], dtype=np.uint64), 2).tolist() == [0, top]
    below = float(np.nextafter(2.0**63, 0))
    assert checked_counts("o", "c", np.array([0.0, below]), 2).tolist() == [0, int(below)]


def test_good_counts_come_back_as_int64():
    out = checked_counts("o", "c", np.array([1.0, 0.0, 3.0]), 3)
    assert out.dtype == np.int64 and out.tolist() == [1, 0, 3]


def test_a_nan_grr_histogram_is_a_failure_not_two_point_two_e_thirty_three(plugins):
    """Reproduction: a NaN histogram was cast to int64 (-2**63) and the run scored 2.26e33."""
    grr = plugins.create("oracle", "grr", d=4, epsilon=1.0)
    grr.sample_report_histogram = lambda counts, rng: np.array([np.nan, 1.0, 2.0, 3.0])
    with pytest.raises(PluginOutputError, match="oracle 'grr' returned a report histogram with non-finite"):
        simulate(grr, np.array([10, 20, 30, 40]), np.random.default_rng(0))


def test_estimates_must_be_finite_and_of_the_domain_size():
    est = Estimate(frequencies=np.array([0.5, 0.5]), n=10, epsilon=1.0)
    assert checked_estimate("p", est, 2) is est
    with pytest.raises(PluginOutputError, match=r"shape \(2,\), expected \(3,\)"):
        checked_estimate("p", est, 3)
    with pytest.raises(PluginOutputError, match="non-finite"):
        checked_estimate("p", est.replace(frequencies=np.array([np.nan, 1.0])), 2)
    with pytest.raises(PluginOutputError, match="returned dict, not an Estimate"):
        checked_estimate("p", {"frequencies": [1, 2]}, 2)
    partial = est.replace(items=np.array([0, 7]))  # a head list: the length is that of items
    assert checked_estimate("p", partial, 8) is partial
    with pytest.raises(PluginOutputError, match="items outside the domain"):
        checked_estimate("p", partial, 4)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf"), None, "0.1", np.array([1.0, 2.0]), True])
def test_metric_values_must_be_finite_numbers(value):
    with pytest.raises(PluginOutputError, match="metric 'm' returned"):
        checked_metric_value("metric 'm'", value)


@pytest.mark.parametrize("value", [0, 1.5, np.float32(2.5), np.int64(3), np.array(4.0), -1e300])
def test_finite_metric_values_pass(value):
    assert checked_metric_value("m", value) == float(value)


# -- inputs ----------------------------------------------------------------------------------


def test_frozen_inputs_cannot_be_written():
    pop = frozen_population(Population(np.array([3, 4, 5])))
    with pytest.raises(ValueError, match="read-only"):
        pop.counts[0] += 1000
    est = frozen_estimate(
        Estimate(
            frequencies=np.array([0.1, 0.9]),
            n=10,
            epsilon=1.0,
            variance=np.ones(2),
            parts=(Estimate(np.zeros(2), 5, 1.0),),
        )
    )
    for array in (est.frequencies, est.variance, est.parts[0].frequencies):
        with pytest.raises(ValueError, match="read-only"):
            array[0] = 7.0


def _found(**changes):
    from ldpbench.types import IdentifiedItems

    base = dict(items=np.array([1, 2], dtype=np.uint64), frequencies=np.array([0.3, 0.2]), n=10, epsilon=1.0, k=2)
    base.update(changes)
    return IdentifiedItems(**base)


def test_identified_items_are_checked_and_frozen():
    from ldpbench.boundary.values import checked_identified, checked_result, frozen_result

    ok = _found()
    assert checked_result("p", ok, 5) is ok
    frozen = frozen_result(ok)
    with pytest.raises(ValueError, match="read-only"):
        frozen.items[0] = 3
    for bad, match in [
        (_found(items=np.array([1, 2])), "expected uint64"),
        (_found(frequencies=np.array([0.3])), "shape"),
        (_found(frequencies=np.array([0.3, np.nan])), "non-finite"),
        (_found(items=np.array([1, 1], dtype=np.uint64)), "an item twice"),
        (_found(k=1), "more than the k = 1"),
        (_found(bits_per_user=-1.0), "negative bits_per_user"),
    ]:
        with pytest.raises(PluginOutputError, match=match):
            checked_identified("p", bad)
    with pytest.raises(PluginOutputError, match="not IdentifiedItems"):
        checked_identified("p", object())


def test_identified_itemsets_are_checked_and_frozen_with_their_table():
    from ldpbench.boundary.values import checked_result, frozen_result
    from ldpbench.types import IdentifiedItemsets

    def found(offsets, members):
        return IdentifiedItemsets(
            items=np.arange(2, dtype=np.uint64),
            frequencies=np.array([0.4, 0.3]),
            n=10,
            epsilon=1.0,
            k=2,
            itemset_offsets=np.array(offsets, dtype=np.int64),
            itemset_members=np.array(members, dtype=np.uint64),
        )

    ok = found([0, 1, 3], [5, 2, 7])
    assert checked_result("p", ok, 5) is ok and ok.itemsets() == [(5,), (2, 7)] and ok.result == "identified-itemsets"
    with pytest.raises(ValueError, match="read-only"):
        frozen_result(ok).itemset_members[0] = 3
    assert found([0, 1, 3], [5, 2, 7]).frequencies_digest() != found([0, 2, 3], [5, 2, 7]).frequencies_digest()
    for offsets, members in [([0, 1], [5]), ([0, 0, 3], [5, 2, 7]), ([0, 1, 2], [5, 2, 7]), ([1, 2, 3], [5, 2, 7])]:
        with pytest.raises(PluginOutputError, match="itemset table"):
            checked_result("p", found(offsets, members), 5)
