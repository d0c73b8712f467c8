"""The worked example of the plugin tutorial (docs/plugins/tutorial.md) works as printed (the docs
cannot rot).

Its plugin module is taken from the page, loaded with ``--plugins-dir``, checked by the conformance
kit, and run in a spec that uses the page's own pipeline and metric lines.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

DOC = Path(__file__).resolve().parents[2] / "docs" / "plugins" / "tutorial.md"


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


def test_the_worked_example_passes_the_kit_and_runs(tmp_path, run_cli):
    module = next(b for b in _blocks("python") if "ldpbench_register_postprocessors" in b)
    (tmp_path / "plugs").mkdir()
    (tmp_path / "plugs" / "maxerr.py").write_text(module)

    checked = run_cli("check-plugin", "shrink", "--plugins-dir", "plugs", "--param", "factor=0.8")
    assert checked.returncode == 0, checked.stdout + checked.stderr

    usage = yaml.safe_load(next(b for b in _blocks("yaml") if "max-error" in b))
    spec = {
        "name": "docs-example",
        "seed": 1,
        "repeats": 3,
        "datasets": [{"zipf": {"d": 64, "n": 10_000}}],
        "epsilons": [1],
        "oracles": ["oue"],
        "pipelines": usage["pipelines"],
        "metrics": usage["metrics"],
    }  # (the page's `requires:` names the packaged form; here the folder stands in for it)
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    out = run_cli("run", "spec.yaml", "--plugins-dir", "plugs", "--format", "json", "--out", "res")
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert {r["pipeline"] for r in rows} == {"base", "shrink(factor=0.8)", "shrink+norm-sub"}
    assert {r["metric"] for r in rows} == {"mse", "max-error"}
    assert all(r["failed"] == 0 and r["mean"] > 0 for r in rows)
