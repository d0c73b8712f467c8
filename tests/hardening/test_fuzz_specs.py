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
from ldpbench.spec.expand import count_cells
from ldpbench.spec.validate import load_spec

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
            parent[
                draw(st.one_of(st.text(max_size=10), st.sampled_from(["norm_sub", "GRR", "zipf2", "set_query"])))
            ] = value
        elif action == "users":
            doc.pop("epsilons", None)
            doc["users"] = draw(st.one_of(USER_GROUPS, st.dictionaries(st.text(max_size=4), USER_GROUPS, max_size=2)))
    return doc


def _exists(doc: Any, path: tuple[Any, ...]) -> bool:
    try:
        node = doc
        for key in path:
            if (
                isinstance(node, dict)
                and key in node
                or isinstance(node, list)
                and isinstance(key, int)
                and key < len(node)
            ):
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
        return draw(
            st.sampled_from(
                [
                    "a: &a [*a]\n" + text,
                    "x: &x {k: *x}\n" + text,
                    "l0: &l0 [1,1,1,1,1,1,1,1,1,1]\n"
                    + "".join(f"l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * 10) + "]\n" for i in range(1, 7))
                    + text,
                ]
            )
        )
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
    "empty-lists-and-wrong-types": BASE_TEXT.replace("- grr\n", "")
    .replace("oracles:\n", "oracles: []\nx_oracles:\n")
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
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
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


# ----------------------------------------------------------------------------------------------
# Attack families (issue 10): merge keys and tags, executor blocks, device/FIFO paths, odd names,
# and wrong values for every declared parameter of every built-in plugin. Each family counts
# its cases and outcomes; the slowest case and the memory held are bounded and printed (-s).
# ----------------------------------------------------------------------------------------------

FAMILY_CASES = 120
SECRET = "s3cr3t-marker"


def _family(name: str, outcomes: Counter[str], rss_before: float) -> None:
    grown = _maxrss_mb() - rss_before
    print(
        f"\n{name}: {sum(outcomes.values())} cases, {dict(outcomes)}, slowest {SLOWEST[0]:.2f} s, RSS +{grown:.0f} MB"
    )
    assert grown < 300, f"{name}: the cases held {grown:.0f} MB"


def _check_text(path: Path, plugins: Any, text: str, **kw: Any) -> str:
    outcome = _check(path, plugins, text.encode("utf-8", "surrogatepass"))
    return outcome


TAGS = [
    "!!bool",
    "!!int",
    "!!float",
    "!!timestamp",
    "!!binary",
    "!!set",
    "!!omap",
    "!!pairs",
    "!!str",
    "!!null",
    "!!merge",
    "!!value",
    "!!seq",
    "!!map",
    "!!python/object:os.system",
    "!!python/name:os.system",
    "!foo",
    "!<tag:yaml.org,2002:int>",
    "!!python/object/apply:os.system",
]


@st.composite
def merge_and_tag_attacks(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["merge-bomb", "merge-odd", "tag", "tag-collection"]))
    if kind == "merge-bomb":
        width, levels = draw(st.integers(2, 40)), draw(st.integers(2, 9))
        lines = ["m0: &m0 {" + ", ".join(f"k{i}: {i}" for i in range(draw(st.integers(1, 20)))) + "}"]
        lines += [f"m{i}: &m{i} {{<<: [" + ", ".join([f"*m{i - 1}"] * width) + "]}" for i in range(1, levels)]
        return BASE_TEXT + "\n".join(lines) + "\n"
    if kind == "merge-odd":
        return BASE_TEXT + draw(
            st.sampled_from(
                [
                    "x: {<<: 1}\n",
                    "x: {<<: [1, 2]}\n",
                    "x: &x {<<: *x}\n",
                    "x: {<<: {<<: {<<: {a: 1}}}}\n",
                    "b: &b {seed: 9}\nx: {<<: [*b, *b], seed: 1}\n",
                    "<<: {name: merged, seed: 5}\n",
                    "b: &b [1]\nx: {<<: *b}\n",
                    "x: {<<: [], y: 1}\n",
                ]
            )
        )
    tag = draw(st.sampled_from(TAGS))
    if kind == "tag":
        value = draw(st.sampled_from(["maybe", "0x", "1", "2020-99-99", "xx!", "abc", "", "[1]", "1e999", "yes"]))
        key = draw(st.sampled_from(["seed", "repeats", "name", "d", "epsilons"]))
        if key == "d":
            return BASE_TEXT.replace("d: 16", f"d: {tag} {value}")
        return BASE_TEXT.replace(f"{key}:", f"{key}: {tag} {value}\nx_{key}:", 1)
    return BASE_TEXT.replace("oracles:", f"oracles: {tag}", 1)


