"""The averaging attack across rounds: how much T reports of one unchanged value reveal
(docs/longitudinal.md).

An adversary sees a user's T reports and guesses the value as the one they support most often
(ties broken at random): against a protocol that re-randomizes afresh every round the guess
converges to the true value as T grows; against a memoized one it converges to the permanent
response, which is only ``eps_inf``-LDP (Erlingsson, Pihur & Korolova, CCS 2014, §3: the reason
memoization exists).

From the success rate ``s`` over ``users`` draws with the value uniform over ``[d]``, a lower bound
on the privacy loss of the T reports together: any ``eps``-LDP release lets a guesser succeed
with probability at most ``e^eps / (e^eps + d - 1)`` under a uniform prior (for each output y,
``P(y | g(y)) <= e^eps P(y | x')`` for every x', so ``sum_x P(y | x) >= P(y | g(y)) (1 + (d - 1)
e^-eps)``; summing over y), hence ``eps >= ln(s (d - 1) / (1 - s))``. With the one-sided
Clopper-Pearson lower bound on ``s`` at level ``alpha`` it is a lower confidence bound: an
empirical lower bound on the privacy loss over T rounds, never a proof of privacy.

The protocol is a function ``supports(values, T, rng) -> (users, d)``: how many of each user's T
reports support each item, for users whose value stays ``values[i]`` (the mechanism's own code;
the longitudinal protocols provide ``static_supports``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ldpbench.audit.empirical import clopper_pearson
from ldpbench.boundary.failures import describe_exception
from ldpbench.errors import LdpbenchError, NotApplicable

#: ``supports(values, T, rng)``: per user, how many of T reports support each item.
Supports = Callable[[np.ndarray, int, np.random.Generator], np.ndarray]


@dataclass(frozen=True)
class AveragingPoint:
    """The attack after ``rounds`` reports: success rate, its lower bound, and the eps lower bound."""

    rounds: int
    success: float
    success_lower: float
    epsilon_lower: float


def guess(counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Each user's most supported item, ties broken uniformly at random (vectorized)."""
    counts = np.asarray(counts, dtype=float)
    jitter = rng.random(counts.shape)  # < 1: breaks ties only, never reorders distinct counts
    return np.argmax(counts + jitter, axis=1)


def epsilon_lower_bound(success: float, d: int) -> float:
    """``ln(s (d - 1) / (1 - s))``: the least eps a guesser succeeding with probability ``s``
    under a uniform prior over ``d`` values implies (module docstring); 0 at or below chance."""
    if success <= 1 / d:
        return 0.0
    if success >= 1:
        return math.inf
    return math.log(success * (d - 1) / (1 - success))


def averaging_attack(
    supports: Supports,
    d: int,
    rounds: Sequence[int],
    users: int,
    rng: np.random.Generator,
    alpha: float = 0.05,
) -> list[AveragingPoint]:
    """The attack's success and the privacy loss it proves, for each number of rounds in ``rounds``
    (fresh users, values uniform over ``[d]``, for each)."""
    out = []
    for T in rounds:  # noqa: N806 - the papers' name
        values = rng.integers(0, d, size=users)
        hits = int(np.count_nonzero(guess(supports(values, int(T), rng), rng) == values))
        lower, _ = clopper_pearson(hits, users, alpha)
        out.append(AveragingPoint(int(T), hits / users, lower, epsilon_lower_bound(lower, d)))
    return out


# --- the averaging audit of an installed longitudinal protocol (``ldpbench audit NAME``) ------------

#: Default grid of rounds of ``ldpbench audit`` on a longitudinal protocol.
ROUNDS = (1, 4, 16, 64)


