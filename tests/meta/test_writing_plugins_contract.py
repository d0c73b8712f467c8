"""docs/writing-plugins.md cannot drift from the contract in ldpbench.types.

- its worked oracle, taken from the page as printed, registers, passes the conformance kit through
  the page's own ``ldpbench check-plugin`` command, and runs in a spec;
- every public member of every base class and every tag field is in the page's member table for
  that class.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
import yaml

from ldpbench import build_plugins
from ldpbench.types import (
    KINDS,
    Channel,
    ChannelTags,
    Estimate,
    ExecutorTags,
    MetricTags,
    OracleTags,
    Plugin,
    PostProcessorTags,
)

DOC = Path(__file__).resolve().parents[2] / "docs" / "writing-plugins.md"
TEXT = DOC.read_text(encoding="utf-8")

#: Section heading in the page -> the class whose members it must list.
SECTIONS: dict[str, type] = {
    "Plugin (every kind)": Plugin,
    "Oracle": KINDS["oracle"].base,
    "OracleTags": OracleTags,
    "PostProcessor": KINDS["postprocessor"].base,
    "PostProcessorTags": PostProcessorTags,
    "PriorFamily": KINDS["prior"].base,
    "Metric": KINDS["metric"].base,
    "MetricTags": MetricTags,
    "Dataset": KINDS["dataset"].base,
    "Protocol": KINDS["protocol"].base,
    "Executor": KINDS["executor"].base,
    "ExecutorTags": ExecutorTags,
    "Channel": Channel,
    "ChannelTags": ChannelTags,
    "Estimate": Estimate,
}


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", TEXT, flags=re.S)


def _section(title: str) -> str:
    match = re.search(rf"^### {re.escape(title)}\n(.*?)(?=^#{{2,3}} |\Z)", TEXT, flags=re.S | re.M)
    assert match, f"docs/writing-plugins.md has no '### {title}' section"
    return match.group(1)


def _members(cls: type) -> set[str]:
    """Public members the class itself declares (methods, properties, class attributes, fields)."""
    names = {n for n in vars(cls) if not n.startswith("_")}
    names |= {n for n in getattr(cls, "__annotations__", {}) if not n.startswith("_")}
    if dataclasses.is_dataclass(cls):
        names |= {f.name for f in dataclasses.fields(cls)}
    if cls is KINDS["oracle"].base:
        names |= {"d", "epsilon"}  # set by Oracle.__init__
    return names


def test_every_kind_has_a_section():
    assert set(KINDS.values()) <= set(SECTIONS.values())


@pytest.mark.parametrize("title", sorted(SECTIONS))
def test_every_contract_member_is_documented(title):
    documented = set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", _section(title)))
    missing = _members(SECTIONS[title]) - documented
    assert not missing, f"docs/writing-plugins.md, '### {title}': document {sorted(missing)}"


def test_the_prior_contract_names_log_weight_not_log_pmf():
    row = next(line for line in TEXT.splitlines() if line.startswith("| prior family |"))
    assert "`log_weight`" in row and "log_pmf" not in row


def _worked_oracle() -> str:
    return next(b for b in _blocks("python") if "ldpbench_register_oracles" in b)


@pytest.mark.slow
def test_the_worked_oracle_passes_the_kit_as_the_page_says(tmp_path, run_cli):
    command = next(b for b in _blocks("bash") if "check-plugin my-sue" in b).split()
    assert command[:2] == ["ldpbench", "check-plugin"]
    folder = command[command.index("--plugins-dir") + 1].rstrip("/")
    (tmp_path / folder).mkdir()
    (tmp_path / folder / "sue.py").write_text(_worked_oracle())

    out = run_cli(*command[1:], "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    outcomes = {c["check"]: c["outcome"] for c in json.loads(out.stdout)["checks"]}
    assert outcomes.pop("check_channel") == "not applicable"  # as the page says
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


def test_the_worked_oracle_does_not_take_a_builtin_name():
    namespace: dict = {}
    exec(compile(_worked_oracle(), "sue.py", "exec"), namespace)  # noqa: S102 - our own docs
    builtin = {info.name for info in build_plugins().registry("oracle")}
    assert "sue" in builtin and namespace["SUE"].name not in builtin


def test_the_worked_oracle_declares_its_capabilities_by_tags(tmp_path):
    namespace: dict = {}
    exec(compile(_worked_oracle(), "sue.py", "exec"), namespace)  # noqa: S102 - our own docs
    sue = namespace["SUE"]
    small, large = sue(d=8, epsilon=1.0).tags(), sue(d=100, epsilon=1.0).tags()
    assert small.aggregate and small.output_table and small.support_matrix and not small.finite_output
    assert not large.output_table and large.chunk_users == 40_000
