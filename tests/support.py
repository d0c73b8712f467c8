"""Helpers shared by test modules (importable because ``pythonpath = ["tests"]`` in pyproject).

A helper lives here, not in a test module, as soon as two test modules need it: typically a module
of tests/unit/ and its slow counterpart in tests/statistical/ or tests/system/. Grouped by what
they serve; each group names its users.
"""

from __future__ import annotations

import functools
import json
import math
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

import ldpbench
from ldpbench import build_plugins
from ldpbench.audit import empirical_audit
from ldpbench.audit.verdict import EPSILONS, TRIALS
from ldpbench.cli import main
from ldpbench.engine.groups import simulate_groups
from ldpbench.engine.simulate import simulate
from ldpbench.leaderboard.aggregate import LEADERBOARD_COLUMNS
from ldpbench.loading.manager import Plugins
from ldpbench.results.status import cell_status
from ldpbench.results.store import ResultsStore
from ldpbench.results.versioning import SCHEMA_VERSION
from ldpbench.testing import oracle_checks
from ldpbench.types import Estimate, Oracle, Population
from ldpbench_plugins.metrics.ranking import NDCG
from ldpbench_plugins.oracles.grr import GRR
from ldpbench_plugins.protocols._blender_headlist import HeadList

#: This folder (tests/) and the repository's root: a test names files from these, wherever it lives.
TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent


@functools.cache
def builtin_plugins() -> Plugins:
    """The built-in plugins, unmodified: built once per process (plugins are stateless classes).

    A test that needs another set (extra plugins, a plugins folder, disabled plugins, or one that
    reads the environment while it is built) calls :func:`ldpbench.build_plugins` itself.
    """
    return build_plugins()


@functools.cache
def plugins_with_fixtures() -> Plugins:
    """The built-in plugins and the oracles of tests/fixtures/ (leaky and raising ones), built once."""
    return build_plugins([TESTS / "fixtures"])


def cli(capsys: Any, *args: Any) -> tuple[int, str, str]:
    """``ldpbench ARGS`` in this process (cheaper than a subprocess): (exit code, stdout, stderr)."""
    capsys.readouterr()
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


# -- specs run by more than one module ----------------------------------------------------------

#: The notebook spec of tests/unit/test_api.py and tests/system/test_api.py.
NOTEBOOK_SPEC = {
    "name": "notebook",
    "seed": 3,
    "repeats": 4,
    "datasets": [{"zipf": {"d": 32, "n": 5000, "s": 1.2}}],
    "epsilons": [1, 2],
    "oracles": ["grr", "oue"],
    "pipelines": ["base", "norm-sub"],
    "metrics": ["mse"],
}

#: The spec of the given-plugins tests (tests/unit/loading/test_manager.py, tests/unit/test_api.py).
GIVEN_SPEC = {
    "name": "given",
    "seed": 5,
    "repeats": 2,
    "datasets": [{"zipf": {"d": 16, "n": 2000, "s": 1.2}}],
    "epsilons": [1],
    "oracles": ["grr", "oue"],
    "pipelines": ["base"],
    "metrics": ["mse", "given-max-error"],
}


# -- built-in plugins by name (post-processor, oracle and em tests) ------------------------------


def postprocessor(name: str, **params: Any) -> Any:
    """A built-in post-processor as the runner builds it (declared defaults filled in)."""
    return builtin_plugins().create("postprocessor", name, params)


def grr(d: int, eps: float) -> Any:
    """The built-in GRR oracle."""
    return builtin_plugins().create("oracle", "grr", {}, d=d, epsilon=eps)


def ibu_postprocessor(**params: Any) -> Any:
    """The built-in ``ibu`` post-processor."""
    return postprocessor("ibu", **params)


def simulated_estimate(oracle, counts, epsilon, seed, simulation="aggregate", **params):
    """A built-in oracle's estimate of these counts (ibu's tests)."""
    o = builtin_plugins().create("oracle", oracle, params, d=len(counts), epsilon=epsilon)
    return simulate(o, np.asarray(counts), np.random.default_rng(seed), simulation)


# -- Blender's head lists (tests/unit/plugins/protocols/test_blender_{client,headlist}.py) ------------

