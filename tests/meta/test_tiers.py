"""The tier a test belongs to is where it lives: tests/conftest.py marks ``slow`` every test under a
slow-tier folder, so no test is marked by hand.

The fast tier (``pytest -m "not slow"``, CONTRIBUTING.md) is tests/unit/, tests/cli/ and
tests/meta/; tests/statistical/, tests/conformance/, tests/hardening/, tests/benchmarks/ and
tests/system/ run in the full suite only. A test too slow for the fast tier (more than about a
second) moves to the slow folder it belongs to, with its file's name. The durations themselves
are not checked here: on a shared machine they would make this test flaky.
"""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import FAST_TIER, SLOW_TIER, tier_folder
from support import TESTS


def all_test_files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("test_*.py") if "fixtures" not in p.relative_to(TESTS).parts)


def slow_marks(source: str) -> list[int]:
    """The lines of ``source`` that mark something ``slow`` (``pytest.mark.slow``, ``mark.slow``)."""
    return sorted(
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Attribute)
        and node.attr == "slow"
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "mark"
    )


def test_every_test_folder_is_in_one_tier():
    assert not set(FAST_TIER) & set(SLOW_TIER)
    folders = {tier_folder(p) for p in all_test_files()} - {None}
    assert folders - {*FAST_TIER, *SLOW_TIER} == set(), "a new folder of tests: add it to a tier in tests/conftest.py"
    assert {*FAST_TIER, *SLOW_TIER} - folders == set(), "a tier names a folder that holds no tests"
    assert not [p for p in TESTS.glob("test_*.py")], "a test file directly in tests/ belongs to no tier"


def test_no_test_is_marked_slow_by_hand():
    found = []
    for path in all_test_files():
        for line in slow_marks(path.read_text(encoding="utf-8")):
            where = "a fast-tier folder: move the test" if tier_folder(path) in FAST_TIER else "the folder marks it"
            found.append(f"{path.relative_to(TESTS.parent)}:{line}: marked slow by hand ({where})")
    assert found == []


def test_the_tests_of_this_run_are_slow_exactly_in_the_slow_folders(request):
    # What tests/conftest.py did to the items of this very run (under -m "not slow", the fast ones).
    items = request.session.items
    assert items, "this test runs in a session that collected it"
    wrong = [
        item.nodeid
        for item in items
        if (item.get_closest_marker("slow") is not None) != (tier_folder(item.path) in SLOW_TIER)
    ]
    assert wrong == []


def test_the_checks_find_what_they_look_for():
    # A test that cannot fail is a defect: a planted decorator, pytestmark and param are found.
    planted = (
        "import pytest\n\n"
        "pytestmark = pytest.mark.slow\n\n\n"
        "@pytest.mark.slow\n"
        "@pytest.mark.parametrize('x', [1, pytest.param(2, marks=pytest.mark.slow)])\n"
        "def test_x(x):\n"
        "    pass\n"
    )
    assert slow_marks(planted) == [3, 6, 7]
    assert slow_marks("import pytest\n\n\n@pytest.mark.slowly\ndef test_x():\n    pass\n") == []
    assert tier_folder(TESTS / "unit" / "engine" / "test_cell.py") == "unit"
    assert tier_folder(TESTS / "system" / "test_run_cli.py") == "system"
    assert tier_folder(TESTS / "conftest.py") is None
