"""The plugin pages (docs/plugins/) cannot drift from the contract in ldpbench.types and the kit.

- the tutorial's worked oracle, taken from the page as printed, declares its capabilities and
  takes no built-in name (that it passes the kit and runs: tests/system/test_writing_plugins_contract.py);
- every public member of every base class and every tag field is in the reference's member table
  for that class, and every field of ``Param`` in its parameters table;
- every public name of ``ldpbench.testing`` and every check of every kind is on the testing page;
- docs/writing-plugins.md, where older links point, links to the three pages.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from pathlib import Path

import pytest
from support import builtin_plugins

from ldpbench.params import Param
from ldpbench.types import (
    KINDS,
    AttackTags,
    Channel,
    ChannelTags,
    Estimate,
    ExecutorTags,
    MetricTags,
    OracleTags,
    Plugin,
    PostProcessorTags,
)

DOCS = Path(__file__).resolve().parents[2] / "docs"


INDEX = DOCS / "writing-plugins.md"


TUTORIAL = (DOCS / "plugins" / "tutorial.md").read_text(encoding="utf-8")


REFERENCE = (DOCS / "plugins" / "reference.md").read_text(encoding="utf-8")


TESTING = (DOCS / "plugins" / "testing.md").read_text(encoding="utf-8")


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
    "Attack": KINDS["attack"].base,
    "AttackTags": AttackTags,
    "Channel": Channel,
    "ChannelTags": ChannelTags,
    "Estimate": Estimate,
}


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", TUTORIAL, flags=re.S)


def _section(text: str, heading: str, page: str) -> str:
    match = re.search(rf"^{re.escape(heading)}\n(.*?)(?=^#{{2,3}} |\Z)", text, flags=re.S | re.M)
    assert match, f"{page} has no '{heading}' section"
    return match.group(1)


def _code_names(text: str) -> set[str]:
    """Names in backticks, alone (`name`) or called (`name(n, f)`)."""
    return set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)(?:\([^`]*\))?`", text))


def _call(cls: type, name: str) -> str | None:
    """``name(a, b)`` as the class declares the method (no ``self``; ``*args``), or None for a
    member that is not a method (an attribute, a property, a nested class)."""
    try:
        obj = inspect.getattr_static(cls, name)
    except AttributeError:  # d, epsilon: set by __init__
        return None
    if isinstance(obj, property) or inspect.isclass(obj) or not callable(getattr(cls, name, None)):
        return None
    function = obj.__func__ if isinstance(obj, (classmethod, staticmethod)) else obj
    params = list(inspect.signature(function).parameters.values())
    if params and not isinstance(obj, staticmethod):
        params = params[1:]  # self, or a classmethod's class
    stars = {inspect.Parameter.VAR_POSITIONAL: "*", inspect.Parameter.VAR_KEYWORD: "**"}
    return f"{name}({', '.join(stars.get(p.kind, '') + p.name for p in params)})"


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
    assert {kind.base for kind in KINDS.values()} <= set(SECTIONS.values())


@pytest.mark.parametrize("title", sorted(SECTIONS))
def test_every_contract_member_is_documented(title):
    documented = _code_names(_section(REFERENCE, f"### {title}", "docs/plugins/reference.md"))
    missing = _members(SECTIONS[title]) - documented
    assert not missing, f"docs/plugins/reference.md, '### {title}': document {sorted(missing)}"


@pytest.mark.parametrize("title", sorted(SECTIONS))
def test_every_contract_method_shows_its_signature(title):
    """A plugin author reads what to pass and what comes back without opening our source."""
    section = _section(REFERENCE, f"### {title}", "docs/plugins/reference.md")
    calls = {_call(SECTIONS[title], name) for name in _members(SECTIONS[title])} - {None}
    missing = sorted(c for c in calls if f"`{c}`" not in section)
    assert not missing, f"docs/plugins/reference.md, '### {title}': show the signatures {missing}"


def test_every_param_field_is_documented():
    documented = _code_names(_section(REFERENCE, "## Names and parameters", "docs/plugins/reference.md"))
    missing = {f.name for f in dataclasses.fields(Param)} - documented
    assert not missing, f"docs/plugins/reference.md, '## Names and parameters': document {sorted(missing)}"


def test_the_prior_contract_names_log_weight_not_log_pmf():
    row = next(line for line in REFERENCE.splitlines() if line.startswith("| prior family |"))
    assert "`log_weight`" in row and "log_pmf" not in row


def test_every_kit_name_and_check_is_on_the_testing_page():
    import ldpbench.testing as kit
    from ldpbench.types.kinds import CHECKED_KINDS

    documented = _code_names(TESTING)
    groups = [KINDS[kind].resolve(KINDS[kind].checks).CHECKS for kind in CHECKED_KINDS]
    check_names = {fn.__name__ for group in groups for fn in group}
    missing = (set(kit.__all__) - {"stats"} | check_names | {"expected_failed_checks"}) - documented
    assert not missing, f"docs/plugins/testing.md: document {sorted(missing)}"


def test_the_old_page_links_to_the_three_pages():
    index = INDEX.read_text(encoding="utf-8")
    for page in ("tutorial", "reference", "testing"):
        assert f"](plugins/{page}.md" in index, f"docs/writing-plugins.md: no link to plugins/{page}.md"


def _worked_oracle() -> str:
    return next(b for b in _blocks("python") if "ldpbench_register_oracles" in b)


def test_the_worked_oracle_does_not_take_a_builtin_name():
    namespace: dict = {}
    exec(compile(_worked_oracle(), "sue.py", "exec"), namespace)  # noqa: S102 - our own docs
    builtin = {info.name for info in builtin_plugins().registry("oracle")}
    assert "sue" in builtin and namespace["SUE"].name not in builtin


def test_the_worked_oracle_declares_its_capabilities_by_tags(tmp_path):
    namespace: dict = {}
    exec(compile(_worked_oracle(), "sue.py", "exec"), namespace)  # noqa: S102 - our own docs
    sue = namespace["SUE"]
    small, large = sue(d=8, epsilon=1.0).tags(), sue(d=100, epsilon=1.0).tags()
    assert small.aggregate and small.output_table and small.support_matrix and not small.finite_output
    assert not large.output_table and large.chunk_users == 40_000
