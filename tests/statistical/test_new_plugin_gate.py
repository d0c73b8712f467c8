"""The leaderboard gate that ``ldpbench new-plugin`` writes sees a +10% variance regression of its
example oracle, and stays quiet on a mere change of seed.

The generated repository's spec (``specs/ci.yaml``) and its example k-RR oracle are taken as
written. A baseline is computed from them (the spec's own seed), then the gate is run as the
generated test runs it (``check_leaderboard``: threshold 5%, z = 5) under other seeds:

- 10 clean runs: the oracle unchanged. None may fail the gate.
- 10 regressed runs: the same oracle, but spending a smaller budget eps' < eps chosen so that the
  variance of its estimates is exactly 1.1 times the original at the spec's d. For k-RR the
  summed variance of the frequency estimates is ``(p(1-p) + (d-1) q(1-q)) / (n (p-q)^2)`` whatever
  the data (Wang et al., USENIX Security 2017, section 4.1, summed over the d items), so the MSE
  of the ``base`` pipeline rises by exactly 10% in expectation. At least 9 of 10 must fail the
  gate, on rows of the changed oracle only.

Why this is not a coin toss: at d = 1,024 and 40 repeats the MSE of a run has a relative standard
error of about sqrt(2 / (d * repeats)) = 0.7%, so a +10% regression shows as +10% +- 1% per row
against a detectable change of max(5%, 5-sigma band of about 5%): more than 4 sigma inside on each
of the two base rows (eps 1 and 4). A clean run moves a row by 0 +- 1%, 5 sigma below the band.
The injected ratio itself is checked: the regressed runs' base-row MSE over the clean runs' is
1.10 within 5 sigma of its Monte Carlo error.
"""

from __future__ import annotations

import math
import shutil
import statistics

import pytest
import yaml
from scipy.optimize import brentq

from ldpbench.leaderboard.compare import Status
from ldpbench.scaffold import new_plugin
from ldpbench.testing.gate import check_leaderboard

RUNS = 10
CLEAN_SEEDS = range(101, 101 + RUNS)
REGRESSED_SEEDS = range(201, 201 + RUNS)
VARIANCE_FACTOR = 1.10
NAME = "my-oracle"
#: The line of the generated oracle that turns epsilon into its probabilities.
BUDGET_LINE = "        t = math.exp(-epsilon)\n"


def krr_summed_variance(epsilon: float, d: int) -> float:
    """n times the summed variance of k-RR's d frequency estimates (independent of the data)."""
    t = math.exp(-epsilon)
    p, q = 1 / (1 + (d - 1) * t), t / (1 + (d - 1) * t)
    return (p * (1 - p) + (d - 1) * q * (1 - q)) / (p - q) ** 2


def weaker_budget(epsilon: float, d: int, factor: float) -> float:
    """The eps' < eps at which k-RR's summed variance is ``factor`` times that at eps."""
    target = factor * krr_summed_variance(epsilon, d)
    return brentq(lambda e: krr_summed_variance(e, d) - target, epsilon / 4, epsilon, xtol=1e-14)


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """The generated repository, its oracle as a loose plugin (clean and regressed), and a baseline."""
    root = tmp_path_factory.mktemp("scaffold-gate")
    repo = new_plugin(NAME, "oracle", root / "repo", baseline=False, init_git=False).root
    spec_path = repo / "specs" / "ci.yaml"
    spec = yaml.safe_load(spec_path.read_text())
    (dataset,) = spec["datasets"]
    d = dataset["zipf"]["d"]
    source = (repo / "ldpbench_my_oracle" / "__init__.py").read_text()
    assert source.count(BUDGET_LINE) == 1, "the generated oracle no longer derives p and q as this test expects"
    budgets = {float(e): weaker_budget(float(e), d, VARIANCE_FACTOR) for e in spec["epsilons"]}
    regressed = source.replace(BUDGET_LINE, f"        t = math.exp(-{budgets!r}[float(epsilon)])\n")
    folders = {}
    for label, text in (("clean", source), ("regressed", regressed)):
        folders[label] = root / label
        folders[label].mkdir()
        (folders[label] / "my_oracle.py").write_text(text)
    baseline = root / "baseline" / "leaderboard.json"
    made = check_leaderboard(
        spec_path, baseline, out=root / "runs" / "baseline", plugins_dirs=[folders["clean"]], update=True
    )
    assert made.updated and baseline.is_file()
    return root, spec_path, baseline, folders, spec


def _gate(generated, label: str, seed: int):
    root, spec_path, baseline, folders, _ = generated
    out = root / "runs" / f"{label}-{seed}"
    result = check_leaderboard(spec_path, baseline, out=out, plugins_dirs=[folders[label]], seed=seed)
    shutil.rmtree(out)  # keep the temporary folder small
    return result


def _base_rows(result):
    """(epsilon -> current MSE) of the example oracle's base pipeline."""
    return {c.key[2]: c.current["mean"] for c in result.comparison.changes if c.key[3] == NAME and c.key[4] == "base"}


def test_the_generated_gate_catches_a_ten_percent_variance_regression_and_no_noise(generated):
    spec = generated[4]
    assert spec["repeats"] == 40 and spec["datasets"][0]["zipf"]["d"] == 1024  # what the docstring reasons on
    clean = [_gate(generated, "clean", seed) for seed in CLEAN_SEEDS]
    regressed = [_gate(generated, "regressed", seed) for seed in REGRESSED_SEEDS]

    alarms = [seed for seed, r in zip(CLEAN_SEEDS, clean) if r.regressed]
    caught = [seed for seed, r in zip(REGRESSED_SEEDS, regressed) if r.regressed]
    print(f"clean runs failing the gate: {len(alarms)} of {RUNS}; +10% variance caught in {len(caught)} of {RUNS}")
    assert not alarms, f"false alarms under seeds {alarms}:\n" + "\n".join(r.markdown for r in clean if r.regressed)
    assert len(caught) >= 9, f"+10% variance caught in only {len(caught)} of {RUNS} runs"
    for r in regressed:  # only the changed oracle's rows can be worse, and only ever worse
        flagged = [c for c in r.comparison.changes if c.status is not Status.UNCHANGED]
        assert all(c.key[3] == NAME and c.status is Status.WORSE for c in flagged), r.markdown
    # What the gate says it can see on those rows is below the +10% it caught.
    seen = [
        c.detectable_relative for r in clean for c in r.comparison.changes if c.key[3] == NAME and c.key[4] == "base"
    ]
    assert max(seen) < VARIANCE_FACTOR - 1, seen

    # The injected regression is what it claims: +10% MSE on the base rows. Each run's MSE has a
    # relative standard error near sqrt(2 / (d * repeats)) = 0.7%, so the ratio of two means of
    # 10 runs has one of about 0.32%; 5 sigma is 1.6%.
    for eps in spec["epsilons"]:
        clean_mse = statistics.fmean(_base_rows(r)[eps] for r in clean)
        regressed_mse = statistics.fmean(_base_rows(r)[eps] for r in regressed)
        assert regressed_mse / clean_mse == pytest.approx(VARIANCE_FACTOR, abs=0.016), eps
