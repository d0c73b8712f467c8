"""What the multidimensional solutions share (plugins/protocols/_multidim.py): the exact epsilon of a
whole report's law, over any two records and over records differing in one attribute; and the
spec-level refusals of a solution on one-item users and of an oracle on tuples."""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pytest

from ldpbench.errors import SpecError
from ldpbench.spec.validate import load_spec
from ldpbench_plugins.protocols._multidim import attribute_log_ratio, max_log_ratio, records_of


def test_the_log_ratios_of_a_known_law():
    # two binary attributes, each reported by binary randomized response at ln 3 (p = 3/4), independently
    rr = np.array([[0.75, 0.25], [0.25, 0.75]])
    P = np.kron(rr, rr)
    assert max_log_ratio(P) == pytest.approx(2 * math.log(3))
    assert attribute_log_ratio(P, (2, 2)) == pytest.approx(math.log(3))
    assert records_of((2, 2)) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    P[0, 3] = 0.0
    assert max_log_ratio(P) == math.inf


SPEC = """\
name: multidim
seed: 7
repeats: 1
datasets:
  - {dataset}
epsilons: [2]
oracles:
  - {mechanism}
pipelines: [base]
metrics: [mse]
"""


def _problems(tmp_path, plugins, dataset, mechanism):
    path = tmp_path / "spec.yaml"
    path.write_text(textwrap.dedent(SPEC.format(dataset=dataset, mechanism=mechanism)))
    with pytest.raises(SpecError) as info:
        load_spec(path, plugins)
    return info.value.problems


def test_validate_refuses_an_item_oracle_on_a_tuple_dataset_at_its_line(tmp_path, plugins):
    (found,) = _problems(tmp_path, plugins, "correlated-attributes: {n: 500}", "grr")
    assert found.split(": ", 1)[0].endswith("spec.yaml:8")
    assert "oracle 'grr' takes records of shape item" in found and "each hold a tuple" in found


@pytest.mark.parametrize("solution", ["spl", "smp", "rs-fd"])
def test_validate_refuses_a_multidimensional_solution_on_one_item_users_at_its_line(tmp_path, plugins, solution):
    (found,) = _problems(tmp_path, plugins, "zipf: {d: 16, n: 500}", solution)
    assert found.split(": ", 1)[0].endswith("spec.yaml:8")
    assert f"protocol '{solution}' takes records of shape tuple" in found and "each hold a item" in found