# A head list with k = 4 queries (incl. <*,*>) and k_q = 4, 3, 5, 1 (A14 / F1): queries 0, 1, 2 hold
# 3, 2 and 4 head-list records; records 9-12 are outside the list (two of them under listed queries).
HL_PARENTS = np.array([0, 0, 0, 1, 1, 2, 2, 2, 2, 0, 1, 3, 4])
HL_RECORDS = np.arange(9)


def head_list() -> HeadList:
    return HeadList.build(HL_RECORDS, HL_PARENTS)


# Queries 0-3; records 0 = (q0, u), 1 = (q0, *), 2 = (q0, u'), 3 = (q1, *), 4 = (q1, u), 5 = (q2, u),
# 6 = (q3, *). Listed: 0, 1, 3, 5 (records 1 and 3 are their query's wildcard record).
W_PARENTS = np.array([0, 0, 0, 1, 1, 2, 3])
W_RECORDS = np.array([0, 1, 3, 5])
W_MASK = np.array([False, True, True, False])


def wildcard_head_list() -> HeadList:
    return HeadList.build(W_RECORDS, W_PARENTS, wildcard=W_MASK)


# -- result rows and leaderboards (tests/unit/leaderboard/, report/, stats/) --------------------


def result_row(
    value,
    repeat=0,
    oracle="grr",
    pipeline="base",
    metric="mse",
    epsilon=1.0,
    error=None,
    gib=False,
    dataset="zipf",
    users="",
    fingerprint="f1",
):
    """One result row as a cell writes it (test_aggregate.py, test_render.py)."""
    return dict(
        cell_id=f"{dataset}-{epsilon}-{oracle}-{repeat}",
        dataset=dataset,
        users=users,
        epsilon=epsilon,
        oracle=oracle,
        pipeline=pipeline,
        metric=metric,
        greater_is_better=gib,
        repeat=repeat,
        value=value,
        error=error,
        simulation="aggregate",
        n=100,
        d=8,
        fingerprint=fingerprint,
        elapsed=0.0,
    )


def result_series(values, **kw):
    """One row per repeat, with these values."""
    return [result_row(v, repeat=i, **kw) for i, v in enumerate(values)]


FIGURE_ORACLES = ("grr", "olh", "oue", "hr")


FIGURE_PIPELINES = tuple(f"p{i:02d}" for i in range(26))  # more than two panels' worth


def figure_leaderboard(
    oracles=FIGURE_ORACLES, pipelines=FIGURE_PIPELINES, epsilons=(0.5, 2.0), datasets=("zipf",), scale=1.0
):
    """A synthetic leaderboard: mean = scale * (pipeline index + 1) / epsilon^2 (spans decades)
    (tests/unit/report/test_figures.py, tests/system/test_figures.py)."""
    rows = []
    for dataset in datasets:
        for eps in epsilons:
            for o, oracle in enumerate(oracles):
                for p, pipeline in enumerate(pipelines):
                    mean = scale * (p + 1 + o / 10) / eps**2
                    rows.append(
                        {
                            "dataset": dataset,
                            "users": "",
                            "epsilon": eps,
                            "oracle": oracle,
                            "pipeline": pipeline,
                            "metric": "mse",
                            "greater_is_better": False,
                            "mean": mean,
                            "stderr": mean / 50,
                            "ci_low": mean * 0.95,
                            "ci_high": mean * 1.05,
                            "repeats": 5,
                            "failed": 0,
                            "best": False,
                        }
                    )
    frame = pl.DataFrame(rows)
    missing = [pl.lit(None, dtype=t).alias(k) for k, t in LEADERBOARD_COLUMNS.items() if k not in frame.columns]
    return frame.with_columns(missing).select(list(LEADERBOARD_COLUMNS))


def rank_board(values: dict[str, list[float]]) -> pl.DataFrame:
    """A leaderboard of one method per key, one cell per value (tests/unit/stats/test_ranks.py,
    tests/system/test_rank_cli.py)."""
    rows = []
    for method, means in values.items():
        for cell, m in enumerate(means):
            rows.append(
                {
                    "dataset": f"d{cell}",
                    "users": "",
                    "epsilon": 1.0,
                    "oracle": "oue",
                    "pipeline": method,
                    "metric": "mse",
                    "greater_is_better": False,
                    "mean": m,
                    "stderr": 0.1,
                    "repeats": 5,
                    "failed": 0,
                }
            )
    return pl.DataFrame(rows)


