"""pytest fixtures for testing ldpbench plugins (exposed through the ``pytest11`` entry point).

- ``ldpbench_plugins``: a fresh :class:`~ldpbench.loading.manager.Plugins` from ``build_plugins()``
  (entry points as installed), one per test, so registering extra plugins never leaks.
- ``ldpbench_rng``: a ``numpy.random.Generator`` seeded from ``--ldpbench-seed`` (default 0) and
  the test's node id: reproducible, independent across tests, and unaffected by test order.
- ``ldpbench_seed``: that seed as an int (print it in failure messages to replay a test).
- ``ldpbench_leaderboard``: a function ``check(spec, baseline, thresholds=(), ...)`` that runs a
  spec (or a list of specs) in the test's temp dir, compares its leaderboard with a committed
  baseline exactly as ``ldpbench compare`` does, and fails the test with the Markdown comparison
  when a row got worse beyond its threshold and its noise, fails in more repeats than in the
  baseline, or is no longer produced (unless ``allow_missing=True``). With
  ``--ldpbench-update-baseline`` it writes the baseline instead, refusing a run in which a plugin
  failed (docs/ci.md). ``--ldpbench-seed N`` reruns every spec under seed N instead of its own
  (is a clean change of seed within the gate's noise?), over any ``seed=`` the test passes::

      def test_leaderboard(ldpbench_leaderboard):
          ldpbench_leaderboard("specs/ci.yaml", "reports/ci-baseline/leaderboard.json",
                               thresholds=["mse:5%"])
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest

from ldpbench.loading.manager import Plugins, build_plugins


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ldpbench")
    group.addoption(
        "--ldpbench-seed",
        type=int,
        default=None,
        metavar="N",
        help="reseed: the base seed of the ldpbench_rng fixture (default 0), and the seed that "
        "ldpbench_leaderboard runs every spec with instead of the spec's own (over a seed= the test "
        "passes); vary it to re-run statistical tests and to check that the gate passes on noise",
    )
    group.addoption(
        "--ldpbench-allow-not-comparable",
        action="store_true",
        default=False,
        help="ldpbench_leaderboard does not fail on rows whose fingerprints differ from the baseline "
        "(a plugin changed on purpose; re-baseline with --ldpbench-update-baseline next)",
    )
    group.addoption(
        "--ldpbench-update-baseline",
        action="store_true",
        default=False,
        help="ldpbench_leaderboard writes the current leaderboard to the baseline instead of comparing",
    )


#: The name under which a leaderboard check records its summary line in the test's report.
#: A report's ``user_properties`` travel from a pytest-xdist worker to the controller, so the
#: summary reaches the terminal whether the tests ran in one process or in many.
SUMMARY_PROPERTY = "ldpbench_leaderboard"


class _LeaderboardSummaries:
    """Collects the summary line of every leaderboard check of the session, printed at its end."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call":
            return
        self.lines += [
            f"{report.nodeid}: {value}" for name, value in report.user_properties if name == SUMMARY_PROPERTY
        ]

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        """One line per leaderboard check, passed or not: a gate that compared nothing must be seen."""
        if self.lines:
            terminalreporter.section("ldpbench leaderboard")
            for line in self.lines:
                terminalreporter.write_line(line)


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(_LeaderboardSummaries(), "ldpbench-leaderboard-summaries")


@pytest.fixture
def ldpbench_seed(request: pytest.FixtureRequest) -> int:
    """The seed of this test's ``ldpbench_rng``: ``--ldpbench-seed`` mixed with the node id."""
    base = command_line_seed(request.config)
    return ((base or 0) << 32) ^ zlib.crc32(request.node.nodeid.encode())


@pytest.fixture
def ldpbench_rng(ldpbench_seed: int) -> np.random.Generator:
    """A ``numpy.random.Generator`` for this test (never the global state)."""
    return np.random.default_rng(ldpbench_seed)


@pytest.fixture
def ldpbench_plugins() -> Plugins:
    """Every installed ldpbench plugin, freshly discovered for this test."""
    return build_plugins()


def _option(config: pytest.Config, name: str, default: object) -> object:
    try:
        return config.getoption(name)
    except ValueError:  # the plugin is used through an import, not registered: no option
        return default


