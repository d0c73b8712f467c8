"""RS+RFD: random sampling plus *realistic* fake data (docs/multidimensional.md).

Arcolezi, Couchot, Al Bouna & Xiao, "Improving the Utility of Locally Differentially Private
Protocols for Longitudinal and Multidimensional Frequency Estimates", arXiv:2111.04636 (Digital
Communications and Networks, 2022), as issue 25 cites it; the paper's text was not available here
(the abstract found names L-GRR, L-OSUE and ALLOMFREE, not RS+RFD), so the estimator below is
derived from the construction, not transcribed. As RS+FD (CIKM 2021, ``rsfd.py``): user i samples
one attribute ``J_i`` uniformly, reports its value with a frequency oracle at the amplified budget
``eps' = ln(a (e^eps - 1) + 1)``, and sends fake data for every other attribute. The fake data is
drawn from a prior ``pi_j`` (the server's knowledge of attribute j's distribution) instead of
uniformly, so that a fake report looks like a real one:

- ``grr`` (RS+RFD[GRR]): GRR at eps' over ``[d_j]``; a fake value is drawn from ``pi_j``.
- ``oue-r`` (RS+RFD[OUE-r]): OUE at eps'; a fake report is OUE applied to a value drawn from
  ``pi_j``. (RS+FD's OUE-z sends OUE of the zero vector: it draws no fake value, so a prior changes
  nothing there.)

Per attribute, a user holding ``v`` supports ``v`` with probability ``p'_v`` and a user holding
another value with ``q'_v`` (now item-dependent):

    grr:    p'_v = p/a + (a-1) pi_v / a,   q'_v = q/a + (a-1) pi_v / a
    oue-r:  p'_v = (p + (a-1) r_v)/a,      q'_v = (q + (a-1) r_v)/a,    r_v = q + (p - q) pi_v

(``p``, ``q`` the oracle's at eps'; ``r_v`` the chance that OUE of a value drawn from ``pi`` sets
bit v), so ``p' - q' = (p - q)/a`` for every item and the estimator (the GRR form
``f_v = (a C_v - n (q + (a-1) pi_v)) / (n (p - q))``; OUE-r likewise with ``r_v``) is

    f_v = (C_v / n - q'_v) / (p'_v - q'_v),

unbiased for any prior fixed before the reports (it is not fitted to them), with variance

    Var f_v = (f_v p'_v (1 - p'_v) + (1 - f_v) q'_v (1 - q'_v)) / (n (p'_v - q'_v)^2)

for the run's fixed population (the RS+FD paper's form ``sigma (1 - sigma) / (n (p'-q')^2)``,
``sigma = f p' + (1 - f) q'``, is this plus ``f (1 - f)/n``: it draws each value from ``f``). With
the uniform prior both variants are RS+FD's. The estimate is not a pure protocol's (``q'`` depends
on the item): ``p_star``/``q_star`` are ``None``; for GRR the report histogram and its exact
channel ``P(y | x) = (p - q)/a [y = x] + q/a + (a-1) pi_y / a`` are carried (EM, IBU).

The prior (``prior_weight`` ``w``): ``pi_j = w f_j + (1 - w) / d_j``, ``f_j`` attribute j's true
marginal: a stand-in for what the server may know (a previous collection, public
statistics); ``w = 0`` is RS+FD, ``w = 1`` a perfect prior. It is aggregate knowledge, drawn from
no user's report, so the estimator stays unbiased.

Privacy (exact, :meth:`RSRFD.report_table`): between **any** two records the whole report is
``eps'``-LDP for every prior (each term of the mixture over the sampled attribute changes by at
most ``e^eps'``, and the fakes do not depend on the record), and ``eps'`` is attained. Between
records that differ in **one** attribute the RS+FD paper's amplification argument holds for RS+FD's
uniform fakes (GRR over equal domains), but with any other prior the exact bound lies strictly
between ``eps`` and ``eps'``: a report whose fake value is rare under one attribute's prior and
common under another's no longer dilutes the sampled attribute's ``e^eps'`` as a uniform fake does
(docs/multidimensional.md tabulates it; ``tests/unit/plugins/protocols/test_rsrfd.py`` checks the
law term by term). The run manifest states both.

Both paths: every ``J_i`` is drawn (O(n), vectorized); the real reports come from the built-in
oracle's per-user path or its exact aggregate draw; fake values are drawn per user
(``rng.choice`` from ``pi``) or as one multinomial.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ldpbench import hookimpl
from ldpbench.engine.simulate import simulate
from ldpbench.params import Param
from ldpbench.types import Channel, Estimate, Population
from ldpbench_plugins.oracles.grr import GRR
from ldpbench_plugins.oracles.oue import OUE

from ._multidim import MultidimProtocol, attributes_of, kron_all, oracle_matrix
from .rsfd import amplified_epsilon

VARIANTS = ("grr", "oue-r")


def prior_of(counts: np.ndarray, weight: float) -> np.ndarray:
    """``pi = w f + (1 - w) / d``: the fake data's law for one attribute (module docstring)."""
    counts = np.asarray(counts, dtype=float)
    d = counts.size
    f = counts / counts.sum() if counts.sum() > 0 else np.full(d, 1.0 / d)
    return weight * f + (1.0 - weight) / d


