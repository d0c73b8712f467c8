"""An aggregate path declared exact per item (``exact_marginals``) does not put an "approximate"
note on rows whose metric depends on the marginals only, unprocessed (issue 29); everywhere else the
note stands, naming the claim."""

from __future__ import annotations

import ldpbench


def test_the_approximate_note_appears_only_where_the_joint_law_matters(tmp_path):
    spec = {
        "name": "marginal-notes",
        "seed": 4,
        "repeats": 2,
        "datasets": [{"zipf": {"d": 32, "n": 20_000, "s": 1.3}}],
        "epsilons": [1],
        "oracles": [{"ss": {"aggregate": "marginal"}}, "ss"],
        "pipelines": ["base", "norm-sub"],
        "metrics": ["mse", "l1", {"ndcg": {"k": 5}}],
    }
    outcome = ldpbench.run(spec, tmp_path / "r", workers=1)
    assert outcome.failed_rows == 0, outcome.errors
    notes = {(r["oracle"], r["pipeline"], r["metric"]): r["notes"] for r in outcome.leaderboard.iter_rows(named=True)}
    marginal = "ss(aggregate=marginal)"
    assert notes[(marginal, "base", "mse")] is None and notes[(marginal, "base", "l1")] is None
    for key in [(marginal, "base", "ndcg(k=5)"), (marginal, "norm-sub", "mse"), (marginal, "norm-sub", "l1")]:
        assert "draws each support count from its exact law but not their joint law" in notes[key], key
    assert not any(note for (oracle, _, _), note in notes.items() if oracle == "ss")  # the exact path
