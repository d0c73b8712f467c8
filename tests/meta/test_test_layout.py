"""The unit tier mirrors the code: a module's tests are found where the module is.

``tests/unit/<package>/test_<module>.py`` tests ``ldpbench/<package>/<module>.py`` (or the private
``_<module>.py``), ``tests/unit/test_<package>.py`` a package's ``__init__.py``;
``tests/unit/plugins/...`` mirrors ``plugins/`` (the built-in plugins, ``ldpbench_plugins``) and
``tests/unit/scripts/`` mirrors ``scripts/``. A unit test file that names no module fails here, and
so does a module of ``ldpbench/`` without a test file named after it, unless :data:`UNTESTED_HERE`
says where it is tested instead (or why it needs no test). A new module gets a test file.
"""

from __future__ import annotations

import re
from pathlib import Path

from support import ROOT, TESTS

UNIT = TESTS / "unit"

#: The source folder each first folder of tests/unit/ mirrors (any other: ldpbench/ itself).
MIRRORS = {"plugins": ROOT / "plugins", "scripts": ROOT / "scripts"}
CORE = ROOT / "ldpbench"

#: Modules of ldpbench/ without a test file of their own, and why (where they are tested).
UNTESTED_HERE: dict[str, str] = {
    "__init__.py": "the public surface: tests/meta/test_surface.py",
    "__main__.py": "`python -m ldpbench`: every subprocess run of tests/cli/ and tests/system/ (conftest's run_cli)",
    "audit/__init__.py": "re-exports only",
    "boundary/__init__.py": "a package docstring only",
    "boundary/failures.py": "plugin failures described: tests/hardening/test_plugin_failure.py, tests/cli/test_leaderboard_failures.py",
    "boundary/guard.py": "time limits, exits, interrupts: tests/hardening/test_cell_timeout.py, tests/hardening/test_interrupts_and_timeouts.py",
    "cli/__init__.py": "the parser and the exit codes: tests/cli/test_exit_codes.py, tests/cli/test_help_text.py",
    "cli/_common.py": "the flags every command shares: through tests/cli/ and tests/system/test_run_cli.py",
    "cli/audit_cmd.py": "tests/cli/test_audit_cli.py",
    "cli/check_plugin_cmd.py": "tests/cli/test_check_plugin_kinds.py, tests/system/test_check_plugin_cli.py",
    "cli/compare_cmd.py": "tests/cli/test_compare_cli.py, tests/system/test_compare_regression.py",
    "cli/datasets_cmd.py": "tests/cli/test_datasets_cli.py",
    "cli/describe_cmd.py": "tests/meta/test_kinds.py, tests/system/test_run_cli.py",
    "cli/leaderboard_cmd.py": "tests/cli/test_leaderboard_failures.py, tests/system/test_leaderboard_cli.py",
    "cli/new_plugin_cmd.py": "tests/cli/test_new_plugin.py",
    "cli/plugins_cmd.py": "tests/meta/test_kinds.py, tests/cli/test_exit_codes.py",
    "cli/rank_cmd.py": "tests/system/test_rank_cli.py, tests/cli/test_rank_metric.py",
    "cli/report_cmd.py": "tests/cli/test_report_cli.py, tests/cli/test_report_figures.py",
    "cli/run_cmd.py": "tests/system/test_run_cli.py, tests/cli/test_earlier_spec_rows.py",
    "cli/validate_cmd.py": "tests/system/test_capabilities.py, tests/unit/plugins/oracles/test_she.py",
    "engine/__init__.py": "a package docstring only",
    "engine/rows.py": "the row schema: tests/unit/results/test_store.py, tests/unit/leaderboard/test_aggregate.py",
    "engine/theory.py": "tests/statistical/test_theory.py",
    "hookspecs.py": "the registration hooks: tests/unit/loading/test_manager.py; one per kind: tests/meta/test_kinds.py",
    "leaderboard/__init__.py": "a package docstring only",
    "loading/__init__.py": "a package docstring only",
    "report/__init__.py": "a package docstring only",
    "report/history.py": "`ldpbench report --history`: tests/cli/test_report_history.py",
    "report/html.py": "tests/cli/test_html_report.py, tests/system/test_html_browser.py",
    "report/markdown.py": "`ldpbench report`: tests/cli/test_report_cli.py, tests/system/test_report_cli.py",
    "report/sections.py": "the report's sections: tests/system/test_report_cli.py, tests/system/test_report_statistics.py",
    "results/__init__.py": "a package docstring only",
    "results/read.py": "a folder read back: tests/unit/test_runner.py, tests/cli/test_earlier_spec_rows.py",
    "results/status.py": "done cells: tests/unit/results/test_store.py; stale ones: tests/cli/test_resume_identity.py",
    "results/versioning.py": "schema versions: tests/unit/results/test_store.py, tests/system/test_run_schema_guard.py",
    "scaffold/__init__.py": "`ldpbench new-plugin`: tests/cli/test_new_plugin.py, tests/system/test_new_plugin.py",
    "scaffold/examples.py": "every example passes the kit as generated: tests/system/test_new_plugin.py",
    "scaffold/files.py": "the repository layout: tests/cli/test_new_plugin.py",
    "scaffold/source.py": "the install source and project URL: tests/cli/test_new_plugin.py",
    "spec/__init__.py": "a package docstring only",
    "spec/expand.py": "labels and cells of a spec: tests/unit/spec/test_validate.py",
    "spec/model.py": "the Spec data model: tests/unit/spec/test_validate.py",
    "spec/validate/attacks.py": "a step of validation: tests/unit/engine/test_poisoning.py (through load_spec_text, FILE:LINE messages)",
    "spec/validate/combinations.py": "a step of validation: tests/unit/spec/test_validate.py (through load_spec, FILE:LINE messages)",
    "spec/validate/context.py": "a step of validation: tests/unit/spec/test_validate.py (through load_spec, FILE:LINE messages)",
    "spec/validate/dataset_facts.py": "a step of validation: tests/unit/spec/test_validate.py (through load_spec, FILE:LINE messages)",
    "spec/validate/entry.py": "a step of validation: tests/unit/spec/test_validate.py (through load_spec, FILE:LINE messages)",
    "spec/validate/limits.py": "a step of validation: tests/unit/spec/test_validate.py (through load_spec, FILE:LINE messages)",
    "spec/validate/parameters.py": "a step of validation: tests/unit/spec/test_validate.py (through load_spec, FILE:LINE messages)",
    "spec/validate/pipelines.py": "a step of validation: tests/unit/spec/test_validate.py (through load_spec, FILE:LINE messages)",
    "spec/validate/plugin_dirs.py": "a step of validation: tests/unit/spec/test_validate.py (through load_spec, FILE:LINE messages)",
    "spec/validate/plugin_lists.py": "a step of validation: tests/unit/spec/test_validate.py (through load_spec, FILE:LINE messages)",
    "spec/validate/privacy_budgets.py": "a step of validation: tests/unit/spec/test_validate.py (through load_spec, FILE:LINE messages)",
    "spec/validate/requirements.py": "a step of validation: tests/unit/spec/test_validate.py (through load_spec, FILE:LINE messages)",
    "spec/validate/results.py": "a step of validation: tests/unit/spec/test_validate.py (through load_spec, FILE:LINE messages)",
    "spec/validate/settings.py": "a step of validation: tests/unit/spec/test_validate.py (through load_spec, FILE:LINE messages)",
    "spec/validate/steps.py": "a step of validation: tests/unit/spec/test_validate.py (through load_spec, FILE:LINE messages)",
    "stats/__init__.py": "a package docstring only",
    "testing/__init__.py": "the kit's lazy re-exports: tests/meta/test_surface.py",
    "testing/checks/__init__.py": "a package docstring only",
    "testing/checks/machinery.py": "through the kit's checks: tests/unit/testing/checks/test_oracle.py",
    "testing/gate.py": "the leaderboard gate: tests/cli/test_leaderboard_check.py, tests/system/test_leaderboard_check.py",
    "testing/pytest_plugin.py": "tests/meta/test_pytest_plugin.py, tests/system/test_pytest_plugin.py",
    "testing/stats.py": "the kit's exact laws: tests/unit/testing/checks/test_oracle.py, tests/statistical/test_cms.py",
    "types/__init__.py": "re-exports the contract; its moved name warns: tests/meta/test_surface.py",
    "types/data.py": "Estimate and Population: every unit test; read-only copies: tests/unit/boundary/test_values.py",
    "types/kinds.py": "tests/meta/test_kinds.py",
    "types/oracle.py": "derived tags: tests/unit/types/test_tags.py; every built-in: tests/unit/plugins/test_oracles.py",
    "types/prior.py": "the prior-family contract: tests/unit/plugins/priors/test_base.py",
    "util/__init__.py": "a package docstring only",
    "util/safeio.py": "bounded reads: tests/unit/spec/test_validate.py, tests/hardening/test_io_faults.py",
}


