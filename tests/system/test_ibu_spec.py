"""ibu and mle-rr in specs: refused at validate where the oracle lacks what they need, run otherwise."""

from __future__ import annotations

import json
import re
import textwrap

import pytest

import ldpbench

#: A third-party oracle that declares no likelihood: OUE's sampler, but its tags say nothing of
#: its support bits (as an oracle whose counts are not Bernoulli sums would, e.g. SHE).
OPAQUE = textwrap.dedent(
    '''
    import dataclasses

    from ldpbench import hookimpl
    from ldpbench_plugins.oracles.oue import OUE


    class Opaque(OUE):
        """OUE that does not declare bernoulli_support."""

        name = "opaque"

        def tags(self):
            return dataclasses.replace(super().tags(), bernoulli_support=False, default=False)


    @hookimpl
    def ldpbench_register_oracles(registry):
        registry.register(Opaque)
    '''
)

SPEC = """\
name: ibu-capabilities
datasets: [{{zipf: {{d: 20, n: 500}}}}]
{budget}
oracles:
  - grr
  - {oracle}
pipelines:
  - base
  - [{step}, norm-sub]
"""


def _validate(tmp_path, run_cli, oracle, step, budget="epsilons: [1]"):
    (tmp_path / "plugs").mkdir(exist_ok=True)
    (tmp_path / "plugs" / "opaque.py").write_text(OPAQUE)
    (tmp_path / "spec.yaml").write_text(SPEC.format(oracle=oracle, step=step, budget=budget))
    return run_cli("validate", "spec.yaml", "--plugins-dir", "plugs")


def test_ibu_after_an_oracle_without_a_likelihood_is_refused_with_its_line(tmp_path, run_cli):
    out = _validate(tmp_path, run_cli, "opaque", "ibu")
    assert out.returncode == 2, out.stdout + out.stderr
    line = next(line for line in out.stderr.splitlines() if "post-processor 'ibu'" in line)
    assert line.startswith("spec.yaml:9: ") and "oracle 'opaque'" in line, line
    assert "bernoulli_support = False" in line and "Traceback" not in out.stderr
    assert "oracle 'grr'" not in out.stderr


@pytest.mark.parametrize("oracle", ["oue", "olh", "hr"])
def test_ibu_after_every_builtin_oracle_validates(tmp_path, run_cli, oracle):
    out = _validate(tmp_path, run_cli, oracle, "ibu")
    assert out.returncode == 0, out.stderr


def test_mle_rr_is_refused_after_a_channel_that_is_not_randomized_response(tmp_path, run_cli):
    out = _validate(tmp_path, run_cli, "hr", "mle-rr")
    assert out.returncode == 2, out.stdout + out.stderr
    assert re.search(
        r"spec\.yaml:9: post-processor 'mle-rr' needs a randomized-response channel.*oracle 'hr'", out.stderr
    )
    out = _validate(tmp_path, run_cli, "oue", "mle-rr")
    assert out.returncode == 2 and "finite_output = False" in out.stderr, out.stderr
    assert _validate(tmp_path, run_cli, "grr", "mle-rr").returncode == 0


def test_mle_rr_is_refused_with_personalized_budgets(tmp_path, run_cli):
    users = "users: [{epsilon: 1, count: 200}, {epsilon: 3, count: 100}]"
    out = _validate(tmp_path, run_cli, "grr", "mle-rr", budget=users)
    assert out.returncode == 2, out.stdout + out.stderr
    assert re.search(
        r"spec\.yaml:9: post-processor 'mle-rr' is the closed form for one budget.*personalized", out.stderr
    )
    ok = _validate(tmp_path, run_cli, "grr", "ibu", budget=users)
    assert ok.returncode == 0, ok.stderr


# 4 oracles x 2 budgets x 3 repeats through the runner: ~15 s each on a busy box
@pytest.mark.parametrize("simulation", ["aggregate", "per-user"])
def test_a_spec_runs_ibu_after_oue_olh_grr_and_hr(tmp_path, simulation):
    spec = {
        "name": f"ibu-{simulation}",
        "seed": 5,
        "repeats": 3,
        "simulation": simulation,
        "datasets": [{"zipf": {"d": 64, "n": 20_000, "s": 1.3}}],
        "epsilons": [0.5, 2],
        "oracles": ["oue", "olh", "grr", "hr"],
        "pipelines": ["base", "ibu"],
        "metrics": ["mse"],
    }
    outcome = ldpbench.run(spec, tmp_path / "out", workers=1)
    assert outcome.failed_rows == 0, outcome.errors
    rows = [json.loads(line) for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines()[1:]]
    ibu_rows = [r for r in rows if r["pipeline"] == "ibu"]
    assert len(ibu_rows) == 4 * 2 * 3
    # the aggregate path gives OUE and OLH only support counts, GRR and HR the report histogram
    expected = {"oue": "per-item", "olh": "per-item", "grr": "full", "hr": "full"}
    for r in ibu_rows:
        assert json.loads(r["info"]) == {"likelihood": expected[r["oracle"]]}, r
    board = {(r["oracle"], r["pipeline"], r["epsilon"]): r["mean"] for r in outcome.leaderboard.iter_rows(named=True)}
    for oracle in expected:  # at eps = 0.5 the unbiased estimate is far off the simplex; IBU is not
        assert board[(oracle, "ibu", 0.5)] < board[(oracle, "base", 0.5)]
