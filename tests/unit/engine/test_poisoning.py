"""Poisoned cells (ldpbench/engine/poisoning.py, the attack path of engine/mechanism.py and
engine/simulate.py, spec/validate/attacks.py; docs/poisoning.md): the plan, the fake reports
aggregated exactly as genuine ones, the unattacked path unchanged, no path from a post-processor
to the targets, and what validate refuses (FILE:LINE)."""

from __future__ import annotations

import sys
import textwrap

import numpy as np
import pytest

import ldpbench.engine.cell as engine
from ldpbench import build_plugins, hookimpl
from ldpbench.engine.cell import CellTask, run_cell
from ldpbench.engine.poisoning import PoisoningError, poisoning_plan
from ldpbench.engine.simulate import simulate
from ldpbench.errors import SpecError
from ldpbench.spec.expand import expand
from ldpbench.spec.validate import load_spec, load_spec_text
from ldpbench.types import Poisoning, Population, PostProcessor

SPEC = """\
name: poison
seed: 3
repeats: 1
datasets: [{zipf: {d: 16, n: 4000, s: 1.1}}]
epsilons: [2]
oracles: [grr, oue, olh]
pipelines: [base]
"""


def spec_of(plugins, extra: str, oracles: str = "[grr, oue, olh]"):
    text = SPEC.replace("[grr, oue, olh]", oracles) + textwrap.dedent(extra)
    return load_spec_text(text, plugins)


def rows_of(plugins, spec, cell):
    with engine.plugins_given(plugins):
        return run_cell(CellTask(cell, tuple(spec.pipelines), tuple(spec.metrics), plugins=plugins.source))


# -- the plan ---------------------------------------------------------------------------------------


def test_random_targets_are_shared_by_every_oracle_and_attack_of_a_repeat(plugins):
    spec = spec_of(plugins, "attacks: [ria, mga]\nbeta: [0.01, 0.1]\ntargets: {count: 3}\nmetrics: [mse]\n")
    cells = list(expand(spec))
    assert len(cells) == 3 * 2 * 2
    population = Population(np.arange(16) + 1)
    plans = [poisoning_plan(c, population, population.n) for c in cells]
    assert len({tuple(p.targets) for p in plans}) == 1 and plans[0].targets.size == 3
    # m / (n + m) = beta, m rounded from the genuine n
    n = population.n
    assert sorted({p.fake_users for p in plans}) == [round(0.01 * n / 0.99), round(0.1 * n / 0.9)]
    assert not plans[0].targets.flags.writeable


def test_least_frequent_and_given_targets(plugins):
    population = Population(np.array([5, 1, 7, 1, 0, 9, 3, 2]))
    spec = spec_of(
        plugins, "attacks: [ria]\nfake_users: 10\ntargets: {count: 3, select: least-frequent}\nmetrics: [mse]\n"
    )
    plan = poisoning_plan(next(iter(expand(spec))), population, population.n)
    assert plan.targets.tolist() == [1, 3, 4] and plan.fake_users == 10
    assert plan.beta == pytest.approx(10 / (population.n + 10))
    spec = spec_of(plugins, "attacks: [ria]\nfake_users: 10\ntargets: {select: given, items: [7, 2]}\nmetrics: [mse]\n")
    assert poisoning_plan(next(iter(expand(spec))), population, population.n).targets.tolist() == [2, 7]
    spec = spec_of(plugins, "attacks: [ria]\nfake_users: 10\ntargets: {items: [15]}\nmetrics: [mse]\n")
    with pytest.raises(PoisoningError, match="outside the domain"):
        poisoning_plan(next(iter(expand(spec))), population, population.n)


# -- the fake reports go through the genuine aggregation ---------------------------------------------


@pytest.mark.parametrize("name", ["grr", "oue", "olh"])
@pytest.mark.parametrize("simulation", ["aggregate", "per-user"])
def test_fake_reports_are_added_with_the_oracles_own_aggregator(plugins, name, simulation):
    counts = np.array([50, 30, 20, 10, 5, 5, 0, 80])
    oracle = plugins.create("oracle", name, d=8, epsilon=1.5)
    fake = oracle.perturb(np.array([6, 6, 6, 2, 2]), np.random.default_rng(1))
    plain = simulate(oracle, counts, np.random.default_rng(9), simulation)
    poisoned = simulate(oracle, counts, np.random.default_rng(9), simulation, fake_reports=fake, fake_users=5)
    # The genuine draws are the unattacked cell's; the fake reports' support counts are added.
    expected = plain.support_counts + oracle.support_counts(fake)
    np.testing.assert_array_equal(poisoned.support_counts, expected)
    assert poisoned.n == counts.sum() + 5
    np.testing.assert_allclose(poisoned.frequencies, oracle.estimate(expected, counts.sum() + 5).frequencies)
    if name == "grr":  # finite output: the report histogram over all n + m reports
        np.testing.assert_array_equal(
            poisoned.report_histogram, plain.report_histogram + np.bincount(fake, minlength=8)
        )
    # no fake user: nothing differs from the unattacked estimate
    again = simulate(oracle, counts, np.random.default_rng(9), simulation, fake_reports=None, fake_users=0)
    np.testing.assert_array_equal(again.frequencies, plain.frequencies)