def module_for(test_file: Path) -> list[Path]:
    """The source files a unit test file may be named after (one of them must exist)."""
    parts = test_file.relative_to(UNIT).parts
    name = parts[-1].removeprefix("test_").removesuffix(".py")
    root, folders = (MIRRORS[parts[0]], parts[1:-1]) if parts[0] in MIRRORS else (CORE, parts[:-1])
    where = root.joinpath(*folders)
    return [where / f"{name}.py", where / f"_{name}.py", where / name / "__init__.py"]


def unit_file_for(module: Path, root: Path = CORE) -> Path:
    """The unit test file named after a module of ``root``."""
    parts = module.relative_to(root).parts
    if parts[-1] == "__init__.py":
        return UNIT.joinpath(*parts[:-2], f"test_{parts[-2]}.py")
    return UNIT.joinpath(*parts[:-1], f"test_{parts[-1].removesuffix('.py').lstrip('_')}.py")


def unit_test_files() -> list[Path]:
    return sorted(UNIT.rglob("test_*.py"))


def misnamed(files: list[Path]) -> list[str]:
    return [str(f.relative_to(ROOT)) for f in files if not any(m.is_file() for m in module_for(f))]


def untested(modules: list[Path], root: Path = CORE) -> list[str]:
    """The modules with neither a test file named after them nor an entry in UNTESTED_HERE."""
    names = [m.relative_to(root).as_posix() for m in modules]
    return [n for n, m in zip(names, modules) if n not in UNTESTED_HERE and not unit_file_for(m, root).is_file()]