def paired_noisy(seed: int, repeats: int, planted: float) -> np.ndarray:
    """Two rows sharing one noisy error per repeat (as pipelines of one oracle output do), the
    second multiplied by 1 + planted, each with a little noise of its own (tests/unit/stats/
    test_paired.py, tests/statistical/test_paired.py)."""
    rng = np.random.default_rng(seed)
    shared = rng.gamma(4.0, 0.25, repeats)  # a skewed, MSE-like error
    own = rng.normal(0, 0.01, (2, repeats))
    return np.vstack([shared + own[0], shared * (1 + planted) + own[1]])


def ndcg_metric(**params) -> NDCG:
    """NDCG with its declared defaults, these parameters changed (ranking metric tests)."""
    values = {p.name: p.default for p in NDCG.params}
    values.update(params)
    return NDCG(**values)


def ranking_estimate(freqs, items=None, info=None, steps=()) -> Estimate:
    return Estimate(np.asarray(freqs, dtype=float), n=100, epsilon=1.0, items=items, info=info or {}, steps=steps)


def popularity_numbered(d: int = 8) -> Population:
    """Items numbered by popularity, as the shipped and synthetic datasets are."""
    return Population(np.arange(d, 0, -1) * 10)


# -- the users of a repeat (tests/unit/engine/test_mechanism.py, tests/system/test_mechanism.py) ------

PAIRING_ORACLES = ["grr", "oue", "olh", "hr"]


PAIRING_REPEATS = 4


PAIRING_PROBE = textwrap.dedent(
    '''
    """Test probe: a digest of the users who sent their true value (the eps = inf group)."""

    import hashlib
    import math

    import numpy as np

    from ldpbench import hookimpl
    from ldpbench.types import Metric


    class InfUsers(Metric):
        """48-bit digest of the eps = inf group's histogram (exactly representable as a float)."""

        name = "inf-users"

        def score(self, truth, estimate, rng):
            parts = [p for p in estimate.parts if math.isinf(p.epsilon)]
            counts = np.asarray(parts[0].report_histogram, dtype=np.int64)
            return float(int.from_bytes(hashlib.sha256(counts.tobytes()).digest()[:6], "little"))


    @hookimpl
    def ldpbench_register_metrics(registry):
        registry.register(InfUsers)
    '''
)


PAIRING_SPEC = {
    "name": "pairing",
    "seed": 11,
    "repeats": PAIRING_REPEATS,
    "simulation": "aggregate",
    "datasets": [{"zipf": {"d": 16, "n": 5000, "s": 1.1}}],
    "users": {
        # Noisy groups first: the inf group's users are what is left after them, so its digest
        # depends on the whole draw, not only on its own part.
        "mixed": [{"epsilon": 0.5, "count": 150}, {"epsilon": 2, "count": 100}, {"epsilon": "inf", "count": 60}],
        "exact": [{"epsilon": "inf", "count": 300}],
    },
    "oracles": PAIRING_ORACLES,
    "pipelines": ["base"],
    "metrics": ["mse", "inf-users"],
}


def pairing_rows(root: Path) -> pl.DataFrame:
    """The rows of :data:`PAIRING_SPEC` with the probe metric, run in ``root``."""
    (root / "probe").mkdir()
    (root / "probe" / "inf_users.py").write_text(PAIRING_PROBE)
    outcome = ldpbench.run(PAIRING_SPEC, root / "out", workers=1, plugins_dirs=[root / "probe"])
    assert outcome.failed_rows == 0, outcome.errors
    df = ResultsStore(outcome.out_dir).load()
    assert df.height == 2 * len(PAIRING_ORACLES) * PAIRING_REPEATS * 2
    return df


def pairing_values(df: pl.DataFrame, users: str, metric: str) -> dict[tuple[int, str], float]:
    sel = df.filter((pl.col("users") == users) & (pl.col("metric") == metric))
    return {(r["repeat"], r["oracle"]): r["value"] for r in sel.iter_rows(named=True)}


# -- hand-made leaderboards for compare (tests/cli/, tests/system/test_compare_*.py, unit/leaderboard/) --


