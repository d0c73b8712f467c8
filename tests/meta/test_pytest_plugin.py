"""The pytest plugin (entry point ``pytest11 = ldpbench``) is registered through its entry point.

Its fixtures, used the way a third-party repo uses them (pytester), are tested in
tests/system/test_pytest_plugin.py.
"""

from __future__ import annotations

# pytester's in-process runs restore sys.modules afterwards, dropping modules first imported
# inside them; a second run would then import a second copy of polars whose classes do not match
# the first's. Importing the whole run path here keeps one copy for every run (and spares each
# run re-importing hypothesis, whose pytest plugin imports it at the end of every session).
import hypothesis  # noqa: F401,E402

import ldpbench.runner  # noqa: F401,E402
import ldpbench.testing.gate  # noqa: F401,E402

# Declared here too, not only in tests/system/test_pytest_plugin.py: `pytest tests/meta` alone
# collects no other file that asks for the fixture.
pytest_plugins = ["pytester"]


def test_the_plugin_is_registered_through_its_entry_point(pytester):
    result = pytester.runpytest("--help")
    result.stdout.fnmatch_lines(["*--ldpbench-seed*", "*--ldpbench-update-baseline*"])
