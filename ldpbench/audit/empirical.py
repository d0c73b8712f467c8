"""The empirical privacy audit: distinguishing attacks and a lower confidence bound on epsilon.

Method of LDP-Auditor (Arcolezi & Gambs, "Revealing the True Cost of Locally Differentially
Private Protocols: An Auditing Perspective", PETS 2024), after the central-DP auditing of Jagielski
et al. (NeurIPS 2020): if an oracle is epsilon-LDP then for **every** event ``A`` of a report and
every pair of inputs, ``P(A | v1) <= e^eps P(A | v2)``. Draw ``N`` reports of ``v1`` and ``N`` of
``v2``; an attack is an event ``A``. Clopper-Pearson bounds ``P(A | v1) >= lower1`` and
``P(A | v2) <= upper2`` hold together with probability ``>= 1 - a`` (``a/2`` each side), so

    eps_lb = ln(lower1 / upper2)

is a lower confidence bound on the epsilon the oracle really spends. The audit tries ``m`` attacks
(every budget x pair x attack) and gives each ``a = alpha / m`` (Bonferroni), so the chance that
*any* reported bound exceeds the true epsilon — a false alarm on a correct oracle — is at most
``alpha``. A lower bound can catch a leak; it cannot prove there is none (that is what the exact
audit of :mod:`.exact` is for, where a finite table exists).

Attacks on the reports of ``(v1, v2)``, all read off ``Oracle.support_matrix`` rows:

- ``item``: ``v1`` is in the support (the optimal test for GRR);
- ``absent``: ``v2`` is not in the support;
- ``pair``: ``v1`` in the support and ``v2`` not (the optimal test for unary encoding, where the
  two bits are independent and each contributes a factor);
- ``joint``: the report's whole support **set** as one categorical outcome. On a training half,
  ``A`` = the sets seen more than ``e^eps (n2 + 1)`` times under ``v1`` (``n2`` = times under
  ``v2``); ``A`` is then counted on the held-out half, so choosing it costs no confidence. This
  catches leaks in the joint structure of a report that leave every item's marginal law intact.

Oracles with continuous reports and no support sets (SHE: Laplace-noised vectors) declare their
density instead (``Oracle.report_log_likelihood``, the ``report_density`` tag). Their reports are
attacked with the optimal test of Neyman and Pearson, the **likelihood-ratio** event
``{L > t}`` where ``L = log p(y | v1) - log p(y | v2)`` is computed from the declared density; ``t``
is chosen on a training half and the event counted on the held-out half, so the bound stays valid
whether or not the declared density is the true law of ``perturb``'s reports (if the reports are
less noisy than declared, the event fires more often under ``v1`` than ``e^eps`` times). Besides,
the declared density itself must be epsilon-LDP: the largest ``|L|`` over every drawn report is
reported as ``declared_loss`` and is a leak when it exceeds epsilon (a declared noise scale that is
too small for the claimed budget).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ldpbench.audit.law import read_only_items
from ldpbench.types import Oracle

#: Attacks run on every (budget, pair), in report order.
ATTACKS = ("item", "absent", "pair", "joint")
#: Support-matrix cells per chunk of drawn reports (bounds the audit's memory at any d).
CELLS_PER_CHUNK = 1 << 22
#: The attack on continuous reports with a declared density.
LR_ATTACK = "likelihood-ratio"
#: Relative slack on epsilon for the declared density's privacy loss (floating-point rounding).
DENSITY_SLACK = 1e-9


def has_support_matrix(oracle: Oracle) -> bool:
    """Whether the oracle declares :meth:`~ldpbench.types.Oracle.support_matrix` (its
    ``support_matrix`` tag): the one place the audit asks."""
    return oracle.tags().support_matrix


def clopper_pearson(k: int, n: int, a: float) -> tuple[float, float]:
    """One-sided ``1 - a`` Clopper-Pearson bounds ``(lower, upper)`` on a binomial proportion."""
    from scipy.stats import beta

    lower = 0.0 if k <= 0 else float(beta.ppf(a, k, n - k + 1))
    upper = 1.0 if k >= n else float(beta.ppf(1 - a, k + 1, n - k))
    return lower, upper


def _log_ratio(num: float, den: float) -> float:
    if num <= 0:
        return -math.inf
    if den <= 0:
        return math.inf
    return math.log(num / den)


@dataclass(frozen=True)
class AttackResult:
    """One attack on one pair at one budget: how often it fired under each input, and the bounds."""

    attack: str
    epsilon: float
    v1: int
    v2: int
    fired1: int
    n1: int
    fired2: int
    n2: int
    #: ``a``: the confidence split this attack got (both sides together)
    level: float

    @property
    def _bounds(self) -> tuple[float, float, float, float]:
        lo1, up1 = clopper_pearson(self.fired1, self.n1, self.level / 2)
        lo2, up2 = clopper_pearson(self.fired2, self.n2, self.level / 2)
        return lo1, up1, lo2, up2

    @property
    def eps_lb(self) -> float:
        """``ln(lower1 / upper2)``: the lower confidence bound on the effective epsilon."""
        lo1, _, _, up2 = self._bounds
        return _log_ratio(lo1, up2)

    @property
    def eps_ub(self) -> float:
        """``ln(upper1 / lower2)``: the other end of the interval of this attack's likelihood ratio."""
        _, up1, lo2, _ = self._bounds
        return _log_ratio(up1, lo2)

    @property
    def eps_hat(self) -> float:
        """The point estimate ``ln(p1_hat / p2_hat)``."""
        return _log_ratio(self.fired1 / max(1, self.n1), self.fired2 / max(1, self.n2))

    def describe(self) -> str:
        return (
            f"{self.attack} attack on ({self.v1}, {self.v2}): fired {self.fired1}/{self.n1} vs {self.fired2}/{self.n2}"
        )


