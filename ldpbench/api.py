"""The notebook API: run a spec, or post-process a bare estimate vector, with the runner's code path.

    >>> import ldpbench
    >>> outcome = ldpbench.run("specs/quickstart.yaml")            # or a dict with a spec's keys
    >>> outcome.leaderboard                                       # a polars DataFrame

    >>> import ldpbench
    >>> f = ldpbench.postprocess("norm-sub", f_hat, n=100_000, epsilon=1.0, oracle="oue")
    >>> f = ldpbench.postprocess("power+norm-sub", f_hat, n=100_000, epsilon=1.0)
    >>> f = ldpbench.postprocess({"norm-cut": {"variant": "code"}}, f_hat, n=100_000, epsilon=1.0)

The vector is wrapped in the :class:`~ldpbench.types.Estimate` the oracle would have produced
(its p*, q* and noise variance, from the registered oracle plugin), and the chain is applied by
:func:`ldpbench.engine.pipeline.apply_pipeline`, exactly as ``ldpbench run`` does.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ldpbench.errors import UsageError
from ldpbench.types import Estimate, PostProcessor

if TYPE_CHECKING:
    from ldpbench.loading.manager import Plugins
    from ldpbench.runner import RunOutcome

#: What names a post-processing chain: ``"norm-sub"``, ``"power+norm-sub"``,
#: ``["power", "norm-sub"]``, ``{"norm-cut": {"variant": "code"}}``, a list mixing names and
#: one-key mappings, or PostProcessor instances.
PipelineLike = str | PostProcessor | Mapping[str, Any] | Sequence[Any]


@functools.lru_cache(maxsize=1)
def _default_plugins() -> Any:
    from ldpbench.loading.manager import build_plugins

    return build_plugins()


def _steps(pipeline: PipelineLike, plugins: Any) -> list[PostProcessor]:
    """Instantiate the chain's post-processors (validated parameters, did-you-mean on names)."""
    if isinstance(pipeline, PostProcessor):
        return [pipeline]
    if isinstance(pipeline, str):
        names = [part.strip() for part in pipeline.split("+")]
        if not all(names):
            raise UsageError(f"malformed pipeline {pipeline!r}: expected names joined by '+'")
        return [plugins.create("postprocessor", name) for name in names]
    if isinstance(pipeline, Mapping):
        steps = []
        for name, params in pipeline.items():
            if params is not None and not isinstance(params, Mapping):
                raise UsageError(f"parameters of post-processor '{name}' must be a mapping, got {params!r}")
            steps.append(plugins.create("postprocessor", str(name), params or {}))
        return steps
    if isinstance(pipeline, Sequence):
        steps = [step for item in pipeline for step in _steps(item, plugins)]
        if not steps:
            raise UsageError("empty pipeline: name at least one post-processor (e.g. 'base')")
        return steps
    raise UsageError(f"cannot read a pipeline from {type(pipeline).__name__}: {pipeline!r}")


def estimate_from_vector(
    f_hat: np.ndarray,
    *,
    n: int,
    epsilon: float,
    oracle: str | None = None,
    oracle_params: Mapping[str, Any] | None = None,
    plugins: Any = None,
) -> Estimate:
    """The :class:`Estimate` that oracle ``oracle`` at ``epsilon`` would give for ``f_hat``.

    ``f_hat`` is the unbiased estimate in the fraction scale (frequencies, not counts) of ``n``
    users. The estimate carries the oracle's p*, q*, noise variance and the support counts
    ``n (q* + (p* - q*) f_hat)`` implied by the vector; it has no report histogram, so methods
    that need one (EM) need an estimate from a simulation instead. ``oracle=None`` means the
    installed oracle whose tags declare ``default`` (OUE in the ldpbench distribution).
    """
    f = np.array(f_hat, dtype=float)  # a copy: the caller's array is never modified
    if f.ndim != 1 or f.size == 0:
        raise UsageError(f"the estimate must be a non-empty one-dimensional vector, got shape {f.shape}")
    if not np.all(np.isfinite(f)):
        raise UsageError("the estimate contains NaN or infinite values")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n <= 0:
        raise UsageError(f"n (the number of users) must be a positive integer, got {n!r}")
    if not (isinstance(epsilon, (int, float, np.floating)) and epsilon > 0):
        raise UsageError(f"epsilon must be a positive number, got {epsilon!r}")
    plugins = plugins or _default_plugins()
    if oracle is None:
        from ldpbench.spec.capabilities import default_oracle

        oracle = default_oracle(plugins, f.size, float(epsilon))
    fo = plugins.create("oracle", oracle, oracle_params, d=f.size, epsilon=float(epsilon))
    p, q = fo.p_star, fo.q_star
    # Through the oracle's own estimate(), as in a run; then the caller's vector verbatim (the
    # round trip through support counts would change the last bits).
    est = fo.estimate(n * (q + (p - q) * f), int(n))
    return est.replace(frequencies=f, bernoulli_support=fo.tags().bernoulli_support)


