"""The unit tests pass again with numpy's SIMD dispatch limited to its baseline.

numpy picks, at import, the fastest kernels the CPU supports (AVX2, AVX-512, ...) for sums,
``exp2``, ``log`` and friends; two kernels may round the last bit differently. A test that
compares floats exactly where the summation order or the elementary function can differ then
passes on one machine and fails on another (it happened: an NDCG equality held on AVX2 and failed
by one unit in the last place on an AVX512_SPR machine). Rerunning the unit tests with every
dispatched feature disabled (``NPY_DISABLE_CPU_FEATURES``) exercises a second rounding on every
machine, so such a test cannot land again (the fast unit tests of the numerics: the slow ones are
statistical and compare with tolerances). CI runs this through the plain ``pytest`` of the README.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]

#: Set in the child run: it must not start another one (and says the dispatch is already limited).
GUARD = "LDPBENCH_BASELINE_DISPATCH_CHILD"

#: The x86 groups the issue names: numpy >= 2.4 calls them X86_V3/X86_V4, older releases
#: AVX2/FMA3/AVX512F/... . Kept for the record; what is disabled is :func:`dispatched_features`,
#: which covers these on x86 and the dispatched features of any other CPU family.
X86_GROUPS = ("X86_V3 X86_V4 AVX512_ICL AVX512_SPR AVX2 FMA3 AVX512F AVX512CD AVX512_SKX AVX512_CLX AVX512_CNL").split()


def simd_extensions() -> dict:
    """numpy's own account of its SIMD: ``baseline``, ``found`` and ``not found`` (dispatched)."""
    return np.show_config(mode="dicts").get("SIMD Extensions", {})


def dispatched_features() -> list[str]:
    """Every feature this numpy build dispatches at runtime, found on this CPU or not.

    Only these may be named in ``NPY_DISABLE_CPU_FEATURES``: numpy warns about a name it does
    not dispatch (an older or newer spelling) and refuses to import if a baseline feature is named.
    """
    simd = simd_extensions()
    return [*simd.get("found", []), *simd.get("not found", [])]


def baseline_environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "NPY_ENABLE_CPU_FEATURES"}  # exclusive with DISABLE
    env["NPY_DISABLE_CPU_FEATURES"] = " ".join(dispatched_features())
    env[GUARD] = "1"
    return env


def _summary(output: str, lines: int = 60) -> str:
    """The part of a pytest report that says what failed: the short summary, else the tail."""
    marker = output.find("short test summary info")
    text = output[output.rfind("\n", 0, marker) + 1 :] if marker >= 0 else output
    return "\n".join(text.splitlines()[-lines:])


#: The unit tests whose numbers numpy's kernels compute (the plugins' numerics, statistics,
#: aggregation, the engine, the audits): the rest (spec validation, loading, the results folder,
#: the CLI) compare no float a kernel rounds, and rerunning them here only cost time.
NUMERIC_UNIT_TESTS = (
    "tests/unit/plugins",
    "tests/unit/stats",
    "tests/unit/leaderboard",
    "tests/unit/engine",
    "tests/unit/audit",
    "tests/unit/testing",
)


pytestmark = [
    pytest.mark.skipif(bool(os.environ.get(GUARD)), reason="already the baseline-dispatch run"),
]


def test_dispatch_can_be_limited_to_the_baseline():
    # The premise of the run below: numpy accepts the names and then dispatches nothing.
    if not dispatched_features():
        pytest.skip("this numpy build dispatches nothing beyond its baseline")
    probe = "import json, numpy as np; print(json.dumps(np.show_config(mode='dicts')['SIMD Extensions']))"
    done = subprocess.run(
        [sys.executable, "-W", "error::ImportWarning", "-c", probe],
        env=baseline_environment(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr  # an unknown or baseline name would warn or fail here
    simd = json.loads(done.stdout)
    assert not simd.get("found"), simd
    assert set(simd.get("not found", [])) == set(dispatched_features())
    on_x86 = any(name.startswith(("X86_V", "AVX", "SSE")) for name in dispatched_features())
    if on_x86:  # the list, as this numpy spells it, is among what is disabled
        assert set(X86_GROUPS) & set(dispatched_features())


def test_unit_tests_pass_with_baseline_dispatch():
    if not dispatched_features():
        pytest.skip("this numpy build dispatches nothing beyond its baseline")
    done = subprocess.run(
        # -n 0: one process. The suite around this test already keeps every core busy, and xdist
        # workers would each collect the tests and import every plugin again (about 10 s of CPU).
        [
            sys.executable,
            "-m",
            "pytest",
            *NUMERIC_UNIT_TESTS,
            "-m",
            "not slow",
            "-q",
            "-p",
            "no:cacheprovider",
            "-n",
            "0",
        ],
        cwd=ROOT,
        env=baseline_environment(),
        capture_output=True,
        text=True,
        timeout=3600,
    )
    if done.returncode != 0:
        disabled = baseline_environment()["NPY_DISABLE_CPU_FEATURES"]
        pytest.fail(
            f"the unit tests fail with NPY_DISABLE_CPU_FEATURES={disabled!r} (exit {done.returncode}):\n"
            f"{_summary(done.stdout + done.stderr)}",
            pytrace=False,
        )