def _oracle(variant: str, d: int, eps1: float):
    return GRR(d, eps1) if variant == "grr" else OUE(d, eps1)


def mixture_probabilities(variant: str, prior: np.ndarray, a: int, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """``(p'_v, q'_v)`` per item: the support probabilities of one attribute's report, real or
    fake, for a user holding ``v`` and one holding another value (module docstring)."""
    prior = np.asarray(prior, dtype=float)
    o = _oracle(variant, prior.size, amplified_epsilon(epsilon, a))
    p, q = o.p_star, o.q_star
    fake = prior if variant == "grr" else q + (p - q) * prior
    return (p + (a - 1) * fake) / a, (q + (a - 1) * fake) / a


def rsrfd_variance(variant: str, prior: np.ndarray, a: int, epsilon: float, n: int, f: np.ndarray) -> np.ndarray:
    """``Var f_v = (f_v p'_v(1-p'_v) + (1-f_v) q'_v(1-q'_v)) / (n (p'_v-q'_v)^2)`` (module docstring)."""
    p, q = mixture_probabilities(variant, prior, a, epsilon)
    f = np.asarray(f, dtype=float)
    return (f * p * (1 - p) + (1 - f) * q * (1 - q)) / (n * (p - q) ** 2)


class PriorFakeChannel(Channel):
    """``P(y | x) = s [y = x] + t + u pi_y`` over ``[d]`` (RS+RFD[GRR]'s report of one attribute:
    ``s = (p - q)/a``, ``t = q/a``, ``u = (a - 1)/a``)."""

    def __init__(self, prior: np.ndarray, s: float, t: float, u: float) -> None:
        self.prior = np.asarray(prior, dtype=float)
        self.s, self.t, self.u = float(s), float(t), float(u)
        self.n_items = self.n_reports = int(self.prior.size)

    def forward(self, theta: np.ndarray) -> np.ndarray:
        theta = np.asarray(theta, dtype=float)
        return self.s * theta + (self.t + self.u * self.prior) * theta.sum()

    def backward(self, w: np.ndarray) -> np.ndarray:
        w = np.asarray(w, dtype=float)
        return self.s * w + self.t * w.sum() + self.u * float(self.prior @ w)


def fake_support(
    variant: str, prior: np.ndarray, m: int, eps1: float, rng: np.random.Generator, simulation: str
) -> np.ndarray:
    """Support counts of ``m`` users' fake reports for one attribute (values drawn from ``prior``)."""
    d = prior.size
    if m == 0:
        return np.zeros(d, dtype=np.int64)
    if simulation == "per-user":
        values = np.bincount(rng.choice(d, size=m, p=prior), minlength=d).astype(np.int64)
    else:
        values = rng.multinomial(m, prior).astype(np.int64)
    if variant == "grr":  # a GRR report supports one value: the fake value itself
        return values
    return np.asarray(simulate(OUE(d, eps1), values, rng, simulation).support_counts, dtype=np.int64)


class RSRFD(MultidimProtocol):
    """Sample one attribute, report it at the amplified budget, fake the others from a prior."""

    name = "rs-rfd"
    params = (
        Param("oracle", str, "grr", "the fake data's variant: grr or oue-r", choices=VARIANTS),
        Param(
            "prior_weight",
            float,
            1.0,
            "the fake data's law per attribute, w f_j + (1 - w) uniform (f_j the true marginal, a stand-in "
            "for the server's prior knowledge; 0 is RS+FD)",
            min=0.0,
            max=1.0,
        ),
    )

    def output_capabilities(self) -> dict[str, bool]:
        """GRR: the report histogram with its prior-fake channel, not randomized response (EM, IBU;
        no ``mle-rr``); OUE-r: support counts whose ``p'_v``, ``q'_v`` depend on the item, no
        likelihood at all (no EM-family step, no IBU)."""
        grr = self.oracle == "grr"
        return {"output_channel": grr, "output_randomized_response": False, "output_likelihood": grr}

    def privacy_accounting(self, epsilon: float) -> list[dict[str, Any]]:
        """``epsilon`` is the budget RS+FD's amplification is stated for (exact over records that differ in one attribute
        only for the uniform prior); ``eps'`` bounds any two records exactly (module docstring)."""
        rows = super().privacy_accounting(epsilon)
        rows[0]["scope"] = (
            "the RS+FD budget; exact for records that differ in one attribute only with a uniform prior "
            "(RS+FD), any other prior exceeds it (docs/multidimensional.md); any two records: "
            "ln(a (e^eps - 1) + 1) for a attributes, exactly, for every prior"
        )
        return rows

    def priors(self, attrs) -> list[np.ndarray]:
        """``pi_j`` for every attribute of the run's population."""
        return [prior_of(attrs.marginal_counts(j), self.prior_weight) for j in range(attrs.a)]

    def run(
        self, population: Population, epsilon: float, rng: np.random.Generator, *, simulation: str = "aggregate"
    ) -> Mapping[str, Estimate]:
        attrs = attributes_of(population)
        n, a = attrs.n, attrs.a
        eps1 = amplified_epsilon(epsilon, a)
        chosen = rng.integers(0, a, size=n)
        out = {}
        for j, (name, prior) in enumerate(zip(attrs.names, self.priors(attrs))):
            d = attrs.sizes[j]
            real = np.bincount(attrs.rows[chosen == j, j], minlength=d).astype(np.int64)
            oracle = _oracle(self.oracle, d, eps1)
            support = np.asarray(simulate(oracle, real, rng, simulation).support_counts, dtype=np.int64)
            support = support + fake_support(self.oracle, prior, n - int(real.sum()), eps1, rng, simulation)
            p1, q1 = mixture_probabilities(self.oracle, prior, a, epsilon)
            extra: dict[str, Any] = {}
            if self.oracle == "grr":
                o = GRR(d, eps1)
                channel = PriorFakeChannel(prior, (o.p_star - o.q_star) / a, o.q_star / a, (a - 1) / a)
                extra = {"report_histogram": support, "channel": channel}
            out[name] = Estimate(
                frequencies=(support / n - q1) / (p1 - q1),
                n=n,
                epsilon=float(epsilon),
                mechanism=self.name,
                variance=q1 * (1 - q1) / (n * (p1 - q1) ** 2),
                support_counts=support,
                info={"amplified_epsilon": eps1, "prior_weight": self.prior_weight},
                **extra,
            )
        return out

    def perturb_records(
        self,
        rows: np.ndarray,
        sizes: tuple[int, ...],
        epsilon: float,
        rng: np.random.Generator,
        priors: list[np.ndarray] | None = None,
    ):
        """Whole reports, canonically encoded (the audit): ``(n, a)``, every column the row of the
        oracle's ``output_table`` its value is, real or fake alike. ``priors`` default to uniform,
        as :meth:`report_table`'s (the audit compares the two)."""
        n, a = rows.shape
        priors = priors if priors is not None else [np.full(d, 1.0 / d) for d in sizes]
        eps1 = amplified_epsilon(epsilon, a)
        chosen = rng.integers(0, a, size=n)
        out = np.empty((n, a), dtype=np.int64)
        for j, d in enumerate(sizes):
            oracle = _oracle(self.oracle, d, eps1)
            real = chosen == j
            out[real, j] = oracle.output_rows(oracle.perturb(rows[real, j], rng))
            fake = rng.choice(d, size=int(n - real.sum()), p=priors[j])
            out[~real, j] = fake if self.oracle == "grr" else oracle.output_rows(oracle.perturb(fake, rng))
        return out

    def record_accounting(self, epsilon: float, sizes: tuple[int, ...]) -> dict[str, object]:
        """Each attribute's real report at ``eps'``; ``eps'`` over any two records and, for a
        prior other than uniform, over one attribute too (module docstring)."""
        eps1 = amplified_epsilon(epsilon, len(sizes))
        return {"per_attribute": [eps1] * len(sizes), "any_records": eps1, "one_attribute": eps1}

    def report_widths(self, sizes: tuple[int, ...], epsilon: float) -> list[int]:
        return [d if self.oracle == "grr" else 1 << d for d in sizes]

    def report_table(
        self, sizes: tuple[int, ...], epsilon: float, priors: list[np.ndarray] | None = None
    ) -> np.ndarray:
        """``P[x, y] = (1/a) sum_j M'_j(y_j | x_j) prod_{k != j} F_k(y_k)``, ``F_k = pi_k M'_k``
        the law of a fake report (GRR: ``pi_k`` itself); ``priors`` default to uniform (RS+FD)."""
        a = len(sizes)
        eps1 = amplified_epsilon(epsilon, a)
        priors = priors if priors is not None else [np.full(d, 1.0 / d) for d in sizes]
        real, fake = [], []
        for d, prior in zip(sizes, priors):
            M = oracle_matrix(_oracle(self.oracle, d, eps1))
            F = np.asarray(prior, dtype=float) if self.oracle == "grr" else np.asarray(prior, dtype=float) @ M
            real.append(M)
            fake.append(np.repeat(F[None, :], d, axis=0))
        return sum(kron_all([real[k] if k == j else fake[k] for k in range(a)]) for j in range(a)) / a


@hookimpl
def ldpbench_register_protocols(registry):
    registry.register(RSRFD)
