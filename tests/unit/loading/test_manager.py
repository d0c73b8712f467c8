"""Building the plugins (ldpbench/loading/manager.py).

- Registration hooks go through pluggy: its call order, hook wrappers, blocking and tracing; a
  misspelled hook, a plugins folder and a broken plugin file.
- Cells run with the plugins given to the run: ``ldpbench.run(plugins=build_plugins(extra=[...]))``
  (the recipe of docs/plugins/testing.md) validates *and* runs, in this process and on a process
  pool; a worker that cannot get the plugins fails its cells saying why, it never crashes the run.
"""

from __future__ import annotations

import importlib
import sys
import textwrap
import types

import numpy as np
import pytest
import yaml
from support import GIVEN_SPEC

import ldpbench
import ldpbench.engine.cell as engine
from ldpbench import build_plugins, hookimpl
from ldpbench.errors import PluginError
from ldpbench.loading.manager import TRACE_ENV
from ldpbench.spec.expand import expand
from ldpbench.spec.validate import load_spec_text
from ldpbench.types import Metric


def _metric(metric_name: str) -> type[Metric]:
    class Named(Metric):
        name = metric_name

        def score(self, truth, estimate, rng):
            return 0.0

    Named.__doc__ = f"The {metric_name} test metric."
    return Named


def _module(name: str, **hooks) -> types.ModuleType:
    mod = types.ModuleType(name)
    for hook_name, fn in hooks.items():
        setattr(mod, hook_name, fn)
    return mod


def test_a_hook_wrapper_wraps_every_registration():
    seen = []

    @hookimpl(wrapper=True)
    def ldpbench_register_metrics(registry):
        seen.append(("before", registry.origin.plugin))
        result = yield
        seen.append(("after", registry.origin.plugin))
        return result

    @hookimpl
    def register_one(registry):
        registry.register(_metric("wrapped-metric"))

    wrapper = _module("wrapper_plugin", ldpbench_register_metrics=ldpbench_register_metrics)
    plain = _module("plain_plugin", ldpbench_register_metrics=register_one)
    plugins = build_plugins(extra=[wrapper, plain])
    assert "wrapped-metric" in plugins.registry("metric")
    # The wrapper saw the call of every plugin implementing the hook, each with its own origin.
    assert ("before", "plain_plugin") in seen and ("after", "plain_plugin") in seen
    assert seen.count(("before", "plain_plugin")) == 1


def test_tryfirst_is_honoured():
    order = []

    @hookimpl(tryfirst=True)
    def first(registry):
        order.append("first")

    @hookimpl
    def second(registry):
        order.append("second")

    # Registered first: without tryfirst pluggy would call it after `second` (last registered first).
    build_plugins(
        extra=[_module("eager", ldpbench_register_metrics=first), _module("plain", ldpbench_register_metrics=second)]
    )
    assert order == ["first", "second"]


def test_disabled_plugins_are_blocked_in_pluggy():
    plugins = build_plugins(disabled=["oracles.grr"])
    assert plugins.pm.is_blocked("oracles.grr")
    assert "grr" not in plugins.registry("oracle")
    assert "oue" in plugins.registry("oracle")


def test_trace_env_writes_hook_calls_to_stderr(monkeypatch, capsys):
    monkeypatch.setenv(TRACE_ENV, "1")
    build_plugins(
        extra=[
            _module(
                "traced_plugin",
                ldpbench_register_metrics=hookimpl(lambda registry: registry.register(_metric("traced-metric"))),
            )
        ]
    )
    err = capsys.readouterr().err
    assert "ldpbench_register_metrics" in err
    assert "traced_plugin" in err


def test_no_trace_without_the_env(monkeypatch, capsys):
    monkeypatch.delenv(TRACE_ENV, raising=False)
    build_plugins()  # a build of its own: the environment is read while the plugins are built
    assert "ldpbench_register_metrics" not in capsys.readouterr().err


@pytest.mark.parametrize("value", ["0", ""])
def test_trace_only_for_1(monkeypatch, capsys, value):
    monkeypatch.setenv(TRACE_ENV, value)
    build_plugins()  # a build of its own: the environment is read while the plugins are built
    assert "ldpbench_register" not in capsys.readouterr().err


def test_an_unhashable_namespace_registers_under_its_name():
    namespace = types.SimpleNamespace(
        __name__="namespace_plugin",
        ldpbench_register_metrics=hookimpl(lambda registry: registry.register(_metric("namespace-metric"))),
    )
    plugins = build_plugins(extra=[namespace])
    assert plugins.get("metric", "namespace-metric").origin.plugin == "namespace_plugin"


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
    serial = ldpbench.run(GIVEN_SPEC, tmp_path / "serial", executor="in-process", plugins=plugins)
    pooled = ldpbench.run(GIVEN_SPEC, tmp_path / "pool", executor="process-pool", workers=2, plugins=plugins)
    for outcome in (serial, pooled):
        assert outcome.failed_rows == 0, outcome.errors
        assert outcome.leaderboard.height == 4
    assert _values(serial) == pytest.approx(_values(pooled), rel=1e-12)
    assert all(v > 0 for (_, metric), v in _values(serial).items() if metric == "given-max-error")


