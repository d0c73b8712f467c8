"""RS+FD: random sampling plus fake data (docs/multidimensional.md).

Arcolezi, Couchot, Al Bouna & Xiao, "Random Sampling Plus Fake Data: Multidimensional Frequency
Estimates With Local Differential Privacy", CIKM 2021, §3. User i samples one attribute ``J_i``
uniformly, reports its value with a frequency oracle at the amplified budget

    eps' = ln(a (e^eps - 1) + 1)                                    (§3.1, by sampling 1 of a)

and sends, for every other attribute, fake data, so that the server does not learn which attribute
is real. A user therefore sends a values (one real, a - 1 fake). Three variants (§3.2-3.3):

- ``grr`` (RS+FD[GRR]): GRR at eps' over ``[d_j]``; a fake value is uniform on ``[d_j]``.
- ``oue-z`` (RS+FD[OUE-z]): OUE at eps' (``p = 1/2``, ``q = 1/(e^eps' + 1)``); a fake report is OUE
  applied to the all-zero vector (every bit 1 w.p. ``q``).
- ``oue-r`` (RS+FD[OUE-r]): OUE at eps'; a fake report is OUE applied to a uniform random value.

Per attribute the report is then a mixture, ``1/a`` real and ``(a-1)/a`` fake, whose support bit
for ``v`` is Bernoulli(``p'``) for a user holding ``v`` and Bernoulli(``q'``) otherwise, with

    grr:    p' = p/a + (a-1)/(a d_j),   q' = q/a + (a-1)/(a d_j)
    oue-z:  p' = p/a + (a-1) q/a,       q' = q
    oue-r:  p' = (p + (a-1) r)/a,       q' = (q + (a-1) r)/a,   r = (p + (d_j - 1) q)/d_j

so the estimator ``f_v = (C_v/n - q') / (p' - q')`` is the paper's (§3.2 Eq. for GRR:
``(a d_j C_v - n(a - 1 + q d_j)) / (n d_j (p - q))`` rewritten with a = the number of attributes;
likewise for OUE-z and OUE-r), unbiased, with variance

    Var f_v = (f_v p'(1-p') + (1 - f_v) q'(1-q')) / (n (p' - q')^2)

for the fixed population of a run (the convention of ``Oracle.variance``); the paper's variance
(§3.2-3.3), ``sigma (1 - sigma) / (n (p' - q')^2)`` with ``sigma = f p' + (1 - f) q'``, counts each
user's value as drawn from ``f`` too and is this plus ``f (1 - f) / n``. Post-processors see an ordinary pure estimate (``p*``, ``q*`` =
``p'``, ``q'``; for GRR also the report histogram and its randomized-response channel).

Privacy (exact, :meth:`RSFD.report_table` and tests): the paper's argument (amplification by
sampling one attribute out of a) bounds records that differ in **one** attribute, and the exact
law meets epsilon there for OUE-z always and for GRR when every attribute has the same domain size
(unequal domains, and OUE-r over non-binary domains, exceed it: docs/multidimensional.md); for
records that differ in every attribute the exact bound is eps' ("all values real" against "none":
the sampled attribute's ``e^eps'`` is not diluted). The run manifest states both.

Both paths: every user's ``J_i`` is drawn (O(n), vectorized); the real reports come from the
built-in oracle's per-user path or its exact aggregate draw; fakes are drawn per user on the
per-user path and by their exact aggregate law (a multinomial or independent binomials) otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from ldpbench import hookimpl
from ldpbench.engine.simulate import simulate
from ldpbench.params import Param
from ldpbench.types import Estimate, Population
from ldpbench_plugins.oracles._unary import bernoulli_positions
from ldpbench_plugins.oracles.grr import GRR, GRRChannel
from ldpbench_plugins.oracles.oue import OUE

from ._multidim import MultidimProtocol, attributes_of, kron_all, oracle_matrix

VARIANTS = ("grr", "oue-z", "oue-r")


def amplified_epsilon(epsilon: float, a: int) -> float:
    """``ln(a (e^eps - 1) + 1)`` (CIKM 2021 §3.1)."""
    return math.log(a * math.expm1(epsilon) + 1.0)


def mixture_probabilities(variant: str, d: int, a: int, epsilon: float) -> tuple[float, float]:
    """``(p', q')``: the support probabilities of one attribute's report, real or fake (module docstring)."""
    eps1 = amplified_epsilon(epsilon, a)
    if variant == "grr":
        oracle = GRR(d, eps1)
        p, q = oracle.p_star, oracle.q_star
        return p / a + (a - 1) / (a * d), q / a + (a - 1) / (a * d)
    oue = OUE(d, eps1)
    p, q = oue.p_star, oue.q_star
    if variant == "oue-z":
        return p / a + (a - 1) * q / a, q
    r = (p + (d - 1) * q) / d
    return (p + (a - 1) * r) / a, (q + (a - 1) * r) / a