def leaderboard_row(oracle="grr", mean=1.0, stderr=0.01, gib=False, failed=0, repeats=10, **over):
    """One row of a leaderboard JSON, as ``ldpbench compare`` reads it."""
    row = dict(
        dataset="zipf",
        users="",
        epsilon=1.0,
        oracle=oracle,
        pipeline="base",
        metric="mse",
        greater_is_better=gib,
        mean=mean,
        stderr=stderr,
        ci_low=None,
        ci_high=None,
        repeats=repeats,
        failed=failed,
        best=False,
        fingerprint="f1",
        error=None,
    )
    row.update(over)
    return row


def write_json(tmp_path, name, rows):
    """Write ``rows`` as ``tmp_path/name``; returns the name (a path relative to ``tmp_path``)."""
    (tmp_path / name).write_text(json.dumps(rows))
    return name


def run_ldpbench(cwd, *args):
    """The real ``ldpbench`` command, in a subprocess, in ``cwd``."""
    return subprocess.run(
        [sys.executable, "-m", "ldpbench", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


# -- resume (tests/cli/test_resume_identity.py, tests/system/test_resume_identity.py) -------------

RESUME_PLUGIN = '''\
from ldpbench import hookimpl
from ldpbench.types import PostProcessor

FACTOR = {factor}


class Shrink(PostProcessor):
    """Scales the estimate by FACTOR."""

    name = "shrink"
    algorithm_version = "{version}"

    def apply(self, estimate, rng):
        return estimate.replace(frequencies=estimate.frequencies * FACTOR)


@hookimpl
def ldpbench_register_postprocessors(registry):
    registry.register(Shrink)
'''


RESUME_SPEC = """\
name: resume
seed: 3
repeats: 3
datasets:
  - zipf: {d: 16, n: 2000, s: 1.3}
epsilons: [1, 2]
oracles: [grr, oue]
pipelines: [base, shrink]
metrics: [mse]
"""


RESUME_CELLS = 2 * 2 * 3


def resume_project(root: Path) -> Path:
    """A spec and a plugins folder (``pl/``) with the ``shrink`` post-processor, in ``root``."""
    (root / "pl").mkdir()
    (root / "pl" / "shrink.py").write_text(RESUME_PLUGIN.format(factor=1.0, version="1"))
    (root / "spec.yaml").write_text(RESUME_SPEC)
    return root


def run_resume(capsys, project, *extra):
    """``ldpbench run`` of the project's spec into ``out/``: (exit code, JSON leaderboard, stderr)."""
    capsys.readouterr()
    code = main(
        [
            "run",
            str(project / "spec.yaml"),
            "--out",
            str(project / "out"),
            "--workers",
            "1",
            "--plugins-dir",
            str(project / "pl"),
            "--no-progress",
            "--format",
            "json",
            *extra,
        ]
    )
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 else None), err


# -- audits and the leaderboard gate on the command line (tests/cli/, tests/system/) ---------------

LEAKY_ORACLES = ("leaky-grr-2eps", "leaky-ss-2eps", "leaky-ss-window", "leaky-ue-bug")


def audit_cli(capsys, *args):
    """``ldpbench ARGS --plugins-dir tests/fixtures`` in this process: (exit code, stdout, stderr)."""
    code = main([*args, "--plugins-dir", str(TESTS / "fixtures")])
    out = capsys.readouterr()
    return code, out.out, out.err


GATE_SPEC = """\
name: gate
seed: 21
repeats: 3
datasets:
  - zipf: {d: 16, n: 2000, s: 1.2}
epsilons: [1, 4]
oracles: [grr]
pipelines: [base, norm-sub]
metrics: [mse]
"""


def write_gate_spec(root: Path, text: str = GATE_SPEC, name: str = "gate.yaml") -> Path:
    path = root / name
    path.write_text(textwrap.dedent(text))
    return path


def newer_baseline(path: Path) -> Path:
    """A baseline row as a future ldpbench might write it: another version, another layout."""
    path.write_text(json.dumps([{"schema_version": SCHEMA_VERSION + 1, "dataset": "zipf", "score": 1.0}]))
    return path


# -- the wheel (tests/meta/test_wheel.py, tests/system/test_wheel.py) ------------------------------

#: Source folder of each top-level package (pyproject's package-dir).
PACKAGE_DIRS = {"ldpbench": "ldpbench", "ldpbench_plugins": "plugins", "ldpbench_data": "datasets"}


def source_packages() -> set[str]:
    """Every folder with an ``__init__.py`` under the package folders, as a dotted package name."""
    found = set()
    for package, folder in PACKAGE_DIRS.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join((package, *rel)))
    return found


