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
    assert "oracle 'grr' takes records of shape item" in found and "each hold a tuple of attributes" in found


@pytest.mark.parametrize("solution", ["spl", "smp", "rs-fd", "rs-rfd", "l-spl", "l-smp"])
def test_validate_refuses_a_multidimensional_solution_on_one_item_users_at_its_line(tmp_path, plugins, solution):
    (found,) = _problems(tmp_path, plugins, "zipf: {d: 16, n: 500}", solution)
    assert found.split(": ", 1)[0].endswith("spec.yaml:8")
    assert f"protocol '{solution}' takes records of shape tuple" in found and "each hold one item" in found


@pytest.mark.parametrize(
    ("solution", "oracle"),
    [
        ("spl", "grr"),
        ("spl", "oue"),
        ("smp", "grr"),
        ("smp", "oue"),
        ("rs-fd", "grr"),
        ("rs-fd", "oue-z"),
        ("rs-fd", "oue-r"),
    ],
)
def test_the_whole_reports_the_code_draws_follow_the_audited_table(solution, oracle):
    # 20,000 reports of the record (1, 2) over [2] x [3] against row 5 of report_table: a chi-square
    # test failing a correct implementation with probability 1e-6
    from scipy.stats import chisquare

    from ldpbench_plugins.protocols.rsfd import RSFD
    from ldpbench_plugins.protocols.smp import SMP
    from ldpbench_plugins.protocols.spl import SPL

    cls = {"spl": SPL, "smp": SMP, "rs-fd": RSFD}[solution]
    proto, sizes, eps = cls(oracle=oracle), (2, 3), 1.0
    table = proto.report_table(sizes, eps)[5]
    reports = proto.perturb_records(np.tile([[1, 2]], (20_000, 1)), sizes, eps, np.random.default_rng(5))
    widths = [d if oracle == "grr" else 1 << d for d in sizes]
    if solution == "smp":  # (attribute, oracle row), attribute slowest
        index = np.cumsum([0] + widths)[reports[:, 0]] + reports[:, 1]
    else:
        index = np.ravel_multi_index(tuple(reports.T), widths)
    observed = np.bincount(index, minlength=table.size)
    assert observed.size == table.size
    assert chisquare(observed, 20_000 * table).pvalue > 1e-6


PIPELINE_SPEC = """\
name: multidim
seed: 7
repeats: 1
datasets:
  - correlated-attributes: {{n: 300, a: 2, d: 3}}
epsilons: [1]
oracles:
  - {mechanism}
pipelines:
  - base
  - {step}
metrics: [mse]
"""


@pytest.mark.parametrize(
    ("mechanism", "step", "lacking"),
    [
        ("rs-rfd: {oracle: oue-r}", "ibu", "output_likelihood"),
        ("rs-rfd: {oracle: oue-r}", "em", "output_channel"),
        ("rs-rfd", "mle-rr", "output_randomized_response"),
        ("rs-fd: {oracle: oue-z}", "em", "output_channel"),
        ("spl: {oracle: oue}", "mle-rr", "output_channel"),
        ("smp: {oracle: sue}", "em", "output_channel"),
    ],
)
def test_validate_refuses_a_step_the_solutions_estimates_cannot_feed_at_the_steps_line(
    tmp_path, plugins, mechanism, step, lacking
):
    # each of these fails every row at run time (measured): validate says so first, at the step
    path = tmp_path / "spec.yaml"
    path.write_text(PIPELINE_SPEC.format(mechanism=mechanism, step=step))
    with pytest.raises(SpecError) as info:
        load_spec(path, plugins)
    (found,) = info.value.problems
    assert found.split(": ", 1)[0].endswith("spec.yaml:11")
    assert f"post-processor '{step}' needs" in found and f"{lacking} = False" in found


@pytest.mark.parametrize(
    ("mechanism", "step"),
    [("rs-rfd", "ibu"), ("rs-rfd", "em"), ("rs-fd: {oracle: oue-r}", "ibu"), ("spl", "mle-rr"), ("l-spl", "ibu")],
)
def test_validate_accepts_the_steps_the_estimates_feed(tmp_path, plugins, mechanism, step):
    path = tmp_path / "spec.yaml"
    path.write_text(PIPELINE_SPEC.format(mechanism=mechanism, step=step))
    if mechanism == "l-spl":
        rounds = "adult-attributes-rounds: {attributes: 'age,sex', rounds: 2}"
        path.write_text(path.read_text().replace("correlated-attributes: {n: 300, a: 2, d: 3}", rounds))
    load_spec(path, plugins)
