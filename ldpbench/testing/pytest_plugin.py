"""pytest fixtures for testing ldpbench plugins (exposed through the ``pytest11`` entry point).

- ``ldpbench_plugins``: a fresh :class:`~ldpbench.pluginmanager.Plugins` from ``build_plugins()``
  (entry points as installed), one per test, so registering extra plugins never leaks.
- ``ldpbench_rng``: a ``numpy.random.Generator`` seeded from ``--ldpbench-seed`` (default 0) and
  the test's node id: reproducible, independent across tests, and unaffected by test order.
- ``ldpbench_seed``: that seed as an int (print it in failure messages to replay a test).
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from ldpbench.pluginmanager import Plugins, build_plugins


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ldpbench")
    group.addoption(
        "--ldpbench-seed",
        type=int,
        default=0,
        help="base seed of the ldpbench_rng fixture (default 0); vary it to re-run statistical tests",
    )


@pytest.fixture
def ldpbench_seed(request: pytest.FixtureRequest) -> int:
    """The seed of this test's ``ldpbench_rng``: ``--ldpbench-seed`` mixed with the node id."""
    try:
        base = int(request.config.getoption("--ldpbench-seed"))
    except ValueError:  # the plugin is used through an import, not registered: no option
        base = 0
    return (base << 32) ^ zlib.crc32(request.node.nodeid.encode())


@pytest.fixture
def ldpbench_rng(ldpbench_seed: int) -> np.random.Generator:
    """A ``numpy.random.Generator`` for this test (never the global state)."""
    return np.random.default_rng(ldpbench_seed)


@pytest.fixture
def ldpbench_plugins() -> Plugins:
    """Every installed ldpbench plugin, freshly discovered for this test."""
    return build_plugins()
