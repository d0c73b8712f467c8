"""The exact epsilon-LDP audit: every likelihood ratio of the output table, at many sizes and parameters.

An oracle is epsilon-LDP iff ``P(y | v) <= e^eps P(y | v')`` for every output ``y`` and inputs
``v, v'`` (Definition 1 of Wang et al., "Locally Differentially Private Protocols for Frequency
Estimation", USENIX Security 2017). With the whole law in hand (``Oracle.output_table()``), this is
a finite check, not a statistical one. A leak may appear only at some sizes (a Subset Selection
oracle with k = 1 at d = 2, 3 is plain GRR) or some parameter values, so the audit walks the domain
sizes while the table stays enumerable and samples the plugin's declared parameters (defaults
first, then seeded draws of every :class:`~ldpbench.params.Param` the user did not fix).

A table proves nothing about ``perturb`` by itself: with ``law=True`` the walk's points are handed
to :mod:`.law`, which tests that the encoded reports follow each table.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ldpbench.audit.law import DELTA as LAW_DELTA
from ldpbench.audit.law import LawAudit, law_audit
from ldpbench.errors import LdpbenchError
from ldpbench.params import Param, resolve
from ldpbench.types import Oracle

#: Domain sizes tried, smallest first (larger ones only while the table fits in ``max_rows``).
DEFAULT_DOMAINS = (2, 3, 4, 5, 6, 7, 8)
#: Largest table (outputs) enumerated: 2^16 rows of at most 8 items is a few MB.
DEFAULT_MAX_ROWS = 1 << 16
#: Relative slack on ``e^eps``: the table's entries are products of a few rounded factors.
RATIO_SLACK = 1e-10


@dataclass(frozen=True)
class TableFinding:
    """The worst likelihood ratio of one table: output ``y`` is ``ratio`` times likelier under
    ``item`` than under ``other``."""

    d: int
    epsilon: float
    params: Mapping[str, Any]
    ratio: float
    output: int
    item: int
    other: int
    laws_ok: bool = True

    @property
    def bound(self) -> float:
        return math.exp(self.epsilon)

    @property
    def ok(self) -> bool:
        return self.laws_ok and self.ratio <= self.bound * (1 + RATIO_SLACK)

    @property
    def effective_epsilon(self) -> float:
        """``ln`` of the worst ratio: the epsilon the table actually spends (``inf`` if unbounded)."""
        return math.log(self.ratio) if self.ratio > 0 else -math.inf

    def describe(self) -> str:
        params = "".join(f", {k}={v}" for k, v in self.params.items())
        where = f"d={self.d}, epsilon={self.epsilon:g}{params}"
        if not self.laws_ok:
            return f"{where}: P(. | v) is not a probability law (negative entries or columns not summing to 1)"
        return (
            f"{where}: output row {self.output} is {self.ratio:.6g} times likelier under item {self.item} "
            f"than under item {self.other} (e^eps = {self.bound:.6g})"
        )


@dataclass(frozen=True)
class ExactAudit:
    """Every table examined, and what could not be examined (and why)."""

    findings: tuple[TableFinding, ...] = ()
    skipped: tuple[str, ...] = ()
    #: ``False`` when the oracle has no output table at all (nothing was proven).
    available: bool = True
    #: Whether ``perturb``'s encoded reports follow the tables (``law=True``; :mod:`.law`).
    law: LawAudit | None = None
    #: Whether a table was enumerated with the default (or the user's) parameters.
    at_defaults: bool = True

    @property
    def passed(self) -> bool:
        return all(f.ok for f in self.findings)

    @property
    def failures(self) -> tuple[TableFinding, ...]:
        return tuple(f for f in self.findings if not f.ok)

    @property
    def domains(self) -> tuple[int, ...]:
        return tuple(sorted({f.d for f in self.findings}))

    @property
    def settings(self) -> int:
        """How many distinct parameter settings were audited."""
        return len({tuple(sorted(f.params.items())) for f in self.findings})

    def worst(self) -> TableFinding | None:
        """The table whose worst ratio exceeds its own ``e^eps`` by the most (a failure if any)."""
        if not self.findings:
            return None
        return max(self.findings, key=lambda f: (not f.laws_ok, f.ratio / f.bound))

    def summary(self) -> str:
        if not self.available:
            return "no output table (output_table() not implemented): nothing proven exactly"
        if not self.findings:
            return "no output table could be enumerated: " + "; ".join(self.skipped[:3])
        sizes = ", ".join(map(str, self.domains))
        head = f"{len(self.findings)} tables at d = {sizes}, {self.settings} parameter setting(s)"
        if self.passed:
            worst = self.worst()
            assert worst is not None
            return f"passed: {head}; worst ratio / e^eps = {worst.ratio / worst.bound:.9f}"
        return f"FAILED: {head}; " + self.failures[0].describe()


def worst_ratio(P: np.ndarray) -> tuple[float, int, int, int]:
    """``max_y max_{v, v'} P[y, v] / P[y, v']`` and where it is attained: ``(ratio, y, v, v')``.

    An output possible under one input and impossible under another has ratio ``inf``.
    """
    P = np.asarray(P, dtype=float)
    live = np.flatnonzero(P.max(axis=1) > 0)
    if live.size == 0:
        return 0.0, 0, 0, 0
    rows = P[live]
    hi, lo = rows.max(axis=1), rows.min(axis=1)
    with np.errstate(divide="ignore"):
        ratio = np.where(lo > 0, hi / np.where(lo > 0, lo, 1.0), np.inf)
    k = int(np.argmax(ratio))
    return float(ratio[k]), int(live[k]), int(rows[k].argmax()), int(rows[k].argmin())


def audit_table(P: np.ndarray, d: int, epsilon: float, params: Mapping[str, Any]) -> TableFinding:
    """One table against ``e^eps``; also checks that each ``P(. | v)`` is a law."""
    P = np.asarray(P, dtype=float)
    laws_ok = bool(
        P.ndim == 2 and P.shape[1] == d and np.all(P >= 0) and np.allclose(P.sum(axis=0), 1, rtol=0, atol=1e-9)
    )
    ratio, y, v, w = worst_ratio(P) if P.ndim == 2 else (math.inf, 0, 0, 0)
    return TableFinding(d, float(epsilon), dict(params), ratio, y, v, w, laws_ok)


def sample_params(
    declared: Sequence[Param], fixed: Mapping[str, Any], rng: np.random.Generator, samples: int
) -> list[dict[str, Any]]:
    """The parameter settings to audit: ``{}`` (defaults and ``fixed``) first, then ``samples``
    seeded draws of every declared parameter not in ``fixed``.

    Draws stay inside the declaration: a choice among ``choices``, a bool, an int in
    ``[min, max]`` (``max`` defaults to ``min + 16``: small values are where tables are
    enumerable), a float in ``[min, max]`` (or within a factor of 4 of the default). Parameters that
    name another plugin, paths and free strings keep their defaults.
    """
    free = [p for p in declared if p.name not in fixed and not p.plugin_kind and not p.path]
    out: list[dict[str, Any]] = [{}]
    if not free:
        return out
    for _ in range(samples):
        draw: dict[str, Any] = {}
        for p in free:
            value = _draw(p, rng)
            if value is not _KEEP:
                draw[p.name] = value
        if draw and draw not in out:
            out.append(draw)
    return out


_KEEP = object()


def _draw(p: Param, rng: np.random.Generator) -> Any:
    types = p.types
    if p.choices:
        return p.choices[int(rng.integers(len(p.choices)))]
    if bool in types:
        return bool(rng.integers(2))
    if int in types:
        lo = int(p.min) if p.min is not None else (int(p.default) - 8 if isinstance(p.default, int) else 0)
        hi = int(p.max) if p.max is not None else lo + 16
        return int(rng.integers(lo, hi + 1))
    if float in types:
        if p.min is not None and p.max is not None and math.isfinite(p.min) and math.isfinite(p.max):
            return float(rng.uniform(p.min, p.max))
        base = p.default if isinstance(p.default, (int, float)) and math.isfinite(p.default) and p.default else 1.0
        value = float(base) * float(np.exp(rng.uniform(-math.log(4), math.log(4))))
        if p.min is not None:
            value = max(value, float(p.min))
        if p.max is not None:
            value = min(value, float(p.max))
        return value
    return _KEEP


def exact_audit(
    cls: type[Oracle],
    epsilons: Sequence[float],
    *,
    values: Mapping[str, Any] | None = None,
    fixed: Sequence[str] = (),
    domains: Sequence[int] = DEFAULT_DOMAINS,
    samples: int = 4,
    seed: int = 0,
    max_rows: int = DEFAULT_MAX_ROWS,
    law: bool = False,
    alpha: float = 0.05,
    delta: float = LAW_DELTA,
) -> ExactAudit:
    """Audit ``cls``'s output table at each domain size, budget and sampled parameter setting.

    :param values: the resolved parameter values to start from (user's and defaults); plugin
        instances (a prior) may be among them.
    :param fixed: names of parameters the user set: those are not sampled.
    :param domains: sizes to try; a size whose table the oracle refuses to enumerate (it raises
        ``ValueError``) or that exceeds ``max_rows`` ends the walk for that setting.
    :param samples: seeded draws of the free declared parameters, beside the defaults.
    :param law: also test, at every table enumerated, that ``perturb``'s encoded reports follow it
        (:func:`ldpbench.audit.law.law_audit`, family-wise level ``alpha``, draws sized to catch a
        total-variation deviation ``delta`` per item with probability 0.9).

    A sampled setting the plugin rejects (a parameter error from its constructor) is skipped and
    listed; an error with the defaults propagates, since the user asked for them.
    """
    base = dict(values or {})
    declared = tuple(cls.params)
    settings = sample_params(declared, {k: base.get(k) for k in fixed}, np.random.default_rng(seed), samples)
    findings: list[TableFinding] = []
    skipped: list[str] = []
    points: list[tuple[Oracle, dict[str, Any]]] = []  # tables are recomputed: some are MBs
    for i, draw in enumerate(settings):
        merged = {**base, **draw}
        if draw:
            try:
                # A draw goes through the declaration, as a spec's value would.
                resolve(declared, {k: v for k, v in merged.items() if k in draw}, owner=cls.name)
            except LdpbenchError as exc:
                skipped.append(f"{draw}: {exc}")
                continue
        for eps in epsilons:
            for d in domains:
                try:
                    oracle = cls(d=d, epsilon=eps, **merged)
                except (LdpbenchError, ValueError) as exc:
                    if i == 0 and d == min(domains):
                        raise
                    skipped.append(f"d={d}, epsilon={eps:g}, {draw or 'defaults'}: {exc}")
                    break
                try:
                    P, _ = oracle.output_table()
                except NotImplementedError:
                    return ExactAudit(available=False)
                except ValueError as exc:  # too large to enumerate: larger d will be too
                    skipped.append(f"d={d}, epsilon={eps:g}: {exc}")
                    break
                P = np.asarray(P, dtype=float)
                findings.append(audit_table(P, d, eps, draw))
                points.append((oracle, draw))
                if P.shape[0] > max_rows:
                    break
    at_defaults = any(not f.params for f in findings)
    law_result = law_audit(points, alpha=alpha, seed=seed, delta=delta) if law else None
    return ExactAudit(tuple(findings), tuple(skipped), law=law_result, at_defaults=at_defaults)