def test_the_unattacked_control_gives_the_unattacked_cells_numbers_and_ids(plugins):
    plain = spec_of(plugins, "metrics: [mse]\n")
    control = spec_of(plugins, "attacks: [none, mga]\nbeta: 0.05\nmetrics: [mse, frequency-gain]\n")
    plain_cells, control_cells = list(expand(plain)), list(expand(control))
    assert [c.poison for c in plain_cells] == [None] * 3
    first = rows_of(plugins, plain, plain_cells[0])[0]
    rows = rows_of(plugins, control, control_cells[0])
    assert rows[0]["oracle"] == "grr@none[targets=random(1)]"
    assert rows[0]["value"] == first["value"]  # same genuine draws
    assert (rows[0]["attack"], rows[0]["beta"], rows[0]["fake_users"], rows[0]["targets"]) == ("none", 0.0, 0, 1)
    # an unattacked cell's rows and ids are those of before attacks existed: no poison key at all
    assert not {"attack", "beta", "fake_users", "targets"} & set(first)
    assert plain_cells[0].identity == ("zipf(d=16,n=4000,s=1.1)", "2", "grr", "0", "aggregate")
    attacked = rows_of(plugins, control, control_cells[1])
    assert attacked[0]["oracle"] == "grr@mga[beta=0.05,targets=random(1)]" and attacked[0]["n"] > first["n"]
    assert attacked[0]["fake_users"] == round(0.05 * 4000 / 0.95) and attacked[0]["error"] is None
    gains = {r["oracle"]: r["value"] for r in rows + attacked if r["metric"] == "frequency-gain"}
    assert gains["grr@mga[beta=0.05,targets=random(1)]"] > gains["grr@none[targets=random(1)]"] + 0.1


# -- a defense never sees the targets -----------------------------------------------------------------

SEEN: list[str] = []


class Snoop(PostProcessor):
    """Walks every frame above it looking for the truth or the attack's plan."""

    name = "snoop"

    def apply(self, estimate, rng):
        frame = sys._getframe(1)
        while frame is not None:
            for key, value in frame.f_locals.items():
                if isinstance(value, (Population, Poisoning)):
                    SEEN.append(f"{frame.f_code.co_name}:{key}")
            frame = frame.f_back
        assert not any(isinstance(v, Poisoning) for v in vars(estimate).values())
        return estimate


def test_no_frame_above_a_defense_holds_the_targets_or_the_population(plugins):
    class Module:
        @staticmethod
        @hookimpl
        def ldpbench_register_postprocessors(registry):
            registry.register(Snoop)

    mine = build_plugins(extra=[Module])
    spec = load_spec_text(
        SPEC.replace("[base]", "[snoop]") + "attacks: [mga]\nbeta: 0.1\nmetrics: [frequency-gain]\n", mine
    )
    SEEN.clear()
    for cell in expand(spec):
        rows = rows_of(mine, spec, cell)
        assert [r["error"] for r in rows] == [None]
    assert SEEN == []


# -- validate ------------------------------------------------------------------------------------------


def problems(tmp_path, plugins, text):
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    with pytest.raises(SpecError) as info:
        load_spec(path, plugins)
    return info.value.problems


@pytest.mark.parametrize(
    ("extra", "oracles", "line", "message"),
    [
        (
            "attacks: [mga]\nbeta: 0.1\n",
            "[grr, hr]",
            9,
            "attack 'mga' is not defined for oracle 'hr' (oracles: line 6)",
        ),
        ("attacks: [mga]\nbeta: 0.1\n", "[grr, hr]", 9, "the oracles grr, oue, sue, olh, blh"),
        ("attacks:\n  - rpa\nbeta: 0.1\n", "[treehist]", 10, "not defined for protocol 'treehist'"),
        ("attacks:\n  - rpa\nbeta: 0.1\n", "[treehist]", 10, "and the protocols pem"),
        ("attacks:\n  - rpa\nbeta: 0.1\n", "[pem]", 4, "attacks need one item per user over an enumerable domain"),
        ("attacks: [ria]\nbeta: [0.1, 1.5]\n", "[grr]", 10, "beta must be a number strictly between 0 and 1"),
        ("attacks: [ria]\n", "[grr]", 9, "exactly one of 'beta'"),
        ("beta: 0.1\n", "[grr]", 9, "'beta' needs 'attacks'"),
        ("attacks: [ria]\nbeta: 0.1\ntargets: {items: [3, 99]}\n", "[grr]", 11, "target item 99 lies outside"),
        ("attacks: [ria]\nbeta: 0.1\ntargets: {count: 2, select: best}\n", "[grr]", 11, "select must be one of"),
        ("attacks: [mgaa]\nbeta: 0.1\n", "[grr]", 9, "did you mean 'mga'"),
    ],
)
def test_validate_refuses_with_file_and_line(tmp_path, plugins, extra, oracles, line, message):
    text = SPEC.replace("[grr, oue, olh]", oracles).replace(
        "datasets: [{zipf: {d: 16, n: 4000, s: 1.1}}]",
        (
            "datasets: [{zipf-bits: {n: 4000}}]"
            if oracles in ("[pem]", "[treehist]")
            else "datasets: [{zipf: {d: 16, n: 4000, s: 1.1}}]"
        ),
    )
    text += "metrics: [mse]\n" if oracles not in ("[pem]", "[treehist]") else "metrics: [topk-f1]\n"
    found = problems(tmp_path, plugins, text + extra)
    assert any(p.startswith(f"{tmp_path / 'spec.yaml'}:{line}: ") and message in p for p in found), found