@dataclass(frozen=True)
class BudgetAudit:
    """Every attack at one claimed epsilon, and the best of them."""

    epsilon: float
    attacks: tuple[AttackResult, ...]
    #: The largest privacy loss ``|log p(y | v1) - log p(y | v2)|`` of the declared density over
    #: every drawn report (oracles with a ``report_density`` only; ``-inf`` otherwise).
    declared_loss: float = -math.inf

    @property
    def best(self) -> AttackResult | None:
        return max(self.attacks, key=lambda r: r.eps_lb, default=None)

    @property
    def eps_lb(self) -> float:
        best = self.best
        return -math.inf if best is None else best.eps_lb

    @property
    def density_leak(self) -> bool:
        """The declared density spends more than epsilon on some drawn report."""
        return self.declared_loss > self.epsilon * (1 + DENSITY_SLACK)

    @property
    def leak(self) -> bool:
        return self.eps_lb > self.epsilon or self.density_leak


@dataclass(frozen=True)
class EmpiricalAudit:
    """The outcome over all budgets. ``verdict`` is ``consistent``, ``leak`` or ``cannot audit``."""

    d: int
    trials: int
    alpha: float
    budgets: tuple[BudgetAudit, ...] = ()
    reason: str = ""
    tests: int = 0

    @property
    def available(self) -> bool:
        return not self.reason

    @property
    def leak(self) -> bool:
        return any(b.leak for b in self.budgets)

    @property
    def verdict(self) -> str:
        if not self.available:
            return "cannot audit"
        return "leak" if self.leak else "consistent"


def default_pairs(d: int, rng: np.random.Generator, count: int = 4) -> list[tuple[int, int]]:
    """Input pairs to attack: (0, 1) and (1, 0), then random distinct pairs in both orders."""
    pairs = [(0, 1), (1, 0)]
    while len(pairs) < count and d > 2:
        a, b = (int(x) for x in rng.choice(d, size=2, replace=False))
        if (a, b) not in pairs:
            pairs += [(a, b), (b, a)]
    return pairs[: max(2, count)]


