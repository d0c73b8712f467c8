"""Fuzz the spec loader and validator with malformed specs (hypothesis).

Property: whatever the spec file holds — wrong types, unknown keys and plugin names, broken YAML,
huge or negative sizes, NaN epsilons, empty lists, recursive aliases — loading it either gives a
valid :class:`Spec` or raises :class:`SpecError` whose every line reads ``FILE:LINE: message``;
nothing else escapes, and no case takes long or holds much memory before it is rejected.

The bulk runs the validator in-process (hundreds of cases, derandomized so CI is repeatable); a
handful go through the real ``ldpbench run`` in a subprocess: exit code 2, ``FILE:LINE:`` on every
stderr line, no traceback.
"""

from __future__ import annotations

import copy
import math
import re
import resource
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ldpbench.errors import SpecError
from ldpbench.spec import load_spec
from ldpbench.spec.expand import count_cells

#: A case that takes longer than this to be accepted or rejected is a failure.
MAX_SECONDS_PER_CASE = 2.0
#: Cases per in-process fuzz test (the case count is printed with -s).
STRUCTURED_CASES = 400
TEXT_CASES = 250

BASE: dict[str, Any] = {
    "name": "fuzz",
    "seed": 3,
    "repeats": 2,
    "simulation": "aggregate",
    "datasets": [{"zipf": {"d": 16, "n": 1000, "s": 1.1}}, "uniform"],
    "epsilons": [1, 2.5],
    "oracles": ["grr", {"olh": {"g": 3}}],
    "pipelines": ["base", ["base-pos", "norm-sub"], {"calibrate": {"prior": "power-law"}}],
    "metrics": ["mse", {"set-query": {"rho": 10}}],
    "executor": {"process-pool": {"workers": 2}},
}
BASE_TEXT = yaml.safe_dump(BASE, sort_keys=False)

#: Every place in BASE a mutation may hit (the keys and list items of the document).
PATHS: list[tuple[Any, ...]] = []


def _collect(node: Any, path: tuple[Any, ...]) -> None:
    PATHS.append(path)
    if isinstance(node, dict):
        for k, v in node.items():
            _collect(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            _collect(v, path + (i,))


_collect(BASE, ())
PATHS.remove(())

BAD_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.sampled_from([0, -1, 10**10 + 1, 10**12, 2**63, -(2**63) - 1, 10**100]),
    st.sampled_from([math.nan, math.inf, -math.inf, 0.0, -0.5, 1e308, 5e-324, 101.0]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["nan", "inf", "-inf", "ln(d)", "ln(0)", "2*ln(d)", "1e999", "norm_sub", "grr ", ""]),
)
BAD_VALUES = st.one_of(
    BAD_SCALARS,
    st.lists(BAD_SCALARS, max_size=3),
    st.dictionaries(st.text(max_size=6), BAD_SCALARS, max_size=2),
    st.just([]),
    st.just({}),
    st.just([[]]),
    st.just([{}]),
)
USER_GROUPS = st.lists(
    st.fixed_dictionaries(
        {"epsilon": BAD_SCALARS, "count": st.one_of(st.integers(-5, 10**12), BAD_SCALARS)},
        optional={"extra": st.integers()},
    ),
    max_size=3,
)


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        doc = doc[key]
    return doc


@st.composite
def mutated_documents(draw: st.DrawFn) -> dict[str, Any]:
    doc = copy.deepcopy(BASE)
    for _ in range(draw(st.integers(1, 3))):
        valid = [p for p in PATHS if _exists(doc, p)]
        path = draw(st.sampled_from(valid))
        parent, key = _get(doc, path[:-1]), path[-1]
        action = draw(st.sampled_from(["set", "set", "set", "delete", "unknown-key", "rename", "users"]))
        if action == "set":
            parent[key] = draw(BAD_VALUES)
        elif action == "delete":
            del parent[key]
        elif action == "unknown-key" and isinstance(parent, dict):
            parent[draw(st.sampled_from(["epsilon", "pipeline", "oracle", "sampel", "d ", "x"]))] = draw(BAD_VALUES)
        elif action == "rename" and isinstance(parent, dict):
            value = parent.pop(key)
            parent[draw(st.one_of(st.text(max_size=10), st.sampled_from(["norm_sub", "GRR", "zipf2", "set_query"])))] = value
        elif action == "users":
            doc.pop("epsilons", None)
            doc["users"] = draw(st.one_of(USER_GROUPS, st.dictionaries(st.text(max_size=4), USER_GROUPS, max_size=2)))
    return doc


def _exists(doc: Any, path: tuple[Any, ...]) -> bool:
    try:
        node = doc
        for key in path:
            if isinstance(node, dict) and key in node or isinstance(node, list) and isinstance(key, int) and key < len(node):
                node = node[key]
            else:
                return False
        return True
    except TypeError:
        return False


YAML_NOISE = st.text(alphabet=":-[]{}&*!|>'\"%@`#,?\n\t 0123456789.eEnaif", max_size=12)


@st.composite
def mutated_texts(draw: st.DrawFn) -> str:
    text = BASE_TEXT
    kind = draw(st.sampled_from(["truncate", "insert", "replace-line", "alias", "nest", "random"]))
    if kind == "truncate":
        return text[: draw(st.integers(0, len(text)))]
    if kind == "insert":
        at = draw(st.integers(0, len(text)))
        return text[:at] + draw(YAML_NOISE) + text[at:]
    lines = text.splitlines()
    if kind == "replace-line":
        i = draw(st.integers(0, len(lines) - 1))
        lines[i] = draw(YAML_NOISE)
        return "\n".join(lines)
    if kind == "alias":  # aliases: a recursive one, and a wide fan-out ("billion laughs")
        return draw(st.sampled_from([
            "a: &a [*a]\n" + text,
            "x: &x {k: *x}\n" + text,
            "l0: &l0 [1,1,1,1,1,1,1,1,1,1]\n" + "".join(
                f"l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * 10) + "]\n" for i in range(1, 7)
            ) + text,
        ]))
    if kind == "nest":
        depth = draw(st.integers(40, 3000))
        return text + "deep: " + "[" * depth + "]" * depth + "\n"
    return draw(st.text(max_size=200))