def test_a_gain_metric_needs_attacks(tmp_path, plugins):
    found = problems(tmp_path, plugins, SPEC + "metrics: [mse, frequency-gain]\n")
    assert any(":8: metric 'frequency-gain' scores a poisoned cell" in p for p in found), found


def test_fake_reports_in_chunks_add_up_to_one_piece(plugins):
    counts = np.array([50, 30, 20, 10, 5, 5, 0, 80])
    oracle = plugins.create("oracle", "oue", d=8, epsilon=1.0)
    fake = [oracle.perturb(np.full(k, 6), np.random.default_rng(k)) for k in (3, 4)]
    chunked = simulate(oracle, counts, np.random.default_rng(9), "per-user", fake_users=7, fake_chunks=iter(fake))
    plain = simulate(oracle, counts, np.random.default_rng(9), "per-user")
    expected = plain.support_counts + sum(oracle.support_counts(f) for f in fake)
    np.testing.assert_array_equal(chunked.support_counts, expected)
    assert chunked.n == counts.sum() + 7


# -- a defense that reads the reports (requires_reports) --------------------------------------------

KEEP_SPEC = """\
name: keep
seed: 5
repeats: 1
simulation: per-user
datasets: [{zipf: {d: 32, n: 4000, s: 1.1}}]
epsilons: [2]
oracles: [oue]
attacks: [none, mga]
beta: 0.05
targets: {count: 6}
pipelines: [base, detect-fake-users, snoop-reports]
metrics: [frequency-gain, detection-precision, detection-recall]
"""

REPORTS_SEEN: list[tuple[str, object]] = []


class SnoopReports(Snoop):
    """Snoop that asks for the reports: what it gets is the supports, shuffled, and no label."""

    name = "snoop-reports"

    def tags(self):
        import dataclasses

        return dataclasses.replace(super().tags(), requires_reports=True)

    def apply(self, estimate, rng):
        REPORTS_SEEN.append((estimate.mechanism, estimate.report_supports))
        return super().apply(estimate, rng)


def test_kept_reports_are_shuffled_unlabelled_and_detection_is_scored_against_the_labels(plugins):
    from ldpbench.engine.poisoning import fake_report_labels

    class Module:
        @staticmethod
        @hookimpl
        def ldpbench_register_postprocessors(registry):
            registry.register(SnoopReports)

    mine = build_plugins(extra=[Module])
    spec = load_spec_text(KEEP_SPEC, mine)
    SEEN.clear()
    REPORTS_SEEN.clear()
    values = {}
    for cell in expand(spec):
        for r in rows_of(mine, spec, cell):
            assert r["error"] is None, r["error"]
            values[(r["oracle"].split("[")[0], r["pipeline"], r["metric"])] = r["value"]
        m = 0 if cell.poison.attack is None else round(0.05 * 4000 / 0.95)
        labels = fake_report_labels(cell, 4000, m)
        assert labels.sum() == m and (m == 0 or not labels[-m:].all())  # not fakes-last
    assert SEEN == []  # no frame above a defense holds the labels' carrier (Poisoning) or the truth
    assert [s.shape for _, s in REPORTS_SEEN] == [(4000, 32), (4000 + 211, 32)]
    # Cao et al.'s detection on MGA/OUE with 6 targets: every fake flagged, at most a few genuine
    # (false_alarms = 1 expected); with none flagged wrongly the gain is the unattacked one exactly.
    assert values[("oue@mga", "detect-fake-users", "detection-recall")] == 1.0
    assert values[("oue@mga", "detect-fake-users", "detection-precision")] >= 211 / (211 + 6)
    assert values[("oue@mga", "base", "detection-recall")] == 0.0  # no detecting step: nothing flagged
    # Cao et al.'s Theorem for MGA on OUE: beta (r (1 - q*)/(p* - q*) - f_T) = 0.69 - 0.05 f_T here
    assert values[("oue@mga", "base", "frequency-gain")] > 0.4
    # the genuine reports are the unattacked cell's: removing exactly the fakes gives its gain
    detected, control = (
        values[("oue@mga", "detect-fake-users", "frequency-gain")],
        values[("oue@none", "base", "frequency-gain")],
    )
    assert abs(detected - control) < 0.02