# -- throwaway environments (tests/system/test_wheel.py, tests/system/test_dependency_floors.py) ---


def uv_binary(tmp_path: Path) -> Path:
    """uv from the test extra; an environment made before uv joined it gets its own copy."""
    try:
        from uv import find_uv_bin

        return Path(find_uv_bin())
    except ImportError:
        venv = tmp_path / "uv-venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
        subprocess.run(
            [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "uv"], check=True, capture_output=True
        )
        return venv / "bin" / "uv"


# -- pytest in a subprocess (tests/system/test_new_plugin.py, tests/system/test_leaderboard_check.py) --


def foreign_pytest_plugins_off() -> list[str]:
    """``-p no:NAME`` for every pytest plugin installed here but ldpbench's own.

    The others (xdist, pytest-benchmark, hypothesis) come with ldpbench's test extra, not with a
    plugin repository's (pytest alone): a pytest run that stands for one runs as in its own
    environment, and loading them cost about 1 s of CPU per run (measured: 3.5 -> 2.4 s for a
    generated metric's tests).
    """
    from importlib.metadata import entry_points

    names = sorted({ep.name for ep in entry_points(group="pytest11")} - {"ldpbench"})
    return [arg for name in names for arg in ("-p", f"no:{name}")]


# -- the results folder (tests/unit/results/, tests/hardening/test_store.py) ---------------------


def done_cells(store, keys, fingerprint="f1"):
    """The stored cells a run would reuse (:func:`~ldpbench.results.status.cell_status`): every
    (pipeline, metric) of ``keys`` stored and finished; ``keys`` per cell when a mapping (only those
    cells are considered). The rows here carry ``fingerprint`` and no code fingerprint."""
    rows = store.load()
    wanted = keys if isinstance(keys, dict) else dict.fromkeys(rows["cell_id"].unique().to_list(), keys)
    expected = {cell: {tuple(k): (fingerprint, None) for k in pairs} for cell, pairs in wanted.items()}
    return cell_status(rows, expected)[0]


def strict_loads(text):
    """json.loads that refuses the non-standard NaN / Infinity tokens."""

    def refuse(token):
        raise ValueError(f"non-standard JSON token {token}")

    return json.loads(text, parse_constant=refuse)


# -- hand-made estimates ---------------------------------------------------------------------


def oue_pq(eps: float) -> tuple[float, float]:
    return 0.5, 1.0 / (math.exp(eps) + 1.0)


def hand_estimate(counts: np.ndarray, n: int, eps: float, rng: np.random.Generator, noise: bool = True) -> Estimate:
    """An OUE-like estimate built by hand (fraction scale, V-approx variance, p*, q*)
    (calibrate and its numerics)."""
    p, q = oue_pq(eps)
    var = q * (1 - q) / (n * (p - q) ** 2)
    f = np.asarray(counts, dtype=float) / n
    if noise:
        f = f + rng.normal(0.0, math.sqrt(var), f.size)
    return Estimate(f, n, eps, "oue", p, q, np.full(f.size, var))


def oue_estimate(f: np.ndarray, n: int = 10_000, eps: float = 1.0) -> Estimate:
    """A vector wrapped in an estimate with OUE's constants (Power's tests)."""
    p, q = 0.5, 1.0 / (math.exp(eps) + 1.0)
    var = q * (1 - q) / (n * (p - q) ** 2)
    f = np.asarray(f, dtype=float)
    return Estimate(f, n, eps, "oue", p, q, np.full(f.size, var))


def zipf_population(d: int, n: int, s: float = 1.0) -> Population:
    w = np.arange(1, d + 1, dtype=float) ** -s
    counts = np.floor(n * w / w.sum()).astype(np.int64)
    counts[0] += n - counts.sum()
    return Population(counts)


def mixed_estimate(d=40, seed=0, mix=(300, 300, 30, 12)) -> Estimate:
    """A small-sample, mixed-budget GRR estimate in the [MHS18] shape (many boundary zeros)
    (EM's tests)."""
    pop = zipf_population(d, 100_000)
    groups = [(0.1, mix[0]), (2.0, mix[1]), (math.log(d), mix[2]), (math.inf, mix[3])]
    return simulate_groups(lambda e: grr(d, e), pop, groups, np.random.default_rng(seed))