#: The slowest case so far (seconds), printed with the case counts.
SLOWEST = [0.0]

LOCATED = re.compile(r"^(?P<file>.+?):(?P<line>\d+): \S")


def _check(path: Path, plugins: Any, data: bytes) -> str:
    """Load one case; return 'valid' or 'rejected'; fail on anything else."""
    path.write_bytes(data)
    started = time.perf_counter()
    try:
        spec = load_spec(path, plugins)
    except SpecError as exc:
        assert exc.problems, "a SpecError without problems"
        for problem in exc.problems:
            m = LOCATED.match(problem)
            assert m and m["file"] == str(path), f"not FILE:LINE: {problem!r}"
        outcome = "rejected"
    else:
        assert count_cells(spec) >= 1
        outcome = "valid"
    elapsed = time.perf_counter() - started
    SLOWEST[0] = max(SLOWEST[0], elapsed)
    assert elapsed < MAX_SECONDS_PER_CASE, f"{elapsed:.1f} s to {outcome} {data[:200]!r}"
    return outcome


@pytest.fixture(scope="module")
def case_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz") / "spec.yaml"


FUZZ = settings(
    max_examples=STRUCTURED_CASES,
    deadline=None,  # our own per-case bound is asserted in _check
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_structured_mutations_end_in_a_located_spec_error(plugins, case_file):
    outcomes: Counter[str] = Counter()
    rss_before = _maxrss_mb()

    @FUZZ
    @given(doc=mutated_documents())
    def case(doc: dict[str, Any]) -> None:
        text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
        outcomes[_check(case_file, plugins, text.encode("utf-8", "surrogatepass"))] += 1

    case()
    print(f"\nstructured spec fuzz: {sum(outcomes.values())} cases, {dict(outcomes)}, slowest {SLOWEST[0]:.2f} s")
    assert sum(outcomes.values()) >= STRUCTURED_CASES * 0.9
    assert outcomes["rejected"] > outcomes["valid"]  # the mutations do break specs
    assert _maxrss_mb() - rss_before < 300, "the fuzz cases held too much memory"


def test_text_mutations_end_in_a_located_spec_error(plugins, case_file):
    outcomes: Counter[str] = Counter()
    rss_before = _maxrss_mb()

    @settings(FUZZ, max_examples=TEXT_CASES)
    @given(text=mutated_texts())
    def case(text: str) -> None:
        outcomes[_check(case_file, plugins, text.encode("utf-8", "surrogatepass"))] += 1

    case()
    print(f"\ntext spec fuzz: {sum(outcomes.values())} cases, {dict(outcomes)}, slowest {SLOWEST[0]:.2f} s")
    assert sum(outcomes.values()) >= TEXT_CASES * 0.9
    assert outcomes["rejected"] > 0
    assert _maxrss_mb() - rss_before < 300, "the fuzz cases held too much memory"


def test_invalid_utf8_and_huge_files_are_located(plugins, case_file):
    assert _check(case_file, plugins, b"name: \xff\xfe\n") == "rejected"
    assert _check(case_file, plugins, b"# " + b"x" * 1_100_000 + b"\n") == "rejected"


# ----------------------------------------------------------------------------------------------
# A handful through the real CLI
# ----------------------------------------------------------------------------------------------

CLI_CASES = {
    "bad-yaml": BASE_TEXT.replace("epsilons:", "epsilons: [1, 2\nx:"),
    "nan-epsilon": BASE_TEXT.replace("- 2.5", "- .nan"),
    "huge-domain": BASE_TEXT.replace("d: 16", "d: 1000000000000"),
    # Within the size limit of every key, beyond the synthetic datasets' domain limit: used to
    # pass validation, then fail every cell with MemoryError (exit 3).
    "huge-domain-under-size-limit": BASE_TEXT.replace("d: 16", "d: 10000000000"),
    "negative-repeats": BASE_TEXT.replace("repeats: 2", "repeats: -4"),
    "unknown-names-and-keys": BASE_TEXT.replace("- base\n", "- norm_sub\n").replace("seed:", "sede:"),
    "empty-lists-and-wrong-types": BASE_TEXT.replace("- grr\n", "").replace("oracles:\n", "oracles: []\nx_oracles:\n")
    .replace("name: fuzz", "name: [1, 2]"),
    "recursive-alias": "a: &a [*a]\n" + BASE_TEXT,
    "huge-workers": BASE_TEXT.replace("workers: 2", "workers: 100000000"),
}


@pytest.mark.parametrize("case", sorted(CLI_CASES))
def test_cli_rejects_malformed_specs_with_exit_2(case, tmp_path):
    path = tmp_path / f"{case}.yaml"
    path.write_text(CLI_CASES[case])
    started = time.perf_counter()
    res = subprocess.run(
        [sys.executable, "-m", "ldpbench", "run", path.name, "--out", "out", "--workers", "1"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    elapsed = time.perf_counter() - started
    assert res.returncode == 2, (case, res.returncode, res.stderr)
    assert "Traceback" not in res.stderr
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert lines and all(re.match(rf"^{re.escape(path.name)}:\d+: \S", line) for line in lines), res.stderr
    assert not (tmp_path / "out" / "results.jsonl").exists()  # nothing ran
    assert elapsed < 60
    # Peak memory of every child so far (ours are the only children of this process here).
    assert resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024 < 1024
