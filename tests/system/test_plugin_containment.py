"""Plugin code outside cells, on the command line (issue 28): validation-time faults are plugin
failures (exit 3, the plugin named, never 0, 1, 4 or 130), and a plugin's os.chdir cannot move
the results folder. The whole matrix of faults: tests/hardening/test_validation_faults.py."""

from __future__ import annotations

import pytest

from ldpbench.cli import main

PLUGIN = '''\
import os
import threading

from ldpbench import hookimpl
from ldpbench.params import Param
from ldpbench.types import PostProcessor


class Exits(PostProcessor):
    """Its constructor raises SystemExit(0) (or calls os._exit(0) from a thread)."""

    name = "exits"
    params = (Param("how", str, "system-exit", "how", choices=("system-exit", "thread", "base")),)

    def __init__(self, **params):
        super().__init__(**params)
        if self.how == "system-exit":
            raise SystemExit(0)
        if self.how == "base":
            raise GeneratorExit
        thread = threading.Thread(target=os._exit, args=(0,))
        thread.start()
        thread.join()

    def apply(self, estimate, rng):
        return estimate


class Wanders(PostProcessor):
    """An honest helper that forgets to go back: it changes the working directory."""

    name = "wanders"

    def apply(self, estimate, rng):
        os.makedirs("elsewhere", exist_ok=True)
        os.chdir("elsewhere")
        return estimate


@hookimpl
def ldpbench_register_postprocessors(registry):
    registry.register(Exits)
    registry.register(Wanders)
'''

SPEC = """\
name: contained
seed: 1
repeats: 2
datasets: [{zipf: {d: 8, n: 500}}]
epsilons: [1]
oracles: [grr]
pipelines: [base, PIPE]
metrics: [mse]
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "pl").mkdir()
    (tmp_path / "pl" / "plug.py").write_text(PLUGIN)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("how", ["system-exit", "thread", "base"])
@pytest.mark.parametrize("command", ["run", "validate"])
def test_a_constructor_that_exits_at_validation_is_a_plugin_failure(project, capsys, command, how):
    """Reproduction (issue 28): SystemExit(0) in a post-processor's constructor ended `ldpbench
    run` with exit 0, no output and no results folder; os._exit(0) from a thread too; a
    GeneratorExit gave exit 1 (the regression code)."""
    (project / "spec.yaml").write_text(SPEC.replace("PIPE", f"{{exits: {{how: {how}}}}}"))
    extra = ["--out", "out", "--workers", "1", "--no-progress"] if command == "run" else []
    code = main([command, "spec.yaml", "--plugins-dir", "pl", *extra])
    err = capsys.readouterr().err
    assert code == 3, err
    assert "Traceback" not in err
    assert ("exits" if how != "thread" else "called os._exit(0)") in err


def test_a_plugin_that_changes_directory_does_not_move_the_results(project, capsys):
    """Reproduction (issue 28): with --workers 1 and a relative --out, every append after the
    plugin's os.chdir and leaderboard.json went under its directory; ./out kept the manifest."""
    (project / "spec.yaml").write_text(SPEC.replace("PIPE", "wanders"))
    code = main(["run", "spec.yaml", "--plugins-dir", "pl", "--out", "out", "--workers", "1", "--no-progress"])
    assert code == 0, capsys.readouterr().err
    rows = (project / "out" / "results.jsonl").read_text().splitlines()[1:]
    assert len(rows) == 2 * 2  # two cells, two pipelines
    assert (project / "out" / "leaderboard.json").is_file()
    assert not list(project.glob("elsewhere/**/results.jsonl"))
