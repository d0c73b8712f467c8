"""Blender's head list ([A17]; plugins/protocols/_blender_headlist.py): the threshold, the layout, wildcard records."""

from __future__ import annotations

import math

import numpy as np
import pytest
from support import HL_PARENTS, HL_RECORDS, W_PARENTS, head_list, wildcard_head_list

from ldpbench.errors import ParamError
from ldpbench_plugins.protocols._blender_headlist import HeadList, create_head_list, threshold

# -- constants (A14) -------------------------------------------------------------------------


def test_threshold_constants():
    assert threshold(4, 1e-5) == pytest.approx(6.75646, abs=5e-6)
    assert threshold(4, 1e-7) == pytest.approx(9.05905, abs=5e-6)
    # m_O = 1: tau = 1 - 2 ln(delta)/eps
    assert threshold(2.5, 1e-3) == pytest.approx(1 - 2 * math.log(1e-3) / 2.5, rel=1e-14)
    # general m_O: b_S = 2 m_O / eps, tau = b_S (ln(e^{eps/2} + m_O - 1) - ln delta)
    assert threshold(3, 1e-4, m_o=3) == pytest.approx(2 * 3 / 3 * (math.log(math.exp(1.5) + 2) - math.log(1e-4)))


def test_threshold_rejects_bad_budgets():
    with pytest.raises(ParamError):
        threshold(float("inf"), 1e-5)
    with pytest.raises(ParamError):
        threshold(4, 0.0)
    with pytest.raises(ParamError):
        threshold(4, 1.0)


@pytest.mark.parametrize("m_o", [1, 2, 5])
def test_threshold_is_at_least_m_o(m_o):
    # tau = m_O + b_S (ln(1 + (m_O - 1) e^{-eps/2}) - ln delta) >= m_O >= 1 whenever delta < 1, so
    # Fig. 3's "assert tau >= 1" cannot fire for valid parameters (the check stays, defensively).
    for eps in (0.01, 1, 4, 50):
        for delta in (1e-9, 1e-5, 0.5, 0.999999):
            assert threshold(eps, delta, m_o) >= m_o


# -- LocalAlg's exact law and its privacy (A14) -------------------------------------------------


def test_head_list_layout():
    hl = head_list()
    np.testing.assert_array_equal(hl.url_counts, [4, 3, 5, 1])
    assert hl.k == 4 and hl.n_slots == 13 and hl.star_slot == 12
    np.testing.assert_array_equal(hl.star_url_slots, [3, 6, 11])
    slot = hl.slot_of(HL_PARENTS)
    np.testing.assert_array_equal(slot[:9], hl.record_slots)
    np.testing.assert_array_equal(slot[9:], [3, 6, 12, 12])  # <q0,*>, <q1,*>, <*,*>, <*,*>
    assert len(set(hl.record_slots.tolist())) == 9


def test_head_list_layout_in_list_order():
    parents = np.array([0, 0, 1, 2, 2, 2, 3])
    hl = HeadList.build(np.array([5, 0, 3, 1, 2]), parents)
    np.testing.assert_array_equal(hl.queries, [2, 0, 1])  # by first appearance
    np.testing.assert_array_equal(hl.record_slots, [0, 3, 1, 4, 6])
    np.testing.assert_array_equal(hl.slot_of(parents), [3, 4, 6, 1, 2, 0, 8])


# -- opt-in side ------------------------------------------------------------------------------


def test_create_head_list_considers_only_present_records():
    rng = np.random.default_rng(0)
    counts = np.zeros(1000, dtype=np.int64)
    counts[:10] = 100  # far above tau = 6.76 (b = 0.5)
    kept = create_head_list(counts, 4, 1e-5, 1, rng)
    np.testing.assert_array_equal(kept, np.arange(10))


# -- (query, *) records: query-only data ----------------------------------------------------------


def test_head_list_with_wildcard_records_gives_them_the_q_star_slot():
    hl = wildcard_head_list()
    # q0: (q0, u) and <q0, *> = record 1; q1: only <q1, *> = record 3; q2: (q2, u) and <q2, *>; <*, *>
    np.testing.assert_array_equal(hl.url_counts, [2, 1, 2, 1])
    assert hl.n_slots == 6
    np.testing.assert_array_equal(hl.record_slots, [0, 1, 2, 3])
    np.testing.assert_array_equal(hl.star_url_slots, [1, 2, 4])
    np.testing.assert_array_equal(hl.outside_slots, [4, 5])  # <q2, *> and <*, *> hold no listed record
    # unlisted (q0, u') falls into <q0, *> (Fig. 6 lines 10-11), unlisted (q1, u) into <q1, *>
    np.testing.assert_array_equal(hl.slot_of(W_PARENTS), [0, 1, 1, 2, 2, 3, 5])
    # all records of a query-only population are wildcards: one slot per query
    flat = HeadList.build(np.array([4, 0, 2]), np.arange(6), wildcard=True)
    np.testing.assert_array_equal(flat.url_counts, [1, 1, 1, 1])
    np.testing.assert_array_equal(flat.record_slots, [0, 1, 2])
    np.testing.assert_array_equal(flat.outside_slots, [3])
    with pytest.raises(ValueError, match="more than one"):
        HeadList.build(np.array([0, 1]), np.array([0, 0]), wildcard=True)


def test_record_structured_output_does_not_depend_on_the_wildcard_support():
    # Without wildcard records the layout is the one of the plain head list.
    plain, marked = head_list(), HeadList.build(HL_RECORDS, HL_PARENTS, wildcard=np.zeros(9, bool))
    for attr in ("url_counts", "record_slots", "star_url_slots", "offsets"):
        np.testing.assert_array_equal(getattr(plain, attr), getattr(marked, attr))
    np.testing.assert_array_equal(plain.outside_slots, np.append(plain.star_url_slots, plain.star_slot))