def zipf_counts(d, n, s=1.3, seed=0):
    """A multinomial draw of n users from Zipf(s) over d items."""
    w = 1.0 / np.arange(1, d + 1) ** s
    return np.random.default_rng(seed).multinomial(n, w / w.sum())


# -- [W20]'s consistency methods on random vectors (post-processor and simplex tests) ------------


def BasePos():  # noqa: N802 — read like the class names of [W20]'s methods
    return postprocessor("base-pos")


def PostPos():  # noqa: N802
    return postprocessor("post-pos")


def BaseCut(**kw):  # noqa: N802
    return postprocessor("base-cut", **kw)


def Norm():  # noqa: N802
    return postprocessor("norm")


def NormMul():  # noqa: N802
    return postprocessor("norm-mul")


def NormCut(**kw):  # noqa: N802
    return postprocessor("norm-cut", **kw)


def NormSub(**kw):  # noqa: N802
    return postprocessor("norm-sub", **kw)


def MLEApx(**kw):  # noqa: N802
    return postprocessor("mle-apx", **kw)


EPS = 1.0
N_USERS = 10_000


def oue_constants(epsilon: float = EPS) -> tuple[float, float]:
    return 0.5, 1.0 / (math.exp(epsilon) + 1.0)


def make_estimate(f: np.ndarray, p: float | None = None, q: float | None = None, n: int = N_USERS, **kw) -> Estimate:
    if p is None:
        p, q = oue_constants()
    f = np.asarray(f, dtype=float)
    var = q * (1 - q) / (n * (p - q) ** 2)
    return Estimate(
        frequencies=f, n=n, epsilon=EPS, mechanism="hand", p_star=p, q_star=q, variance=np.full(f.size, var), **kw
    )


def random_vectors(rng: np.random.Generator) -> list[np.ndarray]:
    """1,000 vectors: d in {1, 2, 7, 100, 1000}, entries N(1/d, (3/d)^2), plus all-negative,
    all-positive, consistent and all-zero cases."""
    out = []
    for d in (1, 2, 7, 100, 1000):
        for _ in range(196):
            out.append(rng.normal(1.0 / d, 3.0 / d, size=d))
        out.append(-np.abs(rng.normal(1.0 / d, 3.0 / d, size=d)) - 1e-3)  # all negative
        out.append(np.abs(rng.normal(1.0 / d, 3.0 / d, size=d)) + 1e-6)  # all positive
        out.append(np.full(d, 1.0 / d))  # already consistent
        out.append(np.zeros(d))  # nothing positive, ties everywhere
    return out


RNG_UNUSED = np.random.default_rng(0)  # the methods are deterministic


def run_method(pp, f: np.ndarray, **kw) -> np.ndarray:
    return np.asarray(pp.apply(make_estimate(f, **kw), RNG_UNUSED).frequencies)


def method_id(pp) -> str:
    return repr(pp)


# -- oracles: exact output tables and deliberately broken oracles ---------------------------------


def assert_ldp_table(P: np.ndarray, eps: float) -> None:
    """A3: every ratio <= e^eps (1 + 1e-12), the bound attained, each P(.|v) sums to 1."""
    assert np.all(P >= 0)
    np.testing.assert_allclose(P.sum(axis=0), 1.0, rtol=0, atol=1e-12)
    live = P.max(axis=1) > 0
    assert np.all(P[live].min(axis=1) > 0), "an output possible for one value must be possible for all"
    ratio = (P[live].max(axis=1) / P[live].min(axis=1)).max()
    assert ratio <= math.exp(eps) * (1 + 1e-12)
    assert ratio >= math.exp(eps) * (1 - 1e-12)


def support_probabilities(P: np.ndarray, S: np.ndarray) -> np.ndarray:
    """M[w, v] = P(w in Support | v)."""
    return S.T.astype(float) @ P


def assert_support_constants(oracle, P, S) -> None:
    """A4: P(v in Support | v) = p*, P(v in Support | v') = q*, to 1e-12."""
    M = support_probabilities(P, S)
    d = oracle.d
    np.testing.assert_allclose(np.diag(M), oracle.p_star, rtol=0, atol=1e-12)
    np.testing.assert_allclose(M[~np.eye(d, dtype=bool)], oracle.q_star, rtol=0, atol=1e-12)