def test_merge_key_and_tag_attacks_end_in_a_located_spec_error(plugins, case_file):
    outcomes: Counter[str] = Counter()
    rss_before = _maxrss_mb()

    @settings(FUZZ, max_examples=FAMILY_CASES)
    @given(text=merge_and_tag_attacks())
    def case(text: str) -> None:
        outcomes[_check_text(case_file, plugins, text)] += 1

    case()
    _family("merge-key and tag attacks", outcomes, rss_before)
    assert outcomes["rejected"] > 0


EXECUTOR_VALUES = st.one_of(
    st.sampled_from(["tcp://127.0.0.1:8786", "tls://evil.example.org:1", "inproc://x", "", "/tmp/scheduler.json"]),
    BAD_SCALARS,
)


@st.composite
def executor_blocks(draw: st.DrawFn) -> str:
    name = draw(st.sampled_from(["dask", "process-pool", "in-process", "daskk", "remote"]))
    keys = draw(
        st.lists(
            st.sampled_from(["scheduler", "scheduler_file", "workers", "threads_per_worker", "preload", "address"]),
            max_size=3,
            unique=True,
        )
    )
    block = {name: {k: draw(EXECUTOR_VALUES) for k in keys}} if keys else draw(st.sampled_from([name, {name: None}]))
    doc = copy.deepcopy(BASE)
    doc["executor"] = block
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)


def test_executor_blocks_never_name_a_scheduler(plugins, case_file, monkeypatch):
    import socket

    def refuse(self, *args, **kwargs):
        raise AssertionError(f"validation opened a connection: {args}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    outcomes: Counter[str] = Counter()
    rss_before = _maxrss_mb()

    @settings(FUZZ, max_examples=FAMILY_CASES)
    @given(text=executor_blocks())
    def case(text: str) -> None:
        outcome = _check_text(case_file, plugins, text)
        if outcome == "valid":
            spec = load_spec(case_file, plugins)
            given_keys = dict(spec.executor.params) if spec.executor else {}
            assert not {"scheduler", "scheduler_file"} & set(given_keys), text
        outcomes[outcome] += 1

    case()
    _family("executor blocks", outcomes, rss_before)
    assert outcomes["rejected"] > 0 and outcomes["valid"] > 0


def test_device_fifo_directory_and_secret_paths_are_refused_unread(plugins, case_file, tmp_path):
    import os

    fifo = tmp_path / "p.fifo"
    os.mkfifo(fifo)
    (tmp_path / "dir.csv").mkdir()
    secret = tmp_path / "secret.csv"
    secret.write_text(f"root:{SECRET}:0:0\nnobody:{SECRET}\n")
    binary = tmp_path / "binary.csv"
    binary.write_bytes(b"\xff\xfe" + SECRET.encode() + b"\x00\x01")
    bad_fimi = tmp_path / "t.dat"
    bad_fimi.write_text(f"1 2 {SECRET}\n")
    paths = [
        "/dev/zero",
        "/dev/null",
        "/dev/urandom",
        str(fifo),
        str(tmp_path / "dir.csv"),
        str(secret),
        str(binary),
        str(bad_fimi),
        "nonexistent.csv",
        "",
        "/",
        ".",
        "..",
        "~",
        "a\tb",
    ]
    outcomes: Counter[str] = Counter()
    rss_before = _maxrss_mb()
    for dataset in ("histogram", "fimi", "search-log", "kosarak"):
        for path in paths:
            doc = copy.deepcopy(BASE)
            doc["datasets"] = [{dataset: {"path": path}}]
            text = yaml.safe_dump(doc, sort_keys=False)
            outcome = _check_text(case_file, plugins, text)
            if outcome == "rejected":
                try:
                    load_spec(case_file, plugins)
                except SpecError as exc:
                    assert SECRET not in str(exc), f"{dataset} {path}: the file's content was echoed: {exc}"
            outcomes[outcome] += 1
    # The path with a NUL character cannot even be created on disk; it must still be refused.
    doc = copy.deepcopy(BASE)
    doc["datasets"] = [{"histogram": {"path": "a\0b"}}]
    outcomes[_check_text(case_file, plugins, yaml.safe_dump(doc))] += 1
    _family("device, FIFO, directory and secret paths", outcomes, rss_before)
    assert outcomes == Counter({"rejected": 4 * len(paths) + 1})


NAME_TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=300)


