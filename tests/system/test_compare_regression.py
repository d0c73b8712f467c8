"""A deliberate regression makes ``ldpbench compare`` exit 1; noise alone (another seed) does not.

Real runs, not hand-made leaderboards (``test_compare_cli.py`` has those). A third-party
post-processor ``shrink`` is loaded with ``--plugins-dir`` from one of three folders, as a plugin
repository's CI would see successive versions of its code:

- ``good/``: the released version (scales the estimate by 1.0, i.e. keeps it);
- ``worse/``: the same name and the same ``algorithm_version``, but a change made it worse
  (scales by 1.5: biased, and noisier). Its rows are comparable with the baseline and must come out ``worse``;
- ``bumped/``: the worse code with ``algorithm_version = "2"``: a declared change of algorithm.
  Its rows' fingerprints differ, so they are ``not comparable``: the gate cannot judge them, so
  they fail it unless ``--allow-not-comparable`` (then re-baseline).

The baseline is the spec run with ``good/``; rows of the built-in pipelines (base, norm-sub) are
the same in every run with the same seed, so only ``shrink`` rows can move. The gate is run as the
CI workflow runs it (docs/ci.md): ``--z 5`` (:data:`ldpbench.leaderboard.compare.DEFAULT_Z`).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from support import cli

from ldpbench.cli import main
from ldpbench.leaderboard.compare import DEFAULT_Z

PLUGIN = '''\
"""shrink: a third-party post-processor under development (factor {factor})."""

from ldpbench import hookimpl
from ldpbench.types import PostProcessor

FACTOR = {factor}


class Shrink(PostProcessor):
    """Scales the estimate by FACTOR."""

    name = "shrink"
    algorithm_version = "{version}"

    def apply(self, estimate, rng):
        return estimate.replace(frequencies=estimate.frequencies * FACTOR)


@hookimpl
def ldpbench_register_postprocessors(registry):
    registry.register(Shrink)
'''
VERSIONS = {"good": (1.0, "1"), "worse": (1.5, "1"), "bumped": (1.5, "2")}

SPEC = """\
name: gate
seed: {seed}
repeats: 10
datasets:
  - zipf: {{d: 32, n: 5000, s: 1.2}}
epsilons: [1, 4]
oracles: [grr, oue]
pipelines: [base, norm-sub, shrink]
metrics: [mse, l1]
"""
ROWS = 2 * 2 * 3 * 2  # epsilons x oracles x pipelines x metrics
SHRINK_ROWS = 2 * 2 * 2
GATE = ("--z", f"{DEFAULT_Z:g}")


def table_rows(markdown: str) -> list[list[str]]:
    """The body rows of the Markdown table, as stripped cells."""
    lines = [line for line in markdown.splitlines() if line.startswith("|")][2:]
    return [[c.strip() for c in line.strip("|").split("|")] for line in lines]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Results folders: baseline (good, seed 1), worse (seed 1), bumped (seed 1), noise (good, seed 2)."""
    root = tmp_path_factory.mktemp("gate")
    for name, (factor, version) in VERSIONS.items():
        (root / name).mkdir()
        (root / name / "shrink.py").write_text(PLUGIN.format(factor=factor, version=version))
    for seed in (1, 2):
        (root / f"seed{seed}.yaml").write_text(textwrap.dedent(SPEC.format(seed=seed)))
    for out, plugins, seed in [
        ("baseline", "good", 1),
        ("worse-run", "worse", 1),
        ("bumped-run", "bumped", 1),
        ("noise-run", "good", 2),
    ]:
        code = main(
            [
                "run",
                str(root / f"seed{seed}.yaml"),
                "--out",
                str(root / out),
                "--workers",
                "1",
                "--plugins-dir",
                str(root / plugins),
                "--no-progress",
                "--format",
                "json",
            ]
        )
        assert code == 0, out
    return root


def test_a_worse_post_processor_exits_1_with_a_readable_table(runs):
    # The real command, as a CI step runs it: JSON leaderboards in, Markdown out, exit status.
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "ldpbench",
            "compare",
            "baseline/leaderboard.json",
            "worse-run/leaderboard.json",
            *GATE,
            "--only-changed",
        ],
        cwd=runs,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 1, res.stdout + res.stderr
    first = res.stdout.splitlines()[0]
    assert first.startswith("**REGRESSION**: ") and "worse" in first and "noise z = 5" in first
    rows = table_rows(res.stdout)
    header_line = next(line for line in res.stdout.splitlines() if line.startswith("|"))  # after the notes
    header = [c.strip() for c in header_line.strip("|").split("|")]
    assert header == [
        "",
        "dataset",
        "ε",
        "oracle",
        "pipeline",
        "metric",
        "baseline",
        "current",
        "change",
        "detectable",
        "status",
    ]
    # Only the shrink rows changed (--only-changed), every one of them for the worse.
    assert {r[4] for r in rows} == {"shrink"} and len(rows) == SHRINK_ROWS
    assert all(r[0] == "+" and r[10].startswith("worse: beyond 5% and 5σ noise") for r in rows)
    assert all(r[9].startswith("±") and r[9].endswith("%") for r in rows)  # what each row could show
    mse = next(r for r in rows if r[1:6] == ["zipf(d=32,n=5000,s=1.2)", "4", "oue", "shrink", "mse"])
    assert mse[8].startswith("+") and mse[8].endswith("%")  # the relative change, signed
    assert " ± " in mse[6] and " ± " in mse[7]  # mean ± standard error on both sides