@dataclass(frozen=True)
class RoundsBudget:
    """The attack at one spec budget: the declared ``epsilon_inf`` (``None``: no bound over rounds)
    and ``epsilon_1``, a point per number of rounds, and ``ceiling``, the largest lower bound the
    attack could show with this many users (every guess right)."""

    epsilon: float
    epsilon_inf: float | None
    epsilon_1: float
    points: tuple[AveragingPoint, ...]
    ceiling: float

    def claimed(self, rounds: int) -> float:
        """What the protocol claims for ``rounds`` reports of one value: ``min(eps_inf, T eps_1)``
        (sequential composition bounds T reports by ``T eps_1`` whatever is declared)."""
        bound = rounds * self.epsilon_1
        return bound if self.epsilon_inf is None else min(self.epsilon_inf, bound)

    @property
    def leaks(self) -> list[AveragingPoint]:
        """The points whose lower bound exceeds what is claimed for their number of rounds."""
        return [pt for pt in self.points if pt.epsilon_lower > self.claimed(pt.rounds) + 1e-12]

    @property
    def reachable(self) -> bool:
        """Whether the attack could show a loss above the declared ``epsilon_inf`` at all here
        (otherwise staying below it is no evidence: "cannot reach", never a pass)."""
        return self.epsilon_inf is None or self.ceiling > self.epsilon_inf

    def status(self) -> str:
        if self.leaks:
            worst = max(self.leaks, key=lambda pt: pt.epsilon_lower - self.claimed(pt.rounds))
            return (
                f"LEAK: {worst.rounds} reports show eps >= {worst.epsilon_lower:.3f} > claimed "
                f"{self.claimed(worst.rounds):.3f}"
            )
        top = max(pt.epsilon_lower for pt in self.points)
        if self.epsilon_inf is None:
            first, last = self.points[0], self.points[-1]
            return (
                f"no bound over rounds declared: the loss grows with T ({first.epsilon_lower:.3f} at T = "
                f"{first.rounds} to {last.epsilon_lower:.3f} at T = {last.rounds}), within T * eps_1"
            )
        if not self.reachable:
            return (
                f"cannot reach eps_inf = {self.epsilon_inf:g}: the attack can show at most "
                f"{self.ceiling:.3f} with these users (not a pass; more --trials or a smaller eps)"
            )
        return f"within eps_inf = {self.epsilon_inf:g} (largest lower bound {top:.3f})"


@dataclass
class RoundsAudit:
    """The averaging audit of one longitudinal protocol over a grid of budgets and rounds."""

    name: str
    params: Mapping[str, Any]
    d: int
    users: int
    alpha: float
    rounds: tuple[int, ...]
    budgets: list[RoundsBudget] = field(default_factory=list)
    reason: str | None = None
    errors: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return bool(self.errors or any(b.leaks for b in self.budgets))

    @property
    def audited(self) -> bool:
        return bool(self.budgets)

    @property
    def partial(self) -> bool:
        """A budget whose declared ``eps_inf`` the attack cannot reach is not audited."""
        return any(not b.reachable for b in self.budgets)

    @property
    def verdict(self) -> str:
        if self.errors:
            return "FAILED: the plugin raised while being audited"
        if any(b.leaks for b in self.budgets):
            return "LEAK: the averaging attack shows more than the claimed loss over rounds"
        if not self.audited:
            return f"not audited: {self.reason}"
        if self.partial:
            return "partial: no evidence of more loss than claimed, but some eps_inf is beyond the attack's reach"
        return "consistent: no evidence of more privacy loss over rounds than claimed"

    def to_json(self) -> dict[str, Any]:
        return {
            "plugin": self.name,
            "params": dict(self.params),
            "audit": "averaging",
            "verdict": self.verdict,
            "failed": self.failed,
            "partial": self.partial,
            "d": self.d,
            "users": self.users,
            "alpha": self.alpha,
            "rounds": list(self.rounds),
            "reason": self.reason,
            "errors": list(self.errors),
            "budgets": [
                {
                    "epsilon": b.epsilon,
                    "epsilon_inf": b.epsilon_inf,
                    "epsilon_1": b.epsilon_1,
                    "ceiling": b.ceiling,
                    "status": b.status(),
                    "points": [
                        {
                            "rounds": pt.rounds,
                            "success": pt.success,
                            "success_lower": pt.success_lower,
                            "epsilon_lower": pt.epsilon_lower,
                            "claimed": b.claimed(pt.rounds),
                        }
                        for pt in b.points
                    ],
                }
                for b in self.budgets
            ],
        }

    def lines(self) -> list[str]:
        label = self.name + "".join(f" {k}={v}" for k, v in self.params.items())
        out = [f"averaging audit of {label} (rounds of one unchanged value)"]
        if self.budgets:
            out.append(
                f"  d={self.d}, {self.users} users per point, values uniform; alpha={self.alpha:g} split over "
                f"{len(self.budgets) * len(self.rounds)} points; lower bound ln(s (d-1)/(1-s)) at the "
                "Clopper-Pearson lower s"
            )
            out.append(
                f"  {'eps':>6}  {'eps_inf':>7}  {'eps_1':>6}  " + "  ".join(f"{'T=' + str(t):<13}" for t in self.rounds)
            )
            for b in self.budgets:
                inf = "none" if b.epsilon_inf is None else f"{b.epsilon_inf:g}"
                cells = "  ".join(f"{pt.success:.3f}/{pt.epsilon_lower:.3f}".ljust(13) for pt in b.points)
                out.append(f"  {b.epsilon:>6g}  {inf:>7}  {b.epsilon_1:>6.3g}  {cells}")
            out.append("  (cells: success rate / eps lower bound)")
            for b in self.budgets:
                out.append(f"  eps {b.epsilon:g}: {b.status()}")
        elif self.reason:
            out.append(f"  {self.reason}")
        for err in self.errors:
            out.append(f"error: {err}")
        out.append(f"verdict: {self.verdict}")
        return out


