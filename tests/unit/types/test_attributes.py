"""Tuple records (ldpbench/types/attributes.py): users' rows, marginals, sampling, per-output truth."""

from __future__ import annotations

import numpy as np
import pytest

from ldpbench.types import Population
from ldpbench.types.attributes import Attributes, output_d, output_truth, tuple_population


def small() -> Attributes:
    rows = np.array([[0, 2], [1, 0], [1, 2], [0, 1], [1, 2]])
    return Attributes(("x", "y"), (2, 3), rows, (("a", "b"), ("u", "v", "w")))


def test_a_tuple_population_holds_its_marginals_end_to_end_and_counts_users_by_rows():
    pop = tuple_population(small(), name="toy")
    assert pop.record == "tuple" and pop.n == 5 and pop.d == 5
    assert pop.counts.tolist() == [2, 3, 1, 1, 3]
    np.testing.assert_allclose(pop.frequencies, [0.4, 0.6, 0.2, 0.2, 0.6])
    assert pop.labels == ["x=a", "x=b", "y=u", "y=v", "y=w"]


def test_the_truth_of_an_output_is_its_attributes_marginal_and_any_other_label_the_population():
    pop = tuple_population(small())
    y = output_truth(pop, "y")
    assert y.record == "item" and y.n == 5 and y.counts.tolist() == [1, 1, 3] and y.labels == ["u", "v", "w"]
    assert output_d(pop, "y") == 3 and output_d(pop, "x") == 2
    assert output_truth(pop, "z") is pop and output_d(pop, "z") == 5
    item = Population(np.array([3, 4]))
    assert output_truth(item, "x") is item and output_d(item, "x") == 2


def test_joint_counts_expand_to_rows_in_row_major_order():
    joint = np.array([[1, 0, 2], [0, 1, 0]])
    attrs = Attributes.from_joint(joint, ("x", "y"))
    assert attrs.sizes == (2, 3) and attrs.rows.tolist() == [[0, 0], [0, 2], [0, 2], [1, 1]]
    assert not attrs.rows.flags.writeable


def test_sampling_keeps_whole_rows_and_recomputes_the_marginals():
    rng = np.random.default_rng(3)
    rows = np.stack([np.arange(1000) % 4, (np.arange(1000) // 4) % 5], axis=1)
    pop = tuple_population(Attributes(("x", "y"), (4, 5), rows))
    sub = pop.sample(100, rng)
    assert sub.n == 100 and sub.attributes.rows.shape == (100, 2)
    assert np.array_equal(sub.counts, sub.attributes.counts())
    original = {tuple(r) for r in rows.tolist()}
    assert all(tuple(r) in original for r in sub.attributes.rows.tolist())


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Attributes(("x", "x"), (2, 2), np.zeros((1, 2), int)), "distinct"),
        (lambda: Attributes(("x", "y"), (2, 2), np.array([[0, 2]])), "outside"),
        (lambda: Attributes(("x",), (2, 2), np.zeros((1, 2), int)), "one name per"),
        (lambda: Attributes(("a:b",), (2,), np.zeros((1, 1), int)), "without ':'"),
        (lambda: Population(np.array([1, 1]), record="tuple"), "needs 'attributes'"),
        (lambda: Population(np.array([9, 9, 9, 9, 9]), record="tuple", attributes=small()), "marginal histograms"),
        (lambda: Population(np.array([2, 3]), attributes=small()), "for record 'tuple'"),
    ],
)
def test_inconsistent_tuples_are_refused(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_rows_over_rounds_and_the_truth_of_each_rounds_output():
    rows = np.array([[0, 1], [1, 0], [1, 1]])
    later = np.array([[0, 0], [1, 0], [0, 1]])
    attrs = Attributes(("a", "b"), (2, 2), rows, rounds=np.stack([rows, later]))
    pop = tuple_population(attrs, name="p")
    assert attrs.T == 2 and not attrs.rounds.flags.writeable
    np.testing.assert_array_equal(attrs.round_items(1), [[1, 0, 1], [0, 0, 1]])
    np.testing.assert_array_equal(output_truth(pop, "a:round-2").counts, [2, 1])
    np.testing.assert_array_equal(output_truth(pop, "b:round-1").counts, [1, 2])
    np.testing.assert_array_equal(output_truth(pop, "b:rounds-mean").counts, [3, 3])  # n T users
    assert output_truth(pop, "a:round-3") is pop and output_truth(pop, "c:round-1") is pop
    assert output_d(pop, "b:round-2") == 2
    assert attrs.take(np.array([2])).rounds.tolist() == [[[1, 1]], [[0, 1]]]
    with pytest.raises(ValueError, match="rounds\\[0\\] must be the rows"):
        Attributes(("a", "b"), (2, 2), rows, rounds=np.stack([later, rows]))
    with pytest.raises(ValueError, match="outside"):
        Attributes(("a", "b"), (2, 2), rows, rounds=np.stack([rows, later + 1]))
