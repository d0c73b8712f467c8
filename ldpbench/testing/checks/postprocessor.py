"""The post-processor checks: returns a finite Estimate of the right length on every built-in
oracle's estimates (or declines with a clear error), keeps the metadata, never mutates its input,
is deterministic under a seed, leaves global random state alone, keeps ``info`` JSON-able, and
answers queries when it acts on queries."""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ldpbench.engine.simulate import simulate
from ldpbench.errors import LdpbenchError
from ldpbench.testing.checks.machinery import CheckSkipped, Subject, _global_state, _same_state, _simulate
from ldpbench.types import Estimate, PostProcessor


@dataclass(frozen=True)
class PostprocessorCheckConfig:
    """Sizes of the post-processor checks."""

    d: int = 16
    epsilons: tuple[float, ...] = (1.0, 4.0)
    seed: int = 0
    n: int = 5000
    #: oracles whose estimates are fed in; ``None`` = every oracle of the ldpbench distribution
    oracles: tuple[str, ...] | None = None


def _inputs(subject: Subject, cfg: PostprocessorCheckConfig) -> list[tuple[str, Estimate]]:
    """Estimates from every built-in oracle (aggregate path) plus a hand-built one, cached. A
    step that declares ``requires_reports`` gets the per-user path with each report's support
    kept, from every oracle with ``support_matrix`` (what validation lets it follow)."""
    try:
        reports = bool(subject.postprocessor().tags().requires_reports)
    except Exception:  # noqa: BLE001 - a failing constructor or tags() is reported by the checks
        reports = False
    key = ("inputs", cfg, reports)
    if key in subject.cache:
        return subject.cache[key]
    plugins = subject.get_plugins()
    names = cfg.oracles
    if names is None:
        names = tuple(i.name for i in plugins.registry("oracle") if i.origin.distribution == "ldpbench")
    rng = np.random.default_rng(np.random.SeedSequence([int(cfg.seed), 11]))
    weights = 1.0 / np.arange(1, cfg.d + 1) ** 1.1
    counts = rng.multinomial(cfg.n, weights / weights.sum())
    out = []
    for name in names:
        for eps in cfg.epsilons:
            o = plugins.create("oracle", name, d=cfg.d, epsilon=eps)
            if reports and o.tags().support_matrix:
                chunk = max(1, -(-cfg.n // 3))
                est = simulate(o, counts, rng, "per-user", chunk_users=chunk, keep_reports=rng)
                out.append((f"{name}, epsilon={eps}, reports kept", est))
                continue
            path = "aggregate" if o.tags().aggregate else "per-user"
            out.append((f"{name}, epsilon={eps}", _simulate(o, counts, rng, path)))
    # A bare estimate: only the fields every oracle fills (no support counts, histogram or channel).
    p, q = 0.5, 1 / (math.e + 1)
    f = counts / cfg.n + rng.normal(0, 0.02, cfg.d)
    out.append(
        (
            "hand-built (OUE constants, no histogram)",
            Estimate(
                frequencies=f,
                n=cfg.n,
                epsilon=1.0,
                mechanism="hand-built",
                p_star=p,
                q_star=q,
                variance=np.full(cfg.d, q * (1 - q) / (cfg.n * (p - q) ** 2)),
            ),
        )
    )
    subject.cache[key] = out
    return out


@dataclass
class _Applied:
    """One pass of apply() over every input: outputs (or the error declining the input), and
    what the pass did to the inputs and to the global random state."""

    results: list[tuple[str, Estimate, Any]]
    mutated: list[str]
    global_state_changed: bool


def _apply_pass(
    subject: Subject, cfg: PostprocessorCheckConfig, seed: int, only: Iterable[str] | None = None
) -> _Applied:
    inputs = _inputs(subject, cfg)
    if only is not None:
        keep = set(only)
        inputs = [(label, est) for label, est in inputs if label in keep]
    results, mutated = [], []
    before_state = _global_state()
    for label, est in inputs:
        before = _snapshot(est)
        pp = subject.postprocessor()
        try:
            out: Any = pp.apply(est, np.random.default_rng(seed))
        except LdpbenchError as exc:
            out = exc
        after = _snapshot(est)
        for name, arr in before.items():
            if not np.array_equal(arr, after[name], equal_nan=arr.dtype.kind == "f"):
                mutated.append(f"{label}: {name}")
        results.append((label, est, out))
    return _Applied(results, mutated, not _same_state(before_state, _global_state()))


def _applied(subject: Subject, cfg: PostprocessorCheckConfig) -> _Applied:
    key = ("applied", cfg)
    if key not in subject.cache:
        subject.cache[key] = _apply_pass(subject, cfg, seed=0)
    return subject.cache[key]


def _accepted(subject: Subject, cfg: PostprocessorCheckConfig) -> list[tuple[str, Estimate, Estimate]]:
    results = _applied(subject, cfg).results
    accepted = [r for r in results if not isinstance(r[2], LdpbenchError)]
    assert accepted, f"{subject.label} declined every input: " + "; ".join(
        f"{label}: {out}" for label, _, out in results
    )
    return accepted


def check_postprocessor_returns_estimate(subject: Subject, cfg: PostprocessorCheckConfig) -> None:
    """Returns an Estimate of the right length with finite values, on estimates of every built-in oracle.

    A post-processor may decline an input it cannot use (e.g. EM without a report histogram) by
    raising an ``ldpbench.errors`` exception with a clear message; anything else is a failure.
    """
    for label, est, out in _accepted(subject, cfg):
        where = f"{subject.label} on {label}"
        assert isinstance(out, Estimate), f"{where}: apply() returned {type(out).__name__}, not an Estimate"
        f = np.asarray(out.frequencies)
        assert f.shape == np.shape(est.frequencies), (
            f"{where}: output length {f.shape}, input {np.shape(est.frequencies)}"
        )
        assert np.all(np.isfinite(f)), f"{where}: non-finite frequencies in the output"
        if out.variance is not None:
            assert np.shape(out.variance) in ((), f.shape), f"{where}: variance has shape {np.shape(out.variance)}"


def check_postprocessor_keeps_metadata(subject: Subject, cfg: PostprocessorCheckConfig) -> None:
    """Keeps n, epsilon, p*, q* and the item set; appends at most one step name to ``steps``."""
    for label, est, out in _accepted(subject, cfg):
        where = f"{subject.label} on {label}"
        assert out.n == est.n and out.epsilon == est.epsilon, f"{where}: n or epsilon changed"
        assert (out.p_star, out.q_star) == (est.p_star, est.q_star), f"{where}: p*/q* changed"
        same_items = (out.items is None and est.items is None) or (
            out.items is not None and est.items is not None and np.array_equal(out.items, est.items)
        )
        assert same_items, f"{where}: the item set changed"
        assert tuple(out.steps[: len(est.steps)]) == tuple(est.steps), f"{where}: earlier steps were rewritten"
        extra = tuple(out.steps[len(est.steps) :])
        assert len(extra) <= 1 and all(isinstance(s, str) and s for s in extra), (
            f"{where}: a post-processor appends at most one step name, got {extra!r}"
        )
        assert tuple(out.query_transforms[: len(est.query_transforms)]) == tuple(est.query_transforms), (
            f"{where}: earlier query transforms were dropped"
        )


def _snapshot(est: Estimate) -> dict[str, Any]:
    arrays = {
        "frequencies": est.frequencies,
        "variance": est.variance,
        "support_counts": est.support_counts,
        "report_histogram": est.report_histogram,
        "items": est.items,
    }
    return {name: copy.deepcopy(np.asarray(a)) for name, a in arrays.items() if a is not None}


def check_postprocessor_does_not_mutate_input(subject: Subject, cfg: PostprocessorCheckConfig) -> None:
    """The input estimate's arrays are unchanged after apply()."""
    mutated = _applied(subject, cfg).mutated
    assert not mutated, f"{subject.label}: apply() modified its input ({'; '.join(mutated[:5])})"


def check_postprocessor_deterministic(subject: Subject, cfg: PostprocessorCheckConfig) -> None:
    """The same rng seed gives the same output (re-run on the first and the last accepted input)."""
    accepted = _accepted(subject, cfg)
    first = {label: out for label, _, out in (accepted[0], accepted[-1])}
    for label, _, b in _apply_pass(subject, cfg, seed=0, only=first).results:
        a = first[label]
        assert not isinstance(b, LdpbenchError), f"{subject.label} on {label}: declined the second time only"
        assert np.array_equal(a.frequencies, b.frequencies), (
            f"{subject.label} on {label}: two runs with the same seed differ"
        )


def check_postprocessor_no_global_random_state(subject: Subject, cfg: PostprocessorCheckConfig) -> None:
    """apply() draws only from the Generator it is given."""
    assert not _applied(subject, cfg).global_state_changed, (
        f"{subject.label}: the global random state changed during apply()"
    )


def check_postprocessor_info_jsonable(subject: Subject, cfg: PostprocessorCheckConfig) -> None:
    """Estimate.info stays JSON-able (numbers, strings, lists, mappings; numpy scalars allowed)."""

    def default(obj: Any) -> Any:
        if isinstance(obj, np.generic):
            return obj.item()
        if isinstance(obj, np.ndarray):
            return obj.tolist()
        raise TypeError(f"{type(obj).__name__} is not JSON-able")

    for label, _, out in _accepted(subject, cfg):
        try:
            json.dumps(dict(out.info), default=default)
        except (TypeError, ValueError) as exc:
            raise AssertionError(f"{subject.label} on {label}: Estimate.info is not JSON-able: {exc}") from None


def check_postprocessor_query_answers(subject: Subject, cfg: PostprocessorCheckConfig) -> None:
    """A query-time post-processor (``acts_on == "queries"``) implements answer(); answers are finite."""
    if subject.postprocessor().tags().acts_on != "queries":
        raise CheckSkipped(f"{subject.label} acts on the estimate, not on query answers")
    assert subject.cls.answer is not PostProcessor.answer, f"{subject.label}: acts_on='queries' needs answer()"
    rng = np.random.default_rng(cfg.seed)
    for label, _, out in _accepted(subject, cfg):
        sums = rng.normal(0, 0.1, 7)
        got = np.asarray(out.answer(sums))
        assert got.shape == sums.shape and np.all(np.isfinite(got)), (
            f"{subject.label} on {label}: answer() must return finite answers of the same shape"
        )
        items = np.asarray(out.item_answers())
        assert items.shape == np.shape(out.frequencies), f"{subject.label} on {label}: item_answers() length"


#: The post-processor checks, in the order they run.
CHECKS: tuple[Callable[[Subject, PostprocessorCheckConfig], None], ...] = (
    check_postprocessor_returns_estimate,
    check_postprocessor_keeps_metadata,
    check_postprocessor_does_not_mutate_input,
    check_postprocessor_deterministic,
    check_postprocessor_no_global_random_state,
    check_postprocessor_info_jsonable,
    check_postprocessor_query_answers,
)
#: Their configuration (:class:`PostprocessorCheckConfig`).
CONFIG = PostprocessorCheckConfig


def applies(check: Callable[..., None], subject: Subject, cfg: PostprocessorCheckConfig) -> bool:
    """Whether ``check`` concerns the post-processor: query answers only for a query-time step."""
    return check is not check_postprocessor_query_answers or subject.postprocessor().tags().acts_on == "queries"