@st.composite
def odd_names(draw: st.DrawFn) -> Any:
    return draw(
        st.one_of(
            NAME_TEXT,
            st.sampled_from(
                [
                    "abc\n",
                    "../x",
                    "a/b",
                    "..",
                    ".",
                    "-x",
                    "a\0b",
                    "a\rb",
                    "\u202ertl",
                    "ok",
                    "a" * 100,
                    "a" * 101,
                    "a" * 256,
                    "con",
                    "x" * 99 + "\n",
                    " a",
                    "a ",
                    "ä",
                ]
            ),
            st.integers(),
            st.none(),
            st.lists(st.text(max_size=3), max_size=2),
        )
    )


def test_long_and_odd_names_are_one_short_path_component(plugins, case_file):
    outcomes: Counter[str] = Counter()
    rss_before = _maxrss_mb()
    name_ok = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")

    @settings(FUZZ, max_examples=FAMILY_CASES)
    @given(name=odd_names())
    def case(name: Any) -> None:
        doc = copy.deepcopy(BASE)
        doc["name"] = name
        text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
        outcome = _check_text(case_file, plugins, text)
        # Whatever YAML read back, a name is valid exactly when it is one safe path component.
        expected = "valid" if isinstance(name, str) and name_ok.fullmatch(name) else "rejected"
        if isinstance(name, str) and expected == "rejected" and outcome == "valid":
            assert name_ok.fullmatch(load_spec(case_file, plugins).name), repr(name)
        elif isinstance(name, str):
            assert outcome == expected, repr(name)
        outcomes[outcome] += 1

    case()
    _family("long and odd names", outcomes, rss_before)
    assert outcomes["rejected"] > outcomes["valid"] > 0


#: Where a plugin of each kind goes in a spec (executors and datasets replace BASE's).
SLOTS = {
    "dataset": "datasets",
    "oracle": "oracles",
    "protocol": "oracles",
    "postprocessor": "pipelines",
    "metric": "metrics",
    "executor": "executor",
}


def _wrong_values(p: Any) -> list[Any]:
    """Values that break ``p``'s declaration: wrong types, out of range, forbidden, NaN, huge."""
    types = p.types
    out: list[Any] = [[1, 2], {"a": 1}, "not-a-choice-\u00e9", 10**30, -(10**30), math.nan, -math.inf, True]
    if p.min is not None:
        out += [p.min - 1, p.min - 1e-9 if float in types else p.min - 1]
    if p.max is not None:
        out += [p.max + 1, p.max * 10 + 1]
    out += list(p.forbid)
    if p.choices:
        out += [str(p.choices[0]).upper(), str(p.choices[0]) + " "]
    if p.plugin_kind:
        out += ["no-such-" + p.plugin_kind, 3]
    if p.params_of:
        out += [{"alpah": 1}, {"alpha": "x"}, {"alpha": math.inf}]
    if p.path:
        out += ["/dev/zero", "", "missing.csv"]
    if p.user_only:
        out += ["tcp://127.0.0.1:1"]
    return out


def _plugin_param_cases(plugins: Any) -> list[tuple[str, str, str, Any]]:
    cases = []
    for kind in SLOTS:
        for info in plugins.registry(kind):
            if info.origin.distribution not in ("ldpbench",):
                continue
            for p in info.params:
                for value in _wrong_values(p):
                    cases.append((kind, info.name, p.name, value))
    return cases


def _spec_with(kind: str, name: str, key: str, value: Any) -> str:
    doc = copy.deepcopy(BASE)
    entry = {name: {key: value}}
    slot = SLOTS[kind]
    if slot == "executor":
        doc["executor"] = entry
    elif slot == "datasets":
        doc["datasets"] = [entry]
    else:
        doc[slot] = [entry]
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)


def test_every_builtin_plugin_parameter_with_wrong_values(plugins, case_file):
    cases = _plugin_param_cases(plugins)
    outcomes: Counter[str] = Counter()
    per_kind: Counter[str] = Counter()
    accepted = []
    rss_before = _maxrss_mb()
    for kind, name, key, value in cases:
        outcome = _check_text(case_file, plugins, _spec_with(kind, name, key, value))
        outcomes[outcome] += 1
        per_kind[f"{kind}:{outcome}"] += 1
        if outcome == "valid":
            accepted.append((name, key, value))
    _family(f"wrong plugin parameters ({len({(k, n) for k, n, _, _ in cases})} plugins)", outcomes, rss_before)
    print(f"  per kind: {dict(sorted(per_kind.items()))}")
    assert len(cases) > 300
    # The only "wrong" value accepted is True for a bool parameter.
    for name, key, value in accepted:
        p = next(
            q for q in plugins.get(next(k for k in SLOTS if name in plugins.registry(k)), name).params if q.name == key
        )
        assert p.types == (bool,) and value is True, (name, key, value)
    assert outcomes["rejected"] > 0.8 * len(cases)


