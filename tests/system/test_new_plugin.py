"""``ldpbench new-plugin``: the repository it writes installs, and its tests pass as generated.

The test generates one plugin of every kind (each baseline computed by running the generated
gate once), pip-installs them (a real build of each generated pyproject.toml, into a folder put
on PYTHONPATH, so this environment is left alone) and runs each repository's own tests.
"""

from __future__ import annotations

import os
import subprocess
import sys

from ldpbench.cli import main
from ldpbench.scaffold import KINDS


def test_every_kind_installs_and_its_generated_tests_pass(tmp_path):
    repos = []
    for kind in sorted(KINDS):
        dest = tmp_path / f"ldpbench-my-{kind}"
        assert main(["new-plugin", f"my-{kind}", "--kind", kind, str(dest)]) == 0
        assert (dest / "reports/baseline/leaderboard.json").is_file()
        assert (dest / "reports/baseline/manifest.json").is_file()
        repos.append(dest)
    site = tmp_path / "site"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), *map(str, repos)],
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
    for repo in repos:
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert proc.returncode == 0, f"{repo.name}:\n{proc.stdout[-4000:]}\n{proc.stderr[-2000:]}"
        assert "OK: " in proc.stdout and " 0 worse" in proc.stdout, proc.stdout[-2000:]
        if repo.name.endswith("oracle"):
            assert "test_privacy_audit PASSED" in proc.stdout or "passed" in proc.stdout
