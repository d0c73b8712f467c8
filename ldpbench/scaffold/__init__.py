"""``ldpbench new-plugin``: write a ready plugin repository for one kind.

The package it writes has the plugin (a small working example, :mod:`.examples`), its entry
point, a pinned ldpbench requirement, a test running the conformance kit (and the privacy audit
for an oracle), a small CI spec with its committed baseline and the pytest gate, and a GitHub
Actions workflow that installs ldpbench from the source this ldpbench was installed from
(ldpbench is on no package index; :mod:`.source` reads where pip installed it from).
"""

from __future__ import annotations

import importlib.metadata as md
import keyword
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ldpbench.errors import UsageError
from ldpbench.scaffold import files, git
from ldpbench.scaffold.examples import KindExample
from ldpbench.scaffold.source import default_ldpbench_source
from ldpbench.types.kinds import KINDS as PLUGIN_KINDS
from ldpbench.types.kinds import SCAFFOLDED_KINDS
from ldpbench.util.version import VERSION

__all__ = ["KINDS", "VARIANTS", "NewPlugin", "default_ldpbench_source", "new_plugin"]


@dataclass(frozen=True)
class NewPlugin:
    """What :func:`new_plugin` wrote."""

    #: the repository's folder
    root: Path
    #: why it is not a git repository of its own (None: it is, files and baseline committed)
    unversioned: str | None = None


def example_of(kind: str) -> KindExample:
    """The example of ``kind`` its declaration names."""
    return PLUGIN_KINDS[kind].resolve(PLUGIN_KINDS[kind].example)


#: The kinds ``new-plugin`` writes, with their examples (derived from the kinds' declarations).
KINDS: dict[str, KindExample] = {kind: example_of(kind) for kind in SCAFFOLDED_KINDS}

#: The further examples of a kind (``--variant``): ``{kind: {variant: example}}``, from the
#: kinds' declarations (``PluginKind.variants``).
VARIANTS: dict[str, dict[str, KindExample]] = {
    kind: {v: PLUGIN_KINDS[kind].resolve(ref) for v, ref in PLUGIN_KINDS[kind].variants}
    for kind in SCAFFOLDED_KINDS
    if PLUGIN_KINDS[kind].variants
}

_NAME = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")


def _check_name(name: str, kind: str) -> None:
    if not _NAME.match(name):
        raise UsageError(f"plugin name {name!r}: use lowercase words joined by hyphens (e.g. 'my-oracle')")
    if keyword.iskeyword(_module(name).removeprefix("ldpbench_")):
        raise UsageError(f"plugin name {name!r} makes a Python keyword")
    from ldpbench.loading.manager import build_plugins

    if name in build_plugins().registry(kind):
        raise UsageError(f"a {kind} named {name!r} is already installed; choose another name")


def _module(name: str) -> str:
    return "ldpbench_" + name.replace("-", "_")


def _class(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("-"))