def _worst_cases(tmp_path: Path) -> dict[str, str]:
    """The costliest spec of each attack family, as a path to validate."""
    import os

    def put(name: str, text: str) -> str:
        (tmp_path / name).write_text(text)
        return name

    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    merge = ["m0: &m0 {" + ", ".join(f"k{i}: {i}" for i in range(20)) + "}"]
    merge += [f"m{i}: &m{i} {{<<: [" + ", ".join([f"*m{i - 1}"] * 40) + "]}" for i in range(1, 9)]
    return {
        "merge-key bomb (8 levels x 40)": put("merge.yaml", BASE_TEXT + "\n".join(merge) + "\n"),
        "alias bomb (billion laughs)": put(
            "alias.yaml",
            "l0: &l0 [1,1,1,1,1,1,1,1,1,1]\n"
            + "".join(f"l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * 10) + "]\n" for i in range(1, 9))
            + BASE_TEXT,
        ),
        "1 MB of flow items (token cap)": put("tokens.yaml", BASE_TEXT + "x: [" + ", ".join(["1"] * 300_000) + "]\n"),
        "3000-deep flow nesting": put("deep.yaml", BASE_TEXT + "x: " + "[" * 3000 + "]" * 3000 + "\n"),
        "3000-deep block nesting": put("block.yaml", BASE_TEXT + "".join(" " * i + "- \n" for i in range(0, 6000, 2))),
        "tag mismatch (!!bool maybe)": put("tag.yaml", BASE_TEXT.replace("seed: 3", "seed: !!bool maybe")),
        "executor names a scheduler": put(
            "exec.yaml", BASE_TEXT.replace("process-pool:\n    workers: 2", "dask:\n    scheduler: tcp://127.0.0.1:1")
        ),
        "histogram path /dev/zero": put(
            "devzero.yaml", BASE_TEXT.replace("- uniform\n", "- histogram: {path: /dev/zero}\n")
        ),
        "256-character name": put("name.yaml", BASE_TEXT.replace("name: fuzz", "name: " + "a" * 256)),
        "per-user n = 1e10": put(
            "peruser.yaml", BASE_TEXT.replace("n: 1000", "n: 10000000000").replace("aggregate", "per-user")
        ),
        "spec is /dev/zero": "/dev/zero",
        "spec is a FIFO": str(fifo),
    }


def test_worst_case_time_and_memory_before_a_rejection(tmp_path):
    """Each family's costliest case in its own process: exit 2, located, bounded (printed with -s)."""
    code = (
        "import resource, sys, time\n"
        "t = time.perf_counter()\n"
        "from ldpbench.cli import main\n"
        "from ldpbench.loading.manager import build_plugins\n"
        "build_plugins()\n"
        "base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "t = time.perf_counter()\n"
        "rc = main(['validate', sys.argv[1]])\n"
        "sys.stderr.write('\\nCOST %.3f %d %d\\n' % (time.perf_counter() - t, base,"
        " resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))\n"
        "sys.exit(rc)\n"
    )

    def limit_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    rows = []
    for family, path in _worst_cases(tmp_path).items():
        res = subprocess.run(
            [sys.executable, "-c", code, path],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            preexec_fn=limit_memory,
        )
        cost = re.search(r"COST ([\d.]+) (\d+) (\d+)", res.stderr)
        assert res.returncode == 2 and cost, (family, res.returncode, res.stderr[-2000:])
        problems = [line for line in res.stderr.splitlines() if line.strip() and not line.startswith("COST")]
        assert problems and all(re.match(rf"^{re.escape(path)}:\d+: \S", line) for line in problems), (
            family,
            res.stderr,
        )
        seconds, base, peak = float(cost[1]), int(cost[2]) / 1024, int(cost[3]) / 1024
        rows.append((family, seconds, peak, peak - base))
    print("\nworst case per family (validate in a fresh process; RSS: peak, and growth after plugin loading)")
    for family, seconds, peak, grown in rows:
        print(f"  {family:34s} {seconds:6.2f} s  {peak:6.0f} MB peak  +{grown:4.0f} MB")
    assert max(r[1] for r in rows) < 10 and max(r[3] for r in rows) < 100, rows
