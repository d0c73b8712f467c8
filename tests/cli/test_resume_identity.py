"""Resume never serves stale numbers (issue 10): an edited core module reruns every cell and says
why (plugins, datasets and hand-edited rows: tests/system/test_resume_identity.py).
"""

from __future__ import annotations

import json

import pytest
from support import RESUME_CELLS, resume_project, run_resume


@pytest.fixture
def project(tmp_path):
    return resume_project(tmp_path)


def test_an_edited_core_reruns_every_cell_and_says_why(project, capsys, monkeypatch, tmp_path):
    # The engine's own code shapes the numbers as much as a plugin's: a core module edited in a
    # checkout (whose version does not move) must make every stored cell stale. A stand-in
    # module joins the hashed core, and is edited between the runs.
    from ldpbench.loading import identity

    (tmp_path / "core_standin.py").write_text("SCALE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    core = identity.core_modules()
    monkeypatch.setattr(identity, "core_modules", lambda: [*core, "core_standin"])
    identity.core_identity.cache_clear()
    try:
        assert run_resume(capsys, project)[0] == 0
        manifest = json.loads((project / "out" / "manifest.json").read_text())
        assert manifest["identities"][identity.CORE_KEY]["source_hash"] == identity.core_identity().source_hash
        (tmp_path / "core_standin.py").write_text("SCALE = 2  # an edit\n")
        identity.core_identity.cache_clear()  # a new process reads the edited file
        code, _, err = run_resume(capsys, project, "--no-recompute")
        assert code == 2 and f"{RESUME_CELLS} stored cells are stale: core 'ldpbench' changed (source)" in err
        code, _, err = run_resume(capsys, project)
        assert code == 0
        assert f"ldpbench: {RESUME_CELLS} cells rerun: core 'ldpbench' changed (source)" in err
        assert f"{RESUME_CELLS} cells ({RESUME_CELLS} run, 0 already done)" in err
    finally:
        identity.core_identity.cache_clear()