def audit_oracle(plugins, name, d=16, trials=TRIALS, seed=0, epsilons=EPSILONS):
    """The empirical audit of one registered oracle (tests/unit/audit/, tests/statistical/)."""
    return empirical_audit(
        lambda eps: plugins.create("oracle", name, d=d, epsilon=eps), epsilons, trials=trials, seed=seed
    )


#: The conformance kit's oracle checks on a small problem.
SMALL = dict(d=8, epsilons=(1.0, 4.0), n=2000, trials=120, law_samples=3000)


def run_check(obj, check, **kw):
    """One oracle check of the conformance kit, on :data:`SMALL` unless told otherwise."""
    return dict(oracle_checks(obj, **{**SMALL, **kw}))[check]()


class Leaky(GRR):
    """Spends 1.5 epsilon: keeps the true value more often than its budget allows."""

    name = "leaky"

    def __init__(self, d, epsilon, **params):
        super().__init__(d, 1.5 * epsilon, **params)
        self.epsilon = epsilon


class Wasteful(GRR):
    """Spends only epsilon / 2 while declaring epsilon (valid LDP, but the bound is not attained)."""

    name = "wasteful"

    def __init__(self, d, epsilon, **params):
        super().__init__(d, epsilon / 2, **params)
        self.epsilon = epsilon


class GRRNoHistogramSampler(GRR):
    """GRR with a finite output and a support-count sampler, but no report-histogram sampler.

    Before the kit used the engine's path, this passed every check and then failed every
    aggregate cell (the engine called the missing sample_report_histogram).
    """

    name = "grr-no-hist-sampler"
    sample_report_histogram = Oracle.sample_report_histogram

    def sample_support_counts(self, true_counts, rng):
        # GRR's support counts are its report histogram: draw it with GRR's own sampler
        return GRR.sample_report_histogram(self, true_counts, rng)


class GRRPerUserOnly(GRR):
    """GRR without any aggregate shortcut: only ``simulation: per-user`` can run it."""

    name = "grr-per-user-only"
    sample_report_histogram = Oracle.sample_report_histogram
    sample_support_counts = Oracle.sample_support_counts


def planted_population(n: int, planted: int, share: float, tail: int, bits: int, seed: int):
    """``planted`` random items each held by ``share`` of the n users; the rest spread evenly over
    ``tail`` other random items. Returns the population and the planted items."""
    from ldpbench.types import Domain, Population
    from ldpbench_plugins.datasets.bitstrings import distinct_items

    rng = np.random.default_rng(seed)
    items = distinct_items(planted + tail, bits, rng)
    counts = np.empty(planted + tail, dtype=np.int64)
    counts[:planted] = round(share * n)
    rest = n - counts[:planted].sum()
    counts[planted:] = rest // tail
    counts[planted : planted + rest % tail] += 1  # the remainder, one user each: the tail stays flat
    order = np.argsort(items)
    pop = Population(counts[order], domain=Domain.bit_strings(bits), values=items[order])
    return pop, set(items[:planted].tolist())


# -- defenses through real attacked cells (tests/unit/plugins/postprocessors/test_{cao_norm,ldprecover}.py)

DEFENSE_SPEC = """\
name: defense
seed: 11
repeats: 1
datasets: [{zipf: {d: 32, n: 20000, s: 1.5}}]
epsilons: [1]
oracles: [grr, oue]
attacks: [none, mga]
beta: 0.05
targets: {count: 5}
pipelines: [base, norm-sub, cao-norm, ldprecover: {eta: 0.0526316}]
metrics: [frequency-gain, genuine-mse]
"""


def defense_values(spec_text: str = DEFENSE_SPEC) -> dict[tuple[str, str, str], float]:
    """``{(oracle@attack, pipeline, metric): value}`` of every row of the spec's cells, run in this process."""
    from ldpbench.engine import cell as engine
    from ldpbench.engine.cell import CellTask, run_cell
    from ldpbench.spec.expand import expand
    from ldpbench.spec.validate import load_spec_text

    plugins = builtin_plugins()
    spec = load_spec_text(spec_text, plugins)
    values = {}
    with engine.plugins_given(plugins):
        for c in expand(spec):
            task = CellTask(c, tuple(spec.pipelines), tuple(spec.metrics), plugins=plugins.source)
            for r in run_cell(task):
                assert r["error"] is None, r["error"]
                values[(r["oracle"].split("[")[0], r["pipeline"], r["metric"])] = r["value"]
    return values