def postprocess(
    pipeline: PipelineLike,
    f_hat: np.ndarray | Estimate,
    *,
    n: int | None = None,
    epsilon: float | None = None,
    oracle: str | None = None,
    oracle_params: Mapping[str, Any] | None = None,
    rng: np.random.Generator | int | None = 0,
    return_estimate: bool = False,
    plugins: Any = None,
) -> np.ndarray | Estimate:
    """Apply a post-processor, or a chain of them, to an estimate vector.

    :param pipeline: ``"norm-sub"``, ``"power+norm-sub"``, ``["power", "norm-sub"]``,
        ``{"norm-cut": {"variant": "code"}}`` or a list mixing names and such mappings.
    :param f_hat: the oracle's unbiased estimate (fraction scale, length d), or an
        :class:`Estimate` (then ``n``, ``epsilon`` and ``oracle`` come from it).
    :param n: number of users behind ``f_hat``.
    :param epsilon: their privacy budget.
    :param oracle: the registered oracle that produced ``f_hat`` (``grr``, ``olh``, ``oue``, ``hr``);
        default: the oracle whose tags declare ``default`` (OUE).
    :param oracle_params: the oracle's parameters (e.g. ``{"g": 5}`` for OLH).
    :param rng: generator or seed for post-processors that draw (default seed 0: reproducible).
    :param return_estimate: return the whole processed :class:`Estimate` (set-query answers via
        ``Estimate.answer``, diagnostics in ``Estimate.info``) instead of the vector.
    :returns: the per-item answers, a new array: the processed frequencies, or, when the chain
        has a query-time step such as ``post-pos``, its answers to the single-item queries.
    """
    from ldpbench.engine.pipeline import apply_pipeline

    plugins = plugins or _default_plugins()
    if isinstance(f_hat, Estimate):
        if n is not None or epsilon is not None:
            raise UsageError("pass n and epsilon only with a bare vector: an Estimate carries its own")
        estimate = f_hat
    else:
        if n is None or epsilon is None:
            raise UsageError("postprocess() needs n= and epsilon= to know the oracle's noise")
        estimate = estimate_from_vector(
            f_hat, n=n, epsilon=epsilon, oracle=oracle, oracle_params=oracle_params, plugins=plugins
        )
    generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    processed = apply_pipeline(_steps(pipeline, plugins), estimate, generator)
    if return_estimate:
        return processed
    return np.array(processed.item_answers(), dtype=float)


def run(
    spec: str | Path | Mapping[str, Any],
    out: str | Path | None = None,
    *,
    workers: int | None = None,
    executor: str | None = None,
    plugins_dirs: Sequence[str | Path] = (),
    plugins: Plugins | None = None,
    progress: bool = False,
    rerun: bool = False,
) -> RunOutcome:
    """Run a spec exactly as ``ldpbench run`` does and return its :class:`~ldpbench.runner.RunOutcome`.

    :param spec: a spec file, or a mapping with a spec file's keys (``{"name": ..., "datasets": ...}``;
        it is validated like a file, problems are reported against ``<spec>:LINE`` of its YAML dump).
    :param out: the results folder (default ``results/<spec name>``); a rerun resumes there.
    :param workers, executor: as ``--workers`` / ``--executor``.
    :param plugins_dirs: folders of ``*.py`` plugins to load too (a spec's own ``plugins_dir`` is
        not followed: a spec cannot load code by itself).
    :param plugins: the plugins to validate and run with, e.g. ``build_plugins(extra=[my_module])``
        (instead of ``plugins_dirs``). Every cell uses them; on a process pool a worker forked from
        this process has them, one that must rebuild them imports ``my_module`` by name, and
        plugins given as objects no process can import fail their cells with an error saying so.
    :returns: ``.leaderboard`` (polars DataFrame: mean, stderr, CI per row), ``.out_dir``,
        ``.failed_rows`` and ``.errors``, ``.notes``.
    :raises SpecError: with every problem of the spec (``.problems``).
    """
    import yaml

    from ldpbench.loading.manager import build_plugins
    from ldpbench.runner import run_spec
    from ldpbench.spec.validate import load_spec, load_spec_text

    if plugins is None:
        plugins = build_plugins([str(Path(d).resolve()) for d in plugins_dirs])
    elif plugins_dirs:
        raise UsageError("pass plugins_dirs or plugins, not both (build_plugins(plugins_dirs) takes folders too)")
    if isinstance(spec, Mapping):
        loaded = load_spec_text(yaml.safe_dump(dict(spec), sort_keys=False, allow_unicode=True), plugins)
    else:
        loaded = load_spec(spec, plugins)
    return run_spec(loaded, plugins, out, workers=workers, executor=executor, progress=progress, rerun=rerun)