def rsfd_variance(variant: str, d: int, a: int, epsilon: float, n: int, f: np.ndarray) -> np.ndarray:
    """``Var f_v = (f_v p'(1-p') + (1-f_v) q'(1-q')) / (n (p'-q')^2)`` (module docstring)."""
    p, q = mixture_probabilities(variant, d, a, epsilon)
    f = np.asarray(f, dtype=float)
    return (f * p * (1 - p) + (1 - f) * q * (1 - q)) / (n * (p - q) ** 2)


def fake_support(variant: str, d: int, m: int, eps1: float, rng: np.random.Generator, simulation: str) -> np.ndarray:
    """Support counts of ``m`` users' fake reports for one attribute."""
    if m == 0:
        return np.zeros(d, dtype=np.int64)
    if variant == "grr":  # a uniform value: GRR's support of a report is the value itself
        if simulation == "per-user":
            return np.bincount(rng.integers(0, d, size=m), minlength=d).astype(np.int64)
        return rng.multinomial(m, np.full(d, 1.0 / d)).astype(np.int64)
    oue = OUE(d, eps1)
    if variant == "oue-z":  # OUE of the zero vector: every bit 1 w.p. q
        if simulation == "per-user":
            return np.bincount(bernoulli_positions(m * d, oue.q_star, rng) % d, minlength=d).astype(np.int64)
        return rng.binomial(m, oue.q_star, size=d).astype(np.int64)
    # oue-r: OUE of a uniform random value, through the oracle's own paths
    values = rng.integers(0, d, size=m) if simulation == "per-user" else None
    counts = np.bincount(values, minlength=d) if values is not None else rng.multinomial(m, np.full(d, 1.0 / d))
    support = simulate(oue, counts.astype(np.int64), rng, simulation).support_counts
    return np.asarray(support, dtype=np.int64)


