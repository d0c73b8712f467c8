"""The tutorial's worked oracle (docs/plugins/tutorial.md), taken from the page as printed,
registers, passes the conformance kit through the page's own ``ldpbench check-plugin`` command,
and runs in a spec (the pages against the contract: tests/meta/test_writing_plugins_contract.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

DOCS = Path(__file__).resolve().parents[2] / "docs"


TUTORIAL = (DOCS / "plugins" / "tutorial.md").read_text(encoding="utf-8")


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", TUTORIAL, flags=re.S)


def _worked_oracle() -> str:
    return next(b for b in _blocks("python") if "ldpbench_register_oracles" in b)


def test_the_worked_oracle_passes_the_kit_as_the_page_says(tmp_path, run_cli):
    command = next(b for b in _blocks("bash") if "check-plugin my-sue" in b).split()
    assert command[:2] == ["ldpbench", "check-plugin"]
    folder = command[command.index("--plugins-dir") + 1].rstrip("/")
    (tmp_path / folder).mkdir()
    (tmp_path / folder / "sue.py").write_text(_worked_oracle())

    out = run_cli(*command[1:], "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    outcomes = {c["check"]: c["outcome"] for c in json.loads(out.stdout)["checks"]}
    # as the page says: no finite output, and unbiased (the checks of a declared bias do not apply)
    for name in (
        "check_channel",
        "check_output_table_moments",
        "check_declared_mean_aggregate",
        "check_declared_mean_per_user",
    ):
        assert outcomes.pop(name) == "not applicable", name
    assert set(outcomes.values()) == {"passed"}, outcomes

    spec = {
        "name": "sue-docs",
        "seed": 1,
        "repeats": 2,
        "datasets": [{"zipf": {"d": 32, "n": 5000}}],
        "epsilons": [1],
        "oracles": ["my-sue", "sue"],
    }
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    ran = run_cli("run", "spec.yaml", "--plugins-dir", folder, "--format", "json", "--out", "res", "--workers", "1")
    assert ran.returncode == 0, ran.stderr
    rows = json.loads(ran.stdout)
    assert {r["oracle"] for r in rows} == {"my-sue", "sue"} and all(r["failed"] == 0 for r in rows)