def new_plugin(
    name: str,
    kind: str,
    dest: str | os.PathLike[str] | None = None,
    *,
    ldpbench_source: str | None = None,
    baseline: bool = True,
    init_git: bool = True,
    variant: str | None = None,
) -> NewPlugin:
    """Write the plugin repository ``dest`` (default ``./ldpbench-NAME``), a git repository with
    its files and its baseline committed (:mod:`ldpbench.scaffold.git`).

    :param ldpbench_source: the pip requirement its CI installs ldpbench with (default: the
        source this ldpbench was installed from, :func:`default_ldpbench_source`).
    :param baseline: compute the CI spec's baseline now (runs the spec once, a few seconds), so
        that the generated tests pass as written.
    :param init_git: make it a git repository (skipped, with the reason in
        :attr:`NewPlugin.unversioned`, where git is missing or ``dest`` is inside a work tree).
    :param variant: one of the kind's further examples (:data:`VARIANTS`: a ``protocol``'s
        ``multidimensional`` or ``longitudinal``), instead of its default example.
    :raises UsageError: a bad or taken name, an unknown kind or variant, a non-empty ``dest``, or
        no ldpbench source known.
    """
    if kind not in KINDS:
        raise UsageError(f"--kind must be one of {', '.join(KINDS)}, got {kind!r}")
    if variant is not None and variant not in VARIANTS.get(kind, {}):
        known = ", ".join(VARIANTS.get(kind, {})) or "none"
        raise UsageError(f"--variant of a {kind}: one of {known}, got {variant!r}")
    _check_name(name, kind)
    source = ldpbench_source or default_ldpbench_source()
    if not source:
        raise UsageError(
            "this ldpbench records no source it was installed from (no PEP 610 direct_url.json, "
            "not a source checkout); pass --ldpbench-source with the pip requirement that installs "
            "it, e.g. 'ldpbench @ git+https://github.com/OWNER/ldpbench@COMMIT' or a wheel file"
        )
    root = Path(dest) if dest is not None else Path(f"ldpbench-{name}")
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise UsageError(f"{root} exists and is not an empty folder")
    example = KINDS[kind] if variant is None else VARIANTS[kind][variant]
    values = {
        "name": name,
        "cls": _class(name),
        "kind": kind,
        "module": _module(name),
        "distribution": f"ldpbench-{name}",
        "version": VERSION,
        "source": source,
        "kit": PLUGIN_KINDS[kind].kit_function,
    }
    for rel, text in files.render(example, values).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    # A repository of its own unless it cannot be (the reason goes to the caller): the baseline is
    # computed at the first commit, so its manifest names it, and committed on top.
    unversioned = git.why_not_a_repository(root) if init_git else "not asked for (--no-git)"
    if unversioned is None:
        shape = "" if variant is None else f" --variant {variant}"
        git.init_and_commit(root, f"ldpbench new-plugin {name} --kind {kind}{shape}")
    if baseline:
        write_baseline(root, values["module"], values["distribution"], name)
        mark_example_baseline(root / BASELINE_MANIFEST, values["distribution"], name, kind)
        if unversioned is None:
            git.commit_all(root, "baseline: the CI spec's leaderboard at the first commit")
    return NewPlugin(root, unversioned)


#: The baseline manifest of a generated repository (the generated gate's baseline).
BASELINE_MANIFEST = "reports/baseline/manifest.json"


def mark_example_baseline(manifest: Path, distribution: str, name: str, kind: str) -> None:
    """Record in the baseline's manifest that it is the example's
    (:data:`~ldpbench.leaderboard.provenance.SCAFFOLD_EXAMPLE`): the gate and ``ldpbench compare``
    then fail, with the command to refresh it, once the plugin's code is no longer the example's
    (the manifest's identities hold the digest of the example's source). Refreshing the baseline
    writes a manifest without the mark."""
    import json

    from ldpbench.leaderboard.provenance import SCAFFOLD_EXAMPLE
    from ldpbench.results.jsoncodec import dumps_json

    data = json.loads(manifest.read_text(encoding="utf-8"))
    data[SCAFFOLD_EXAMPLE] = {
        "distribution": distribution,
        "plugin": f"{kind} '{name}'",
        "note": "computed with the example code `ldpbench new-plugin` wrote, not your plugin's: after "
        "replacing the example, refresh it (pytest tests/test_leaderboard.py --ldpbench-update-baseline) "
        "and commit it",
    }
    manifest.write_text(dumps_json(data, indent=2) + "\n", encoding="utf-8")


def write_baseline(root: Path, module: str, distribution: str, name: str) -> None:
    """Run the generated gate once with ``--ldpbench-update-baseline``, as its README says to.

    The package is not installed yet, so the run sees it the way an editable install would: the
    package folder on ``PYTHONPATH`` and, in a temporary folder, the distribution's metadata with
    its ``ldpbench`` entry point (what pip writes; entry points are read from it).
    """
    with tempfile.TemporaryDirectory(prefix="ldpbench-scaffold-") as tmp:
        info = Path(tmp) / f"{module}-{VERSION}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 0.1.0\n")
        (info / "entry_points.txt").write_text(f"[ldpbench]\n{name} = {module}\n")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(root.resolve()), tmp, *filter(None, [env.get("PYTHONPATH")])])
        env["PYTHONDONTWRITEBYTECODE"] = "1"  # leave no __pycache__ in the new repository
        proc = subprocess.run(
            # Only what the gate needs: no cache folder, no benchmark storage in the new repository.
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "-p",
                "no:benchmark",
                "tests/test_leaderboard.py",
                "--ldpbench-update-baseline",
            ],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    if proc.returncode != 0:
        shutil.rmtree(root / "reports", ignore_errors=True)
        raise UsageError(
            f"the plugin was written to {root}, but computing its baseline failed; fix the plugin, "
            f"install it (pip install -e .) and run `pytest tests/test_leaderboard.py "
            f"--ldpbench-update-baseline` there:\n{proc.stdout[-3000:]}{proc.stderr[-2000:]}"
        )
