"""Cells run with the plugins given to the run: ``ldpbench.run(plugins=build_plugins(extra=[...]))``
(the recipe of docs/plugins/testing.md) validates *and* runs, in this process and on a process pool;
a worker that cannot get the plugins fails its cells saying why, it never crashes the run."""

from __future__ import annotations

import importlib
import json
import sys
import textwrap
import types

import numpy as np
import pytest
import yaml

import ldpbench
import ldpbench.engine.cell as engine
from ldpbench import build_plugins, hookimpl
from ldpbench.errors import UsageError
from ldpbench.spec.expand import expand
from ldpbench.spec.validate import load_spec_text
from ldpbench.types import Metric

SPEC = {
    "name": "given",
    "seed": 5,
    "repeats": 2,
    "datasets": [{"zipf": {"d": 16, "n": 2000, "s": 1.2}}],
    "epsilons": [1],
    "oracles": ["grr", "oue"],
    "pipelines": ["base"],
    "metrics": ["mse", "given-max-error"],
}

PLUGIN_SOURCE = '''
import numpy as np
from ldpbench import hookimpl
from ldpbench.types import Metric


class GivenMaxError(Metric):
    """Largest absolute error over the items (a test metric)."""

    name = "given-max-error"

    def score(self, truth, estimate, rng):
        return float(np.abs(np.asarray(estimate.item_answers()) - truth.frequencies).max())


@hookimpl
def ldpbench_register_metrics(registry):
    registry.register(GivenMaxError)
'''


@pytest.fixture
def importable_module(tmp_path, monkeypatch):
    """A plugin module another process can import by name."""
    folder = tmp_path / "importable"
    folder.mkdir()
    (folder / "given_metric_plugin.py").write_text(textwrap.dedent(PLUGIN_SOURCE))
    monkeypatch.syspath_prepend(str(folder))
    yield importlib.import_module("given_metric_plugin")
    monkeypatch.delitem(sys.modules, "given_metric_plugin")


def _runtime_module() -> types.ModuleType:
    """A plugin module made at run time: no other process can import it."""

    class RuntimeMaxError(Metric):
        """Largest absolute error over the items (made at run time)."""

        name = "given-max-error"

        def score(self, truth, estimate, rng):
            return float(np.abs(np.asarray(estimate.item_answers()) - truth.frequencies).max())

    mod = types.ModuleType("runtime_metric_plugin")
    mod.ldpbench_register_metrics = hookimpl(lambda registry: registry.register(RuntimeMaxError))
    return mod


def _values(outcome) -> dict:
    return {(r["oracle"], r["metric"]): r["mean"] for r in outcome.leaderboard.iter_rows(named=True)}


@pytest.mark.parametrize("make", ["importable", "runtime"])
def test_extra_plugins_run_in_process_and_on_a_forked_pool(tmp_path, request, make):
    module = request.getfixturevalue("importable_module") if make == "importable" else _runtime_module()
    plugins = build_plugins(extra=[module])
    serial = ldpbench.run(SPEC, tmp_path / "serial", executor="in-process", plugins=plugins)
    pooled = ldpbench.run(SPEC, tmp_path / "pool", executor="process-pool", workers=2, plugins=plugins)
    for outcome in (serial, pooled):
        assert outcome.failed_rows == 0, outcome.errors
        assert outcome.leaderboard.height == 4
    assert _values(serial) == pytest.approx(_values(pooled), rel=1e-12)
    assert all(v > 0 for (_, metric), v in _values(serial).items() if metric == "given-max-error")


def test_a_spawned_worker_imports_given_modules_by_name(tmp_path, importable_module, monkeypatch):
    from ldpbench_plugins.executors import local

    plugins = build_plugins(extra=[importable_module])
    serial = ldpbench.run(SPEC, tmp_path / "serial", executor="in-process", plugins=plugins)
    # Spawned workers share nothing with this process: they must rebuild the plugins.
    monkeypatch.setattr(local.ProcessPool, "_context", staticmethod(lambda: local.multiprocessing.get_context("spawn")))
    spawned = ldpbench.run(SPEC, tmp_path / "spawn", executor="process-pool", workers=1, plugins=plugins)
    assert spawned.failed_rows == 0, spawned.errors
    assert _values(spawned) == pytest.approx(_values(serial), rel=1e-12)


def test_a_worker_that_cannot_get_runtime_plugins_fails_the_cells_saying_why(tmp_path):
    plugins = build_plugins(extra=[_runtime_module()])
    loaded = load_spec_text(yaml.safe_dump(SPEC, sort_keys=False), plugins)
    cell = next(iter(expand(loaded)))
    # Outside plugins_given: this process plays a worker that does not have the run's plugins.
    rows = engine.run_cell(
        engine.CellTask(cell, tuple(loaded.pipelines), tuple(loaded.metrics), plugins=plugins.source)
    )
    assert rows and all(r["error"] for r in rows)
    assert all("runtime_metric_plugin" in r["error"] and "cannot reach a worker process" in r["error"] for r in rows)


def test_the_api_writes_every_file_of_the_results_folder(tmp_path):
    outcome = ldpbench.run({**SPEC, "metrics": ["mse"]}, tmp_path / "out", workers=1)
    assert {p.name for p in outcome.out_dir.iterdir()} >= {"results.jsonl", "manifest.json", "leaderboard.json"}
    rows = json.loads((outcome.out_dir / "leaderboard.json").read_text())
    assert len(rows) == outcome.leaderboard.height


def test_plugins_and_plugins_dirs_are_exclusive(tmp_path):
    with pytest.raises(UsageError, match="not both"):
        ldpbench.run(SPEC, tmp_path, plugins=build_plugins(), plugins_dirs=[tmp_path])
