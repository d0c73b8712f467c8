"""The attacks of Cao, Jia & Gong (plugins/attacks/cao.py): each crafts m reports in the oracle's
own encoding, and the maximal-gain reports support what [CJG21] §3.3 says they do."""

from __future__ import annotations

import numpy as np
import pytest

from ldpbench.errors import NotApplicable
from ldpbench_plugins.oracles import _hashing

TARGETS = np.array([2, 5, 9])
CRAFTED = ("grr", "oue", "sue", "olh", "blh")


@pytest.mark.parametrize("oracle", CRAFTED)
@pytest.mark.parametrize("attack", ["input", "ria", "rpa", "mga"])
def test_every_attack_crafts_m_reports_the_oracle_aggregates(plugins, attack, oracle):
    o = plugins.create("oracle", oracle, d=12, epsilon=1.0)
    reports = plugins.create("attack", attack).craft(o, TARGETS, 37, np.random.default_rng(0))
    support = o.support_counts(reports)
    assert support.shape == (12,) and support.dtype == np.int64
    assert o.encode_reports(reports, 37).shape[0] == 37  # one message per fake user
    assert support.max() <= 37


def test_input_poisoning_spreads_the_fake_users_over_the_targets(plugins):
    o = plugins.create("oracle", "grr", d=12, epsilon=float("inf"))  # honest and exact: p* = 1
    reports = plugins.create("attack", "input").craft(o, TARGETS, 10, np.random.default_rng(0))
    assert np.bincount(reports, minlength=12)[TARGETS].tolist() == [4, 3, 3]


def test_mga_supports_every_target(plugins):
    rng = np.random.default_rng(1)
    mga = plugins.create("attack", "mga")
    grr = plugins.create("oracle", "grr", d=12, epsilon=1.0)
    assert set(mga.craft(grr, TARGETS, 50, rng).tolist()) <= set(TARGETS.tolist())
    for name in ("oue", "sue"):
        o = plugins.create("oracle", name, d=12, epsilon=1.0)
        reports = mga.craft(o, TARGETS, 50, rng)
        bits = reports.dense(12)
        assert bits[:, TARGETS].all()
        # padded with l = floor(p + (d-1) q - r) random other ones ([CJG21] §3.3)
        extra = int(np.floor(o.p_star + 11 * o.q_star - 3))
        assert (bits.sum(axis=1) == 3 + max(extra, 0)).all()
        unpadded = plugins.create("attack", "mga", {"pad": False}).craft(o, TARGETS, 5, rng).dense(12)
        assert (unpadded.sum(axis=1) == 3).all()
    olh = plugins.create("oracle", "olh", d=12, epsilon=1.0)  # g = 4: a seed hashing 3 targets together
    reports = mga.craft(olh, TARGETS, 40, rng)
    hashed = _hashing.hash_table(reports.seeds, _hashing.value_keys(TARGETS), olh.buckets)
    assert (hashed == reports.y[:, None]).all()
    one = mga.craft(olh, TARGETS[:1], 40, rng)  # one target: no search
    assert (_hashing.hash_table(one.seeds, _hashing.value_keys(TARGETS[:1]), olh.buckets)[:, 0] == one.y).all()


def test_rpa_is_uniform_on_the_report_space(plugins):
    o = plugins.create("oracle", "oue", d=8, epsilon=1.0)
    bits = plugins.create("attack", "rpa").craft(o, TARGETS[:1], 20000, np.random.default_rng(2)).dense(8)
    # each bit Bernoulli(1/2): sd of the mean 0.0035, 5 sigma
    assert np.abs(bits.mean(axis=0) - 0.5).max() < 0.018


def test_crafting_attacks_decline_an_oracle_they_do_not_know(plugins):
    o = plugins.create("oracle", "hr", d=8, epsilon=1.0)
    for name in ("rpa", "mga"):
        with pytest.raises(NotApplicable, match="does not know the reports of oracle 'hr'"):
            plugins.create("attack", name).craft(o, TARGETS[:1], 3, np.random.default_rng(0))
        assert "hr" not in plugins.create("attack", name).tags().oracles
    assert plugins.create("attack", "ria").tags().oracles == ("*",)


def test_best_seeds_finds_the_largest_multiplicity():
    """Against a brute-force count (r x r comparisons) of each seed's largest group of targets hashing
    to one value, and the smallest such value on ties."""
    from ldpbench_plugins.attacks.cao import best_seeds

    keys = _hashing.value_keys(np.arange(7))
    seeds, count, value = best_seeds(keys, 3, 2000, np.random.default_rng(5))
    table = _hashing.hash_table(seeds, keys, 3)
    per_value = np.stack([(table == v).sum(axis=1) for v in range(3)], axis=1)
    assert (count == per_value.max(axis=1)).all()
    assert (value == per_value.argmax(axis=1)).all()


def test_mga_olh_reaches_full_support_when_the_search_allows(plugins):
    """r = 10 targets, g = 3 (eps = 0.5): a seed hashes all ten together w.p. 3^-9 = 5.1e-5, so a
    search of 2^18 seeds holds none w.p. exp(-13.3) < 2e-6: every fake report supports every target
    (the theorem's assumption). With g = 56 (eps = 4) the best of 2^14 seeds hashes 3-5 together."""
    targets = np.arange(10)
    mga = plugins.create("attack", "mga")
    o = plugins.create("oracle", "olh", d=20, epsilon=0.5)
    assert o.buckets == 3
    reports = mga.craft(o, targets, 30, np.random.default_rng(8))
    assert (_hashing.hash_table(reports.seeds, _hashing.value_keys(targets), 3) == reports.y[:, None]).all()
    big = plugins.create("oracle", "olh", d=20, epsilon=4.0)
    few = plugins.create("attack", "mga", {"search": 1 << 14}).craft(big, targets, 30, np.random.default_rng(8))
    support = (_hashing.hash_table(few.seeds, _hashing.value_keys(targets), big.buckets) == few.y[:, None]).sum(1)
    assert (support == support[0]).all() and 3 <= support[0] <= 5


def test_mga_olh_without_reuse_gives_distinct_seeds_best_first(plugins):
    """``reuse: false``: the m best seeds of the search, distinct, by decreasing support, continued
    across chunks of the same cell."""
    from ldpbench_plugins.attacks.cao import best_seeds

    targets = np.arange(6)
    o = plugins.create("oracle", "olh", d=20, epsilon=2.0)  # g = 8
    mga = plugins.create("attack", "mga", {"search": 4096, "reuse": False})
    first = mga.craft(o, targets, 50, np.random.default_rng(3))
    second = mga.craft(o, targets, 50, np.random.default_rng(4))
    seeds = np.concatenate([first.seeds, second.seeds])
    assert np.unique(seeds).size == 100
    keys = _hashing.value_keys(targets)
    support = np.concatenate([(_hashing.hash_table(r.seeds, keys, 8) == r.y[:, None]).sum(1) for r in (first, second)])
    assert (np.diff(support) <= 0).all()
    _, count, _ = best_seeds(keys, 8, 4096, np.random.default_rng(3))  # the same search
    assert (support == np.sort(count)[::-1][:100]).all()