def test_a_spawned_worker_imports_given_modules_by_name(tmp_path, importable_module, monkeypatch):
    from ldpbench_plugins.executors import local

    plugins = build_plugins(extra=[importable_module])
    serial = ldpbench.run(GIVEN_SPEC, tmp_path / "serial", executor="in-process", plugins=plugins)
    # Spawned workers share nothing with this process: they must rebuild the plugins.
    monkeypatch.setattr(local.ProcessPool, "_context", staticmethod(lambda: local.multiprocessing.get_context("spawn")))
    spawned = ldpbench.run(GIVEN_SPEC, tmp_path / "spawn", executor="process-pool", workers=1, plugins=plugins)
    assert spawned.failed_rows == 0, spawned.errors
    assert _values(spawned) == pytest.approx(_values(serial), rel=1e-12)


def test_a_worker_that_cannot_get_runtime_plugins_fails_the_cells_saying_why(tmp_path):
    plugins = build_plugins(extra=[_runtime_module()])
    loaded = load_spec_text(yaml.safe_dump(GIVEN_SPEC, sort_keys=False), plugins)
    cell = next(iter(expand(loaded)))
    # Outside plugins_given: this process plays a worker that does not have the run's plugins.
    rows = engine.run_cell(
        engine.CellTask(cell, tuple(loaded.pipelines), tuple(loaded.metrics), plugins=plugins.source)
    )
    assert rows and all(r["error"] for r in rows)
    assert all("runtime_metric_plugin" in r["error"] and "cannot reach a worker process" in r["error"] for r in rows)


def test_misspelled_hook_is_caught():
    mod = types.ModuleType("typo")

    @hookimpl
    def ldpbench_register_metric(registry):  # missing the final s
        pass

    mod.ldpbench_register_metric = ldpbench_register_metric
    with pytest.raises(PluginError, match="unknown hook"):
        build_plugins(extra=[mod])


def test_plugins_dir(tmp_path):
    (tmp_path / "my_metric.py").write_text(
        "from ldpbench import hookimpl\n"
        "from ldpbench.types import Metric\n"
        "class Zero(Metric):\n"
        "    '''Always zero.'''\n"
        "    name = 'zero-error'\n"
        "    def score(self, truth, estimate, rng):\n"
        "        return 0.0\n"
        "@hookimpl\n"
        "def ldpbench_register_metrics(registry):\n"
        "    registry.register(Zero)\n"
    )
    plugins = build_plugins([tmp_path])
    assert plugins.get("metric", "zero-error").origin.source == "plugins-dir"


def test_broken_plugin_file_names_the_file(tmp_path):
    (tmp_path / "broken.py").write_text("raise RuntimeError('boom')\n")
    with pytest.raises(PluginError, match="broken.py failed to load: RuntimeError: boom"):
        build_plugins([tmp_path])


_FOLDER_PLUGIN = """\
from ldpbench import hookimpl
from ldpbench_plugins.oracles.grr import GRR


class Local(GRR):
    name = "{name}"


@hookimpl
def ldpbench_register_oracles(registry):
    registry.register(Local)
"""


def test_two_plugins_dirs_each_with_plugin_py_are_two_modules(tmp_path):
    """Reproduction (issue 28): two --plugins-dir folders each holding plugin.py loaded as one
    module name, so folder A's plugin was hashed (and pickled to workers) as folder B's file."""
    folders = []
    for name in ("grr-a", "grr-b"):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "plugin.py").write_text(_FOLDER_PLUGIN.format(name=name))
        folders.append(folder)
    plugins = build_plugins(plugins_dirs=folders)
    a, b = plugins.get("oracle", "grr-a"), plugins.get("oracle", "grr-b")
    assert a.cls.__module__ != b.cls.__module__
    assert sys.modules[a.cls.__module__].__file__ == str(folders[0] / "plugin.py")
    assert sys.modules[b.cls.__module__].__file__ == str(folders[1] / "plugin.py")
    hash_a, hash_b = a.identity.source_hash, b.identity.source_hash
    with open(folders[0] / "plugin.py", "a") as fh:
        fh.write("# edited\n")
    again = build_plugins(plugins_dirs=folders)
    assert again.get("oracle", "grr-a").identity.source_hash != hash_a
    assert again.get("oracle", "grr-b").identity.source_hash == hash_b  # B's file did not change


def test_loading_every_plugin_leaves_the_heavy_scipy_submodules_for_their_first_use():
    # Every command loads every plugin; these four submodules cost ~0.5 s of CPU of each start-up
    # (and of each CLI subprocess of the suite) while only the code that computes needs them.
    import subprocess
    import sys

    # The modules `ldpbench run` imports before a cell computes too (a module-level `from scipy
    # import stats` in the shuffle bounds once cost every command ~1 s: the row schema imports it).
    probe = (
        "import sys; from ldpbench import build_plugins; build_plugins(); "
        "import ldpbench.cli.run_cmd, ldpbench.results.store, ldpbench.engine.rows, ldpbench.runner; "
        "print(sorted(m for m in ('scipy.optimize', 'scipy.sparse', 'scipy.special', 'scipy.stats') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", done.stdout