def _declared(protocol: Any, epsilon: float) -> tuple[float | None, float]:
    """``(epsilon_inf, epsilon_1)`` from the protocol's accounting (its first group)."""
    entry = dict(protocol.privacy_accounting(epsilon)[0])
    inf = entry.get("epsilon_inf", epsilon)
    return (None if inf is None else float(inf)), float(entry.get("epsilon_1", epsilon))


def rounds_audit(
    protocol: Any,
    *,
    name: str | None = None,
    params: Mapping[str, Any] | None = None,
    d: int = 16,
    epsilons: Sequence[float] = (0.5, 1.0, 4.0),
    rounds: Sequence[int] = ROUNDS,
    users: int = 20_000,
    alpha: float = 0.05,
    seed: int = 0,
) -> RoundsAudit:
    """The averaging attack on ``protocol`` (an instance with ``static_supports``) at every budget
    and number of rounds, against its declared ``epsilon_inf`` and ``epsilon_1``; ``alpha`` is the
    false-alarm probability of the whole audit (Bonferroni over the points)."""
    grid = tuple(sorted({int(t) for t in rounds}))
    out = RoundsAudit(name or protocol.name, dict(params or {}), d, users, alpha, grid)
    level = alpha / max(1, len(epsilons) * len(grid))
    rng = np.random.default_rng(seed)
    ceiling = epsilon_lower_bound(clopper_pearson(users, users, level)[0], d)
    for eps in epsilons:
        try:
            inf, one = _declared(protocol, float(eps))
            supports = functools.partial(protocol.static_supports, d, float(eps))
            points = averaging_attack(supports, d, grid, users, rng, alpha=level)
        except NotImplementedError:
            out.reason = "the protocol declares no static_supports (its per-user reports over rounds)"
            return out
        except NotApplicable as exc:
            out.reason = f"not applicable at eps = {eps:g}: {exc}"
            continue
        except LdpbenchError:
            raise
        except Exception as exc:  # noqa: BLE001 - the plugin's failure is the audit's finding
            out.errors.append(f"eps = {eps:g}: " + describe_exception(exc))
            continue
        out.budgets.append(RoundsBudget(float(eps), inf, one, tuple(points), ceiling))
    return out
