"""``ldpbench new-plugin``: the repository it writes installs, and its tests pass as generated.

The first test generates one plugin of every kind and of every further example of a kind (a
multidimensional and a longitudinal protocol; each baseline computed by running the generated
gate once), installs them with uv (a real build of each generated pyproject.toml, into a folder
put on PYTHONPATH, so this environment is left alone) and runs each repository's own tests but the
oracle's, which the second runs. The second
follows a generated README's install lines word for word in a fresh virtual environment: ldpbench
from the source the generated files name (this checkout), then the plugin, then its tests.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import yaml
from support import foreign_pytest_plugins_off, uv_binary

from ldpbench.cli import main
from ldpbench.scaffold import KINDS, VARIANTS
from ldpbench.scaffold.source import default_ldpbench_source


def _build_isolation() -> list[str]:
    """``--no-build-isolation`` where this environment has what the generated repositories build
    with (the test extra's setuptools >= 68): one isolated build environment per repository is most
    of the install's time. Else pip's default, isolated builds."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        major = int(version("setuptools").split(".")[0])
    except (PackageNotFoundError, ValueError):
        return []
    return ["--no-build-isolation"] if major >= 68 else []


def test_every_kind_installs_and_its_generated_tests_pass(tmp_path, monkeypatch):
    repos = []
    # The baseline run each generation starts (pytest in a subprocess) without them too.
    monkeypatch.setenv("PYTEST_ADDOPTS", " ".join(foreign_pytest_plugins_off()))
    # every kind's example, and every further example of a kind (--variant: a multidimensional protocol)
    examples = [(kind, kind, []) for kind in sorted(KINDS)]
    examples += [(kind, v, ["--variant", v]) for kind in sorted(VARIANTS) for v in sorted(VARIANTS[kind])]
    for kind, label, extra in examples:
        dest = tmp_path / f"ldpbench-my-{label}"
        assert main(["new-plugin", f"my-{label}", "--kind", kind, *extra, str(dest)]) == 0
        assert (dest / "reports/baseline/leaderboard.json").is_file()
        assert (dest / "reports/baseline/manifest.json").is_file()
        # ready to push: the files committed, the baseline computed at that commit and committed on top
        log = subprocess.run(["git", "log", "--format=%H %s"], cwd=dest, capture_output=True, text=True, check=True)
        (baseline_commit, _), (first, _) = (line.split(" ", 1) for line in log.stdout.splitlines())
        manifest = json.loads((dest / "reports/baseline/manifest.json").read_text())
        assert manifest["commit"] == first != baseline_commit
        status = subprocess.run(["git", "status", "--porcelain"], cwd=dest, capture_output=True, text=True, check=True)
        assert status.stdout == "", status.stdout
        repos.append(dest)
    site = tmp_path / "site"
    # uv builds each generated pyproject.toml as pip does (PEP 517, setuptools) in about a third of
    # pip's CPU; pip's own path, word for word as the README gives it, is the next test's.
    install = subprocess.run(
        [str(uv_binary(tmp_path)), "pip", "install", "-q", "--python", sys.executable, "--no-deps"]
        + [*_build_isolation(), "--target", str(site), *map(str, repos)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")])),
        PYTHONDONTWRITEBYTECODE="1",
    )
    # The oracle's own tests (the kit, both audits and the gate: the costliest) run in the next test,
    # from a fresh virtual environment, word for word as its README says.
    for repo in (r for r in repos if not r.name.endswith("oracle")):
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *foreign_pytest_plugins_off()],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert proc.returncode == 0, f"{repo.name}:\n{proc.stdout[-4000:]}\n{proc.stderr[-2000:]}"
        assert "OK: " in proc.stdout and " 0 worse" in proc.stdout, proc.stdout[-2000:]
    _the_documented_command_line_gate(repos[[r.name for r in repos].index("ldpbench-my-oracle")], site, env)


def _the_documented_command_line_gate(repo: Path, site: Path, env: dict[str, str]) -> None:
    """docs/ci.md's gate for a plugin repository, word for word (issue 29, shortfall 13), and the
    example's baseline refusing other code (shortfall 1)."""
    manifest = json.loads((repo / "reports/baseline/manifest.json").read_text())
    assert manifest["scaffold_example"]["distribution"] == "ldpbench-my-oracle" and manifest["dirty"] is False
    ci = (Path(__file__).resolve().parents[2] / "docs" / "ci.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- plugin-gate -->\n```bash\n(.*?)```", ci, flags=re.S).group(1)
    commands = [line.split("#")[0].split() for line in block.splitlines() if line.startswith("ldpbench ")]
    assert [c[:2] for c in commands] == [["ldpbench", "run"], ["ldpbench", "compare"]], block

    def gate() -> subprocess.CompletedProcess:
        out = []
        for c in commands:
            args = [a.replace("DIR", str(repo / "results" / "gate")) for a in c[1:]]
            out.append(
                subprocess.run(
                    [sys.executable, "-m", "ldpbench", *args],
                    cwd=repo,
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=600,
                )
            )
        assert out[0].returncode == 0, out[0].stderr[-2000:]
        return out[1]

    ok = gate()
    assert ok.returncode == 0 and ok.stdout.startswith("**OK**"), ok.stdout + ok.stderr
    # `python -m` in the repository imports its own package folder first; the installed copy too
    for module in (repo / "ldpbench_my_oracle" / "__init__.py", site / "ldpbench_my_oracle" / "__init__.py"):
        module.write_text(module.read_text() + "\n# my own oracle now\n")
    stale = gate()
    assert stale.returncode == 1 and "example code `ldpbench new-plugin` wrote" in stale.stdout, stale.stdout
    assert "--ldpbench-update-baseline" in stale.stdout


def _run(args: list[str], cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, (
        f"{' '.join(args)} exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    )
    return proc


def test_the_generated_install_lines_work_in_a_fresh_virtual_environment(tmp_path, monkeypatch):
    repo = tmp_path / "ldpbench-fresh-oracle"
    with monkeypatch.context() as generating:  # its baseline run as in the previous test
        generating.setenv("PYTEST_ADDOPTS", " ".join(foreign_pytest_plugins_off()))
        assert main(["new-plugin", "fresh-oracle", "--kind", "oracle", str(repo)]) == 0
    readme = (repo / "README.md").read_text()
    # The README's own lines: ldpbench from the source recorded at generation time, then the plugin.
    (source,) = re.findall(r'^pip install "(ldpbench @ [^"]+)"$', readme, flags=re.M)
    assert source == default_ldpbench_source() and "@v" not in source  # no tag that may not exist
    assert "pip install -e '.[test]'" in readme
    workflow = yaml.safe_load((repo / ".github/workflows/tests.yml").read_text())
    assert f'pip install "{source}"' in [step.get("run") for step in workflow["jobs"]["test"]["steps"]]

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], tmp_path)
    python = str(venv / ("Scripts" if os.name == "nt" else "bin") / "python")
    # --no-compile: byte-compiling SciPy, polars and matplotlib is half of the install's time.
    _run([python, "-m", "pip", "install", "-q", "--no-compile", source], repo)
    _run([python, "-m", "pip", "install", "-q", "--no-compile", "-e", ".[test]"], repo)
    where = _run([python, "-c", "import ldpbench, ldpbench_fresh_oracle; print(ldpbench.__file__)"], tmp_path)
    assert Path(where.stdout.strip()).is_relative_to(venv), f"ldpbench imported from {where.stdout}"

    tests = _run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider"], repo)
    assert "OK: 8 compared, 0 better, 0 worse" in tests.stdout, tests.stdout[-2000:]
    assert "test_privacy_audit" in (repo / "tests/test_conformance.py").read_text()
    # A clean change of seed passes the generated gate too (its README says so).
    reseeded = _run(
        [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_leaderboard.py", "--ldpbench-seed", "7"],
        repo,
    )
    assert "0 worse" in reseeded.stdout and "under --ldpbench-seed 7" in reseeded.stdout, reseeded.stdout[-2000:]


def test_check_plugin_audits_the_generated_oracle_whole(tmp_path, capsys, monkeypatch):
    """The example oracle declares what the kit and both audits need: no part goes unaudited,
    so check-plugin passes without --allow-partial."""
    dest = tmp_path / "repo"
    assert main(["new-plugin", "my-krr", "--kind", "oracle", str(dest), "--no-baseline", "--no-git"]) == 0
    capsys.readouterr()
    monkeypatch.chdir(dest)
    assert main(["check-plugin", "my-krr", "--plugins-dir", "ldpbench_my_krr", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert not out.get("unaudited"), out.get("unaudited")