def _draw(oracle: Oracle, v: int, n: int, rng: np.random.Generator, weights: np.ndarray, cols: tuple[int, int]):
    """``n`` reports of input ``v``, reduced in chunks to what the attacks need: the two columns of
    the pair and a 64-bit fingerprint of each report's support set (a random linear hash mod 2^64;
    a collision merely merges two outcomes into one event, which is still a valid test)."""
    chunk = max(1, min(n, CELLS_PER_CHUNK // max(1, oracle.d)))
    col = np.empty((n, 2), dtype=bool)
    keys = np.empty(n, dtype=np.uint64)
    for start in range(0, n, chunk):
        m = min(chunk, n - start)
        S = np.asarray(oracle.support_matrix(oracle.perturb(read_only_items(v, m), rng)), dtype=bool)
        if S.shape != (m, oracle.d):
            raise ValueError(f"support_matrix returned shape {S.shape}, expected ({m}, {oracle.d})")
        col[start : start + m] = S[:, list(cols)]
        keys[start : start + m] = S.astype(np.uint64) @ weights
    return col, keys


def _joint(keys1: np.ndarray, keys2: np.ndarray, epsilon: float) -> tuple[int, int, int, int]:
    """Train on the first halves, count on the second: ``(fired1, n1, fired2, n2)``."""
    h1, h2 = keys1.size // 2, keys2.size // 2
    u1, c1 = np.unique(keys1[:h1], return_counts=True)
    u2, c2 = np.unique(keys2[:h2], return_counts=True)
    seen2 = np.zeros(u1.size, dtype=np.int64)
    if u2.size:
        at = np.minimum(np.searchsorted(u2, u1), u2.size - 1)
        match = u2[at] == u1
        seen2[match] = c2[at[match]]
    chosen = u1[c1 > math.exp(min(epsilon, 700.0)) * (seen2 + 1)]
    fired1 = int(np.isin(keys1[h1:], chosen).sum())
    fired2 = int(np.isin(keys2[h2:], chosen).sum())
    return fired1, keys1.size - h1, fired2, keys2.size - h2


def empirical_audit(
    make: Callable[[float], Oracle],
    epsilons: Sequence[float],
    *,
    trials: int = 20_000,
    alpha: float = 0.05,
    seed: int = 0,
    pairs: Sequence[tuple[int, int]] | None = None,
) -> EmpiricalAudit:
    """Attack the oracle ``make(eps)`` at each claimed budget with ``trials`` reports per input.

    :param make: builds the oracle for a budget (its domain size is the audit's ``d``).
    :param pairs: input pairs ``(v1, v2)``; default :func:`default_pairs`.
    :returns: bounds per budget; ``alpha`` is split (Bonferroni) over every attack of every budget
        and pair, so a correct oracle is reported as leaking with probability at most ``alpha``.
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    if trials < 2:
        raise ValueError(f"trials must be at least 2, got {trials}")
    first = make(float(epsilons[0]))
    d = first.d
    if not has_support_matrix(first):
        if first.tags().report_density:
            return likelihood_ratio_audit(make, first, epsilons, trials=trials, alpha=alpha, seed=seed, pairs=pairs)
        return EmpiricalAudit(
            d,
            trials,
            alpha,
            reason=f"cannot audit empirically: {type(first).__name__} has neither support_matrix nor a report density",
        )
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 0xA0D17]))
    pairs = list(pairs) if pairs is not None else default_pairs(d, rng)
    tests = len(epsilons) * len(pairs) * len(ATTACKS)
    level = alpha / tests
    weights = rng.integers(0, np.iinfo(np.uint64).max, size=d, dtype=np.uint64, endpoint=True)
    budgets = []
    for eps in epsilons:
        oracle = first if eps == epsilons[0] else make(float(eps))
        results: list[AttackResult] = []
        for v1, v2 in pairs:
            col1, keys1 = _draw(oracle, v1, trials, rng, weights, (v1, v2))
            col2, keys2 = _draw(oracle, v2, trials, rng, weights, (v1, v2))
            events = {
                "item": (col1[:, 0], col2[:, 0]),
                "absent": (~col1[:, 1], ~col2[:, 1]),
                "pair": (col1[:, 0] & ~col1[:, 1], col2[:, 0] & ~col2[:, 1]),
            }
            for name, (e1, e2) in events.items():
                results.append(
                    AttackResult(name, float(eps), v1, v2, int(e1.sum()), trials, int(e2.sum()), trials, level)
                )
            f1, n1, f2, n2 = _joint(keys1, keys2, float(eps))
            results.append(AttackResult("joint", float(eps), v1, v2, f1, n1, f2, n2, level))
        budgets.append(BudgetAudit(float(eps), tuple(results)))
    return EmpiricalAudit(d, trials, alpha, tuple(budgets), tests=tests)


def _losses(oracle: Oracle, v: int, n: int, rng: np.random.Generator, pair: tuple[int, int]) -> np.ndarray:
    """``L = log p(y | v1) - log p(y | v2)`` of ``n`` reports of input ``v`` (declared density), in chunks."""
    chunk = max(1, min(n, CELLS_PER_CHUNK // max(1, oracle.d)))
    out = np.empty(n)
    for start in range(0, n, chunk):
        m = min(chunk, n - start)
        reports = oracle.perturb(read_only_items(v, m), rng)
        ll = np.asarray(oracle.report_log_likelihood(reports), dtype=float)
        if ll.shape != (m, oracle.d):
            raise ValueError(f"report_log_likelihood returned shape {ll.shape}, expected ({m}, {oracle.d})")
        out[start : start + m] = ll[:, pair[0]] - ll[:, pair[1]]
    if np.isnan(out).any():
        raise ValueError("report_log_likelihood returned NaN for a drawn report")
    return out


def _lr_threshold(train1: np.ndarray, train2: np.ndarray, epsilon: float, level: float) -> float:
    """The threshold ``t`` of ``{L >= t}`` with the best lower bound on the training halves."""
    # A fixed grid relative to epsilon, never thresholds read off the data: a loss computed in
    # floating point scatters by a few ulps around its exact value (e.g. the point mass of SHE's
    # loss at exactly eps), and a threshold inside that cloud would "distinguish" the two inputs by
    # the rounding of the report's low-order bits. That is a real property of float reports
    # (Mironov, CCS 2012) but not of the mechanism this audit checks.
    candidates = [epsilon * j / 32 for j in range(32)] + [epsilon * (1 - 1e-6)]
    best, best_lb = math.inf, -math.inf
    for t in sorted(candidates):
        lb = AttackResult(
            LR_ATTACK,
            epsilon,
            0,
            1,
            int((train1 >= t).sum()),
            train1.size,
            int((train2 >= t).sum()),
            train2.size,
            level,
        ).eps_lb
        if lb > best_lb:
            best, best_lb = t, lb
    return best


def likelihood_ratio_audit(
    make: Callable[[float], Oracle],
    first: Oracle,
    epsilons: Sequence[float],
    *,
    trials: int,
    alpha: float,
    seed: int,
    pairs: Sequence[tuple[int, int]] | None = None,
) -> EmpiricalAudit:
    """The audit of an oracle with continuous reports and a declared density (module docstring):
    one likelihood-ratio attack per budget and pair, Bonferroni over all of them, and the declared
    density's worst privacy loss over every drawn report."""
    d = first.d
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 0xA0D17, 1]))
    pairs = list(pairs) if pairs is not None else default_pairs(d, rng)
    tests = len(epsilons) * len(pairs)
    level = alpha / tests
    budgets = []
    for eps in epsilons:
        oracle = first if eps == epsilons[0] else make(float(eps))
        results: list[AttackResult] = []
        worst = -math.inf
        for v1, v2 in pairs:
            loss1 = _losses(oracle, v1, trials, rng, (v1, v2))
            loss2 = _losses(oracle, v2, trials, rng, (v1, v2))
            worst = max(worst, float(np.abs(loss1).max()), float(np.abs(loss2).max()))
            h1, h2 = trials // 2, trials // 2
            t = _lr_threshold(loss1[:h1], loss2[:h2], float(eps), level)
            fired1, fired2 = int((loss1[h1:] >= t).sum()), int((loss2[h2:] >= t).sum())
            results.append(AttackResult(LR_ATTACK, float(eps), v1, v2, fired1, trials - h1, fired2, trials - h2, level))
        budgets.append(BudgetAudit(float(eps), tuple(results), declared_loss=worst))
    return EmpiricalAudit(d, trials, alpha, tuple(budgets), tests=tests)