def command_line_seed(config: pytest.Config) -> int | None:
    """``--ldpbench-seed N``, or None when not given."""
    seed = _option(config, "--ldpbench-seed", None)
    return None if seed is None else int(seed)  # type: ignore[call-overload]


@pytest.fixture
def ldpbench_leaderboard(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[..., object]:
    """Run a leaderboard and fail the test when it regressed against a baseline.

    Call it as ``check(spec, baseline, thresholds=(), z=5.0, workers=1, executor=None,
    plugins_dirs=(), seed=None, allow_missing=False, allow_not_comparable=None)``; ``spec`` may be
    a list of specs (merged into one leaderboard). ``allow_not_comparable`` defaults to the
    ``--ldpbench-allow-not-comparable`` option; ``seed`` is replaced by ``--ldpbench-seed`` when
    given (the summary line then names it). The session ends with one summary line per check.
    Relative paths are taken from the pytest root directory. Returns the
    :class:`~ldpbench.testing.gate.LeaderboardCheck` (its ``markdown`` holds the
    changed rows) when nothing regressed.
    """
    from ldpbench.errors import LdpbenchError, SpecError
    from ldpbench.leaderboard.compare import DEFAULT_Z
    from ldpbench.testing.gate import check_leaderboard

    root = Path(str(request.config.rootpath))
    update = bool(_option(request.config, "--ldpbench-update-baseline", False))

    def resolve(path: str | Path) -> Path:
        path = Path(path)
        return path if path.is_absolute() else root / path

    def check(
        spec: str | Path | Sequence[str | Path],
        baseline: str | Path,
        thresholds: Sequence[str] = (),
        *,
        z: float = DEFAULT_Z,
        workers: int | None = 1,
        executor: str | None = None,
        plugins_dirs: Sequence[str | Path] = (),
        seed: int | None = None,
        allow_missing: bool = False,
        allow_not_comparable: bool | None = None,
    ) -> object:
        specs = [spec] if isinstance(spec, (str, Path)) else list(spec)
        reseeded = command_line_seed(request.config)
        if reseeded is not None:
            seed = reseeded  # the command line reseeds every check of the session
        try:
            result = check_leaderboard(
                [resolve(s) for s in specs],
                resolve(baseline),
                out=tmp_path / "ldpbench-leaderboard",
                thresholds=thresholds,
                z=z,
                workers=workers,
                executor=executor,
                plugins_dirs=[resolve(d) for d in plugins_dirs],
                seed=seed,
                update=update,
                allow_missing=allow_missing,
                allow_not_comparable=allow_not_comparable
                if allow_not_comparable is not None
                else bool(_option(request.config, "--ldpbench-allow-not-comparable", False)),
            )
        except SpecError as exc:
            pytest.fail("ldpbench spec error:\n" + "\n".join(exc.problems), pytrace=False)
        except LdpbenchError as exc:
            pytest.fail(f"ldpbench: {exc}", pytrace=False)
        under = f" under --ldpbench-seed {reseeded}" if reseeded is not None else ""  # to replay it
        request.node.user_properties.append((SUMMARY_PROPERTY, result.summary + under))
        # The update's warnings (a dirty work tree) and the comparison's notes (rows better beyond
        # the noise, code changed since the baseline) are printed whether the check passed or not.
        for note in result.notes[1:] if result.comparison is None else result.notes:
            request.node.user_properties.append((SUMMARY_PROPERTY, note))
        if result.regressed:
            hint = ""
            if any(c.status == "missing" for c in result.comparison.regressions):
                hint = (
                    "\nBaseline rows are no longer produced. If the spec changed on purpose, refresh "
                    "the baseline (pytest --ldpbench-update-baseline) or pass allow_missing=True.\n"
                )
            if any(c.status == "not comparable" for c in result.comparison.regressions):
                hint += (
                    "\nRows are not comparable: a plugin's algorithm_version, its parameters or its data "
                    "changed since the baseline. If on purpose, refresh the baseline (pytest "
                    "--ldpbench-update-baseline) or pass --ldpbench-allow-not-comparable once.\n"
                )
            what = (
                "regressed against"
                if result.comparison.headline == "REGRESSION"
                else "gate failed (no row regressed) against"
            )
            pytest.fail(
                f"ldpbench leaderboard {what} {result.baseline}{under}:\n\n{result.markdown}{hint}",
                pytrace=False,
            )
        return result

    return check