def test_noise_alone_is_not_a_regression(runs, capsys):
    code, out, err = cli(capsys, "compare", runs / "baseline", runs / "noise-run", *GATE)
    assert code == 0, out + err
    assert out.startswith(f"**OK**: {ROWS} unchanged")
    # The numbers did move: judged by the 5% threshold alone (z = 0), the same runs would fail
    # the gate. It is the noise-awareness that keeps another seed from counting as a regression.
    code, out, _ = cli(capsys, "compare", runs / "baseline", runs / "noise-run", "--z", "0")
    assert code == 1 and "worse" in out.splitlines()[0]


def test_per_metric_thresholds(runs, capsys):
    base, worse = runs / "baseline", runs / "worse-run"
    code, out, _ = cli(capsys, "compare", base, worse, *GATE, "--format", "json")
    changes = {
        (r["epsilon"], r["oracle"], r["metric"]): r["relative"]
        for r in json.loads(out)["rows"]
        if r["pipeline"] == "shrink"
    }
    # A threshold above every mse change (but not the l1 ones) clears mse only: l1 still fails.
    mse_max = max(v for k, v in changes.items() if k[2] == "mse")
    l1_min = min(v for k, v in changes.items() if k[2] == "l1")
    assert 0 < l1_min and 0 < mse_max
    limit = f"mse:{mse_max * 100 * 1.01 + 1:.0f}%"
    code, out, _ = cli(capsys, "compare", base, worse, *GATE, "--threshold", limit, "--only-changed")
    assert code == 1
    rows = table_rows(out)
    assert {r[5] for r in rows} == {"l1"} and len(rows) == SHRINK_ROWS // 2
    assert f"mse {limit.split(':')[1]}" in out.splitlines()[0]
    # Loose enough for both metrics: the gate passes.
    big = f"{max(changes.values()) * 100 * 1.01 + 1:.0f}%"
    code, out, _ = cli(capsys, "compare", base, worse, *GATE, "--threshold", big)
    assert code == 0, out
    # An absolute threshold per metric (mse:0.001 is far above any mse here) also parses and acts.
    code, out, _ = cli(capsys, "compare", base, worse, *GATE, "--threshold", "mse:1", "--threshold", "l1:10")
    assert code == 0, out
    # A malformed threshold is a usage error.
    code, _, err = cli(capsys, "compare", base, worse, "--threshold", "mse:5%%")
    assert code == 2 and "bad threshold" in err


def test_a_declared_version_change_is_not_comparable(runs, capsys):
    # A row the gate cannot compare is a row it is blind to: exit 1 unless allowed.
    code, out, err = cli(capsys, "compare", runs / "baseline", runs / "bumped-run", *GATE, "--only-changed")
    assert code == 1, out + err
    assert out.startswith(f"**REGRESSION**: {SHRINK_ROWS} not comparable, {ROWS - SHRINK_ROWS} unchanged")
    code, out, err = cli(
        capsys, "compare", runs / "baseline", runs / "bumped-run", *GATE, "--only-changed", "--allow-not-comparable"
    )
    assert code == 0, out + err
    assert out.startswith(f"**OK**: {SHRINK_ROWS} not comparable, {ROWS - SHRINK_ROWS} unchanged")
    assert "not-comparable rows allowed" in out.splitlines()[0]
    rows = table_rows(out)
    assert len(rows) == SHRINK_ROWS
    assert all(r[0] == "x" and r[4] == "shrink" and r[9] == "" and "fingerprint differs" in r[10] for r in rows)

    # The run manifests record the version that changed.
    def shrink_version(run: str) -> str:
        manifest = json.loads((runs / run / "manifest.json").read_text())
        (entry,) = [p for p in manifest["plugins"] if p["name"] == "shrink"]
        return entry["algorithm_version"]

    assert (shrink_version("baseline"), shrink_version("bumped-run")) == ("1", "2")


def test_a_new_release_with_a_2x_regression_is_worse_not_blind(runs, tmp_path, capsys, monkeypatch):
    # Reproduction (issue 10): any release of the plugin's distribution (or of ldpbench) changed
    # every row's fingerprint, so `compare` said "OK: N not comparable" and exit 0 while the
    # plugin had regressed 2x. Fingerprints now hold what the numbers measure, not versions:
    # the same algorithm_version under a new distribution version stays comparable.
    import ldpbench.loading.registry as registry

    (tmp_path / "twice").mkdir()
    (tmp_path / "twice" / "shrink.py").write_text(PLUGIN.format(factor=2.0, version="1"))
    real = registry.plugin_identity

    def released(cls, distribution, version):  # as if a new version of every distribution were installed
        return real(cls, distribution, version + ".post1")

    monkeypatch.setattr(registry, "plugin_identity", released)
    code = main(
        [
            "run",
            str(runs / "seed1.yaml"),
            "--out",
            str(tmp_path / "release"),
            "--workers",
            "1",
            "--plugins-dir",
            str(tmp_path / "twice"),
            "--no-progress",
            "--format",
            "json",
        ]
    )
    assert code == 0
    code, out, err = cli(capsys, "compare", runs / "baseline", tmp_path / "release", *GATE)
    assert code == 1, out + err
    assert "not comparable" not in out.splitlines()[0]
    assert out.startswith(f"**REGRESSION**: {SHRINK_ROWS} worse")