def test_every_unit_test_file_names_a_module():
    files = unit_test_files()
    assert len(files) > 50
    assert misnamed(files) == [], "name each file of tests/unit/ after the module it tests, in its folder"


def test_every_core_module_has_a_test_file_or_says_where_it_is_tested():
    modules = sorted(CORE.rglob("*.py"))
    missing = untested(modules)
    assert missing == [], (
        "no tests/unit/<package>/test_<module>.py for these modules of ldpbench/: write one, or add the "
        f"module to UNTESTED_HERE with where it is tested: {missing}"
    )


def test_the_exceptions_are_still_needed_and_say_where():
    known = {m.relative_to(CORE).as_posix() for m in CORE.rglob("*.py")}
    assert set(UNTESTED_HERE) <= known, f"no such module: {sorted(set(UNTESTED_HERE) - known)}"
    has_file = [m for m in UNTESTED_HERE if m != "__init__.py" and unit_file_for(CORE / m).is_file()]
    assert has_file == [], "these modules have a test file now: take them off UNTESTED_HERE"
    cited = {path for reason in UNTESTED_HERE.values() for path in re.findall(r"tests/[\w/]+\.py", reason)}
    assert cited and [p for p in sorted(cited) if not (ROOT / p).is_file()] == []


def test_the_checks_find_what_they_look_for(tmp_path):
    # A test that cannot fail is a defect: a misnamed file and a module without tests are found.
    assert misnamed([UNIT / "engine" / "test_no_such_module.py", UNIT / "engine" / "test_cell.py"]) == [
        "tests/unit/engine/test_no_such_module.py"
    ]
    assert misnamed([UNIT / "plugins" / "oracles" / "test_hadamard.py", UNIT / "test_engine_cell.py"]) == [
        "tests/unit/test_engine_cell.py"
    ]
    assert unit_file_for(CORE / "engine" / "cell.py") == UNIT / "engine" / "test_cell.py"
    assert unit_file_for(CORE / "cli" / "_common.py") == UNIT / "cli" / "test_common.py"
    assert unit_file_for(CORE / "scaffold" / "__init__.py") == UNIT / "test_scaffold.py"
    (tmp_path / "engine").mkdir()
    (tmp_path / "engine" / "new_stage.py").write_text("")
    assert untested([tmp_path / "engine" / "new_stage.py"], tmp_path) == ["engine/new_stage.py"]
