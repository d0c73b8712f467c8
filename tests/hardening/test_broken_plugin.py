"""One broken installed plugin does not take down the tool (issue 10).

Reproduction: an installed distribution whose ``ldpbench`` entry point raises on import made every
command fail, ``ldpbench plugins`` included. Here a fake distribution (a ``.dist-info`` on
``PYTHONPATH``) installs two plugins: ``broken`` (its module raises ImportError) and ``fancy``
(a working oracle ``fancy``, to show that ``--disable-plugin`` really skips a plugin). Every
command runs in a subprocess, as a user would.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

SPEC = """\
name: plain
seed: 1
repeats: 1
datasets:
  - zipf: {d: 8, n: 500, s: 1.1}
epsilons: [2]
oracles: [ORACLE]
metrics: [mse]
"""

FANCY = '''\
from ldpbench import hookimpl
from ldpbench_plugins.oracles.grr import GRR


class Fancy(GRR):
    """GRR under another name."""

    name = "fancy"


@hookimpl
def ldpbench_register_oracles(registry):
    registry.register(Fancy)
'''


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("site")
    info = root / "brokenplug-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: brokenplug\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[ldpbench]\nbroken = brokenplug_mod\nfancy = brokenplug_fancy\n")
    (root / "brokenplug_mod.py").write_text("raise ImportError('needs libfoo 2.0, found 1.3')\n")
    (root / "brokenplug_fancy.py").write_text(FANCY)
    for oracle in ("grr", "fancy"):
        (root / f"{oracle}.yaml").write_text(textwrap.dedent(SPEC).replace("ORACLE", oracle))
    return root


def ldpbench(site, *args, env=None):
    full = {**os.environ, "PYTHONPATH": str(site) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    full.pop("LDPBENCH_DISABLE_PLUGINS", None)
    full.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "ldpbench", *args], cwd=site, capture_output=True, text=True, timeout=180, env=full
    )


ERROR = "ImportError: needs libfoo 2.0, found 1.3"


def test_plugins_lists_the_broken_plugin_with_its_error(site):
    proc = ldpbench(site, "plugins")
    assert proc.returncode == 0, proc.stderr
    line = next(line for line in proc.stdout.splitlines() if line.startswith("broken "))
    assert "BROKEN" in line and "brokenplug" in line and ERROR in line
    assert any(line.startswith("fancy ") for line in proc.stdout.splitlines())
    rows = json.loads(ldpbench(site, "plugins", "--json").stdout)
    assert {
        "name": "broken",
        "kind": None,
        "distribution": "brokenplug",
        "version": "1.0",
        "module": "brokenplug_mod",
        "source": "entry-point",
        "error": ERROR,
    } in rows


def test_a_spec_that_does_not_use_it_runs_with_a_warning(site):
    proc = ldpbench(site, "run", "grr.yaml", "--out", "out-grr", "--workers", "1", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert (
        f"warning: plugin 'broken' (brokenplug_mod) from distribution brokenplug 1.0 failed to load: {ERROR}"
        in proc.stderr
    )


def test_a_spec_naming_an_unknown_plugin_is_told_about_the_broken_one(site):
    (site / "missing.yaml").write_text(textwrap.dedent(SPEC).replace("ORACLE", "libfoo-oracle"))
    proc = ldpbench(site, "validate", "missing.yaml")
    assert proc.returncode == 2
    assert "missing.yaml:" in proc.stderr and "unknown oracle or protocol 'libfoo-oracle'" in proc.stderr
    assert "it may come from a plugin that failed to load" in proc.stderr and ERROR in proc.stderr


@pytest.mark.parametrize("how", ["flag", "env"])
def test_disable_plugin_skips_plugins(site, how):
    args, env = (
        (["--disable-plugin", "broken", "--disable-plugin", "fancy"], None)
        if how == "flag"
        else ([], {"LDPBENCH_DISABLE_PLUGINS": "broken,fancy"})
    )
    proc = ldpbench(site, "plugins", *args, env=env)
    assert proc.returncode == 0 and "broken" not in proc.stdout and "fancy " not in proc.stdout
    assert "warning" not in proc.stderr
    proc = ldpbench(site, "run", "fancy.yaml", "--out", f"out-{how}", "--workers", "1", "--no-progress", *args, env=env)
    assert proc.returncode == 2 and "unknown oracle or protocol 'fancy'" in proc.stderr
    proc = ldpbench(
        site,
        "run",
        "fancy.yaml",
        "--out",
        f"out-{how}",
        "--workers",
        "1",
        "--no-progress",
        "--disable-plugin",
        "broken",
    )
    assert proc.returncode == 0, proc.stderr  # fancy loads again; broken is silent


def test_a_whole_distribution_can_be_disabled(site):
    proc = ldpbench(site, "plugins", "--disable-plugin", "brokenplug")
    assert proc.returncode == 0 and "brokenplug" not in proc.stdout
