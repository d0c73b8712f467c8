"""What a result row measures and what code produced it (ldpbench/engine/fingerprints.py): the two
fingerprints, per cell, as a run expects them."""

from __future__ import annotations

import re

from support import builtin_plugins

from ldpbench.engine.fingerprints import expected_rows, fingerprint
from ldpbench.spec.expand import expand
from ldpbench.spec.validate import load_spec_text

SPEC = """\
name: fingerprints
seed: 4
repeats: 2
datasets: [{zipf: {d: 8, n: 200, s: 1.1}}]
epsilons: [1, 2]
oracles: [grr, oue]
pipelines: [base, norm-sub]
metrics: [mse, l1]
"""


def _expected():
    spec = load_spec_text(SPEC, builtin_plugins(), "<spec>")
    cells = list(expand(spec))
    return cells, expected_rows(spec, cells)


def test_a_fingerprint_is_a_short_stable_hash_of_its_parts():
    assert re.fullmatch(r"[0-9a-f]{16}", fingerprint("grr", 1.0))
    assert fingerprint("grr", {"a": 1, "b": 2}) == fingerprint("grr", {"b": 2, "a": 1})
    assert fingerprint("grr", 1.0) != fingerprint("grr", 2.0) != fingerprint("oue", 2.0)


def test_every_cell_expects_a_row_per_pipeline_and_metric():
    cells, expected = _expected()
    assert len(cells) == 2 * 2 * 2 and set(expected) == {c.cell_id for c in cells}
    pairs = {(p, m) for p in ("base", "norm-sub") for m in ("mse", "l1")}
    assert all(set(rows) == pairs for rows in expected.values())
    for rows in expected.values():
        measured = [fp for fp, _ in rows.values()]
        assert len(set(measured)) == len(measured)  # every row measures something else
        assert all(code != fp for fp, code in rows.values())


def test_the_repeat_changes_no_fingerprint_the_budget_and_the_oracle_do():
    cells, expected = _expected()
    by_group = {}
    for c in cells:
        by_group.setdefault((c.budget.label, c.mechanism.label), []).append(expected[c.cell_id])
    assert all(len(group) == 2 and group[0] == group[1] for group in by_group.values())  # two repeats
    firsts = [group[0][("base", "mse")] for group in by_group.values()]
    assert len(set(firsts)) == len(by_group) == 4
