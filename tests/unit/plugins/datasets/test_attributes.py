"""The tuple datasets (plugins/datasets/attributes.py): the shipped Adult attributes, the copula population."""

from __future__ import annotations

import hashlib
from importlib import resources

import numpy as np
import pytest

from ldpbench.errors import UsageError
from ldpbench_plugins.datasets.attributes import AdultAttributes, CorrelatedAttributes, correlated_rows, zipf_cdf


def test_the_shipped_file_is_the_one_its_provenance_note_names():
    raw = resources.files("ldpbench_data").joinpath("adult-attributes.tsv.gz").read_bytes()
    assert hashlib.sha256(raw).hexdigest() == "852a0d0ae798c359dfc78b9f9766ca28b2a3763c21f2ee528c295e12fd7e25ec"


def test_adult_holds_all_48842_records_with_ten_attributes():
    pop = AdultAttributes().load(np.random.default_rng(0))
    attrs = pop.attributes
    assert pop.record == "tuple" and pop.n == 48_842
    assert attrs.names[0] == "age" and attrs.names[-1] == "income"
    assert attrs.sizes == (7, 9, 16, 7, 15, 6, 5, 2, 42, 2)
    sex = attrs.marginal_counts(attrs.index("sex"))
    assert dict(zip(attrs.labels[attrs.index("sex")], sex.tolist())) == {"Female": 16_192, "Male": 32_650}
    income = attrs.marginal_counts(attrs.index("income"))
    assert income.tolist() == [37_155, 11_687]  # UCI's published class split of adult.data + adult.test


def test_adult_takes_the_named_attributes_in_the_order_given_and_refuses_unknown_ones():
    pop = AdultAttributes(attributes="sex, race").load(np.random.default_rng(0))
    assert pop.attributes.names == ("sex", "race") and pop.attributes.sizes == (2, 5) and pop.d == 7
    with pytest.raises(UsageError, match="colour"):
        AdultAttributes(attributes="sex,colour").load(np.random.default_rng(0))


def test_the_copula_population_has_zipf_marginals_and_the_chosen_dependence():
    rng = np.random.default_rng(11)
    rows = correlated_rows(20_000, 3, 8, 1.0, 0.0, rng)
    pmf = np.diff(np.concatenate([[0.0], zipf_cdf(8, 1.0)]))
    freq = np.bincount(rows[:, 1], minlength=8) / 20_000
    # each frequency's sd is at most sqrt(0.25 / 20000) = 0.0035: 0.015 is more than 4 sigma
    np.testing.assert_allclose(freq, pmf, atol=0.015)
    independent = np.corrcoef(rows.T)[0, 1]
    dependent = np.corrcoef(correlated_rows(20_000, 3, 8, 1.0, 0.8, rng).T)[0, 1]
    # rank correlation of independent columns: sd ~ 1/sqrt(n) = 0.007; at rho 0.8 it is ~0.7
    assert abs(independent) < 0.04 and dependent > 0.5


def test_the_copula_population_is_a_fixed_workload():
    a = CorrelatedAttributes(n=500, a=2, d=4).load(np.random.default_rng(1))
    b = CorrelatedAttributes(n=500, a=2, d=4).load(np.random.default_rng(2))
    assert np.array_equal(a.attributes.rows, b.attributes.rows) and a.d == 8 and a.n == 500


def test_adult_over_rounds_starts_from_adult_and_redraws_whole_rows():
    from ldpbench_plugins.datasets.attributes import AdultAttributesRounds

    base = AdultAttributes(attributes="age,sex").load(np.random.default_rng(0)).attributes
    pop = AdultAttributesRounds(attributes="age,sex", rounds=4, r=0.25).load(np.random.default_rng(1))
    seq = pop.attributes.rounds
    assert seq.shape == (4, 48842, 2) and np.array_equal(seq[0], base.rows) and pop.info["stand_in"]
    moved = np.any(seq[1:] != seq[:-1], axis=2).mean(axis=1)
    # a user moves w.p. 0.25 and lands on a different (age, sex) cell w.p. 1 - sum p_c^2 (0.885):
    # 0.221 of 48,842 users per round, sd 0.0019; 6 sigma either side. Moving each attribute
    # w.p. r on its own (about 0.29) or only once (rounds 2, 3 at 0) fails
    _, cells = np.unique(base.rows[:, 0] * 2 + base.rows[:, 1], return_counts=True)
    expected = 0.25 * (1 - ((cells / cells.sum()) ** 2).sum())
    assert np.all(np.abs(moved - expected) < 0.0115), (moved, expected)
    again = AdultAttributesRounds(attributes="age,sex", rounds=4, r=0.25).load(np.random.default_rng(1))
    assert np.array_equal(again.attributes.rounds, seq)
    static = AdultAttributesRounds(attributes="age,sex", rounds=3, r=0.0).load(np.random.default_rng(1))
    assert np.all(static.attributes.rounds == base.rows[None])
