"""No built-in plugin writes into its inputs (issue 10).

Every array handed to a plugin is now read-only, so a built-in that wrote into its input would
fail its rows here (``assignment destination is read-only``) instead of silently changing the
numbers of the pipelines after it. Every built-in oracle, post-processor and metric, both
simulation paths, and the Blender protocol with its outputs, on small data.
"""

from __future__ import annotations

import json
import textwrap

import pytest
from support import builtin_plugins

from ldpbench.cli import main
from ldpbench.types.domain import FREQUENCIES

ORACLE_SPEC = """\
name: builtins
seed: 4
repeats: 1
simulation: {simulation}
datasets:
  - zipf: {{d: 16, n: 2000, s: 1.1}}
epsilons: [2]
oracles: [{oracles}]
pipelines: [{pipelines}]
metrics: [{metrics}]
{attacks}"""

#: The poisoning metrics score an attacked cell (docs/poisoning.md): their specs carry an honest
#: attack every oracle takes (RIA) and the unattacked control.
ATTACKS = "attacks: [none, ria]\nbeta: 0.05\ntargets: {count: 2}\n"

BLENDER_SPEC = """\
name: blender-builtins
seed: 4
repeats: 1
datasets:
  - synthetic-search: {users: 20000, queries: 500}
epsilons: [4]
oracles: [{blender: {head_list_size: 20}}]
pipelines: [base, norm-sub, base-cut, post-pos]
metrics: [l1, mse, {ndcg: {k: 10}}]
"""


def _names(kind):
    return [i.name for i in builtin_plugins().registry(kind)]


def _runs(tmp_path, simulation):
    """Every built-in oracle with every post-processor it can feed: a step goes after the oracles
    whose tags give what its tags require (``validate`` refuses the others: a capability, not a
    fault) -- EM after a finite output, IBU after a finite output or Bernoulli support counts,
    the closed-form MLE of randomized response after a randomized-response channel, MLE-Apx
    (a pure protocol's p*, q*) after the pure oracles."""
    plugins = builtin_plugins()
    oracles = [i.cls(d=16, epsilon=2.0) for i in plugins.registry("oracle")]
    steps = [i.cls() for i in plugins.registry("postprocessor")]

    def feeds(oracle, step):
        have, need = oracle.tags(), step.tags()
        # EM on the aggregate path also needs the histogram sampler (pgr offers EM per user only)
        finite = have.finite_output and (simulation == "per-user" or have.aggregate_histogram)
        if need.requires_randomized_response and (not finite or oracle.channel().tags().randomized_response is None):
            return False
        if need.requires_channel and not finite:
            return False
        if need.requires_pure and have.real_valued_counts:
            return False
        if need.requires_reports and (simulation != "per-user" or not have.support_matrix):
            return False
        if need.requires_itemset_reports and abs(oracle.p_star + (oracle.d - 1) * oracle.q_star - 1) <= 1e-9:
            return False
        return not need.requires_likelihood or finite or have.bernoulli_support

    groups: dict[tuple[str, ...], list[str]] = {}
    for step in steps:
        fed = tuple(o.name for o in oracles if feeds(o, step))
        groups.setdefault(fed, []).append(step.name)
    # Every metric that scores what an oracle returns (a frequency vector); those of identified
    # items (heavy hitters) are refused after an oracle at validation, which is right.
    scoring = [i.cls().tags() for i in plugins.registry("metric")]
    names_of = [i.name for i in plugins.registry("metric")]
    plain = ", ".join(n for n, t in zip(names_of, scoring) if FREQUENCIES in t.results and not t.poisoning)
    poisoned = ", ".join(n for n, t in zip(names_of, scoring) if FREQUENCIES in t.results and t.poisoning)
    for k, (names, pipes) in enumerate(sorted(groups.items())):
        if not names:  # a step no oracle feeds on this path (detect-fake-users in aggregate runs)
            continue
        spec = ORACLE_SPEC.format(
            simulation=simulation, oracles=", ".join(names), pipelines=", ".join(pipes), metrics=plain, attacks=""
        )
        (tmp_path / f"spec{k}.yaml").write_text(spec)
        yield tmp_path / f"spec{k}.yaml", tmp_path / f"out{k}"
    # The poisoning metrics, on attacked cells (the post-processors were all run above), with the
    # detection defense where it runs (it flags reports, which the detection metrics read).
    pipes = "base, norm-sub" + (", detect-fake-users" if simulation == "per-user" else "")
    spec = ORACLE_SPEC.format(
        simulation=simulation, oracles="grr, oue", pipelines=pipes, metrics=poisoned, attacks=ATTACKS
    )
    if simulation == "per-user":
        spec = spec.replace("oracles: [grr, oue]", "oracles: [oue, olh]")
    (tmp_path / "poisoned.yaml").write_text(spec)
    yield tmp_path / "poisoned.yaml", tmp_path / "out-poisoned"


@pytest.mark.parametrize("simulation", ["aggregate", "per-user"])
def test_every_builtin_oracle_post_processor_and_metric_leaves_its_inputs_alone(tmp_path, capsys, simulation):
    for spec, out in _runs(tmp_path, simulation):
        code = main(["run", str(spec), "--out", str(out), "--workers", "1", "--no-progress"])
        err = capsys.readouterr().err
        assert (out / "results.jsonl").is_file(), err
        rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()[1:]]
        errors = {r["error"] for r in rows if r["error"]}
        assert not errors, errors  # no built-in writes into its inputs, nor fails on a valid input
        assert code == 0, err


def test_blender_and_its_outputs_leave_their_inputs_alone(tmp_path, capsys):
    (tmp_path / "spec.yaml").write_text(textwrap.dedent(BLENDER_SPEC))
    code = main(["run", str(tmp_path / "spec.yaml"), "--out", str(tmp_path / "out"), "--workers", "1", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 0, err