class RSFD(MultidimProtocol):
    """Sample one attribute, report it at the amplified budget, and fake the others."""

    name = "rs-fd"
    params = (Param("oracle", str, "grr", "the paper's variant: grr, oue-z or oue-r", choices=VARIANTS),)

    def privacy_accounting(self, epsilon: float) -> list[dict[str, Any]]:
        """``epsilon`` is the paper's parameter, which bounds records differing in one attribute
        (exactly for OUE-z, for GRR over equal domains; module docstring); ``epsilon_any_records``
        is the exact bound over any two records, eps' for ``a`` attributes (:meth:`run` knows a)."""
        rows = super().privacy_accounting(epsilon)
        rows[0]["scope"] = (
            "records that differ in one attribute (exact for oue-z, and for grr over equal domains; "
            "docs/multidimensional.md); any two records: ln(a (e^eps - 1) + 1) for a attributes"
        )
        return rows

    def run(
        self, population: Population, epsilon: float, rng: np.random.Generator, *, simulation: str = "aggregate"
    ) -> Mapping[str, Estimate]:
        attrs = attributes_of(population)
        n, a = attrs.n, attrs.a
        eps1 = amplified_epsilon(epsilon, a)
        chosen = rng.integers(0, a, size=n)
        out = {}
        for j, name in enumerate(attrs.names):
            d = attrs.sizes[j]
            real = np.bincount(attrs.rows[chosen == j, j], minlength=d).astype(np.int64)
            oracle = GRR(d, eps1) if self.oracle == "grr" else OUE(d, eps1)
            support = np.asarray(simulate(oracle, real, rng, simulation).support_counts, dtype=np.int64)
            support = support + fake_support(self.oracle, d, n - int(real.sum()), eps1, rng, simulation)
            p, q = mixture_probabilities(self.oracle, d, a, epsilon)
            extra: dict[str, Any] = {}
            if self.oracle == "grr":  # a GRR report supports one value: the support counts are the histogram
                extra = {"report_histogram": support, "channel": GRRChannel(d, p, q)}
            out[name] = Estimate(
                frequencies=(support / n - q) / (p - q),
                n=n,
                epsilon=float(epsilon),
                mechanism=self.name,
                p_star=p,
                q_star=q,
                variance=np.full(d, q * (1 - q) / (n * (p - q) ** 2)),
                support_counts=support,
                bernoulli_support=True,
                info={"amplified_epsilon": eps1},
                **extra,
            )
        return out

    def perturb_records(self, rows: np.ndarray, sizes: tuple[int, ...], epsilon: float, rng: np.random.Generator):
        """Whole reports of the users' records, canonically encoded (small domains, the audit):
        ``(n, a)``, every column the row of the oracle's ``output_table`` its value is (a GRR value,
        an OUE bit vector read as a binary number), real or fake alike."""
        n, a = rows.shape
        eps1 = amplified_epsilon(epsilon, a)
        chosen = rng.integers(0, a, size=n)
        out = np.empty((n, a), dtype=np.int64)
        for j, d in enumerate(sizes):
            oracle = GRR(d, eps1) if self.oracle == "grr" else OUE(d, eps1)
            real = chosen == j
            out[real, j] = oracle.output_rows(oracle.perturb(rows[real, j], rng))
            m = int(n - real.sum())
            if self.oracle == "grr":
                fake = rng.integers(0, d, size=m)
            elif self.oracle == "oue-z":
                fake = (rng.random((m, d)) < oracle.q_star).astype(np.int64) @ (1 << np.arange(d, dtype=np.int64))
            else:
                fake = oracle.output_rows(oracle.perturb(rng.integers(0, d, size=m), rng))
            out[~real, j] = fake
        return out

    def record_accounting(self, epsilon: float, sizes: tuple[int, ...]) -> dict[str, object]:
        """Each attribute's real report at ``eps'``; any two records ``eps'``; one attribute
        ``epsilon`` where the paper's bound holds exactly (OUE-z; GRR over equal domains; OUE-r
        over binary ones), else ``eps'`` (docs/multidimensional.md)."""
        eps1 = amplified_epsilon(epsilon, len(sizes))
        holds = (
            self.oracle == "oue-z"
            or (self.oracle == "grr" and len(set(sizes)) == 1)
            or (self.oracle == "oue-r" and set(sizes) == {2})
        )
        return {
            "per_attribute": [eps1] * len(sizes),
            "any_records": eps1,
            "one_attribute": float(epsilon) if holds else eps1,
        }

    def report_widths(self, sizes: tuple[int, ...], epsilon: float) -> list[int]:
        return [d if self.oracle == "grr" else 1 << d for d in sizes]

    def report_table(self, sizes: tuple[int, ...], epsilon: float) -> np.ndarray:
        """``P[x, y] = (1/a) sum_j M'_j(y_j | x_j) prod_{k != j} F_k(y_k)``: the law of the whole
        report (all a values), ``M'`` the oracle at eps', ``F_k`` the fake report's law; reports in
        row-major order of (y_1, ..., y_a), each ``y_j`` a row of the oracle's ``output_table``."""
        a = len(sizes)
        eps1 = amplified_epsilon(epsilon, a)
        real, fake = [], []
        for d in sizes:
            M = oracle_matrix(GRR(d, eps1) if self.oracle == "grr" else OUE(d, eps1))
            if self.oracle == "grr" or self.oracle == "oue-r":
                F = M.mean(axis=0)  # the oracle's report of a uniform value (GRR: uniform itself)
                if self.oracle == "grr":
                    F = np.full(d, 1.0 / d)
            else:  # oue-z: OUE of the zero vector, every bit 1 w.p. q
                q = OUE(d, eps1).q_star
                bits = (np.arange(M.shape[1])[:, None] >> np.arange(d)[None, :]) & 1
                F = np.prod(np.where(bits == 1, q, 1 - q), axis=1)
            real.append(M)
            fake.append(np.repeat(F[None, :], d, axis=0))
        total = sum(kron_all([real[k] if k == j else fake[k] for k in range(a)]) for j in range(a))
        return total / a


@hookimpl
def ldpbench_register_protocols(registry):
    registry.register(RSFD)
