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
