"""EM reconstruction from report histograms, and the information operator it leaves behind.

Model ([MHS18] §3; Agrawal et al., SIGMOD 2005). Users are in budget groups g = 1..G; group g has
n_g users and a channel ``Q_g(y | x)`` (GRR with its own epsilon, HR, or the identity for eps = inf).
Every user's item is drawn from theta (a point of the simplex), so a report of group g takes the
value y with probability ``P_g(y; theta) = sum_x Q_g(y|x) theta_x`` -- linear in theta. The
sufficient statistics are the report histograms ``h_g``; the log-likelihood is

    L(theta) = sum_g sum_y h_g[y] log P_g(y; theta).

EM (one E+M step, docs/algorithms.md §4.3)::

    theta_x <- theta_x * m_x(theta),   m_x(theta) = (1/N) sum_g sum_y h_g[y] Q_g(y|x) / P_g(y; theta)

i.e. ``m = (1/N) sum_g backward_g(h_g / forward_g(theta))``: one forward and one backward pass of
each group's channel, O(d x G) per iteration for GRR (O(K log K) per group for HR), never an N x d
or d x d matrix. ``m`` is the gradient of L/N, and ``theta . m = 1`` for every theta on the
simplex, so the update stays on the simplex and L never decreases (the EM property).

The fixed point is the constrained MLE: the KKT conditions with multiplier 1 (= theta . m) are
``m_x <= 1`` for all x and ``m_x = 1`` where ``theta_x > 0``. Components the MLE puts on the
boundary converge sublinearly (docs/algorithms.md §4.3), so the stopping rule is on the change of theta:
``max_x |theta_x^{t+1} - theta_x^t| < tol / d``, or ``max_iter`` iterations.

GRR channels (and the identity) share the structure ``Q(y|x) = q + (p - q)[x = y]``: all such
groups are stacked into one ``(G, d)`` array and updated together (:class:`_GRRStack`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ldpbench.errors import NotApplicable
from ldpbench.types import Channel, Estimate

# Linear algebra here avoids BLAS on purpose: a multithreaded BLAS on a busy machine makes a
# level-1 call on 10^4 entries a thousand times slower than a plain ufunc loop (measured here,
# OpenBLAS on 2 shared cores). Vectors are long, the "matrices" have a handful of columns.


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.multiply(a, b).sum())


def _tdot(U: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``U.T @ v`` for a tall ``U`` with few columns."""
    return np.multiply(U, v[:, None]).sum(axis=0)


#: Default stopping tolerance (relative to 1/d) and iteration cap (docs/algorithms.md §4.3).
DEFAULT_TOL = 1e-8
DEFAULT_MAX_ITER = 10_000


@dataclass(frozen=True)
class Group:
    """The sufficient statistics of one budget group: its report histogram and channel."""

    histogram: np.ndarray
    channel: Channel
    n: int
    epsilon: float

    @property
    def rr(self) -> tuple[float, float] | None:
        """``(p, q)`` when ``Q(y|x) = q + (p - q)[x = y]`` on a square channel (the channel's
        declared ``randomized_response`` tag: GRR, or the identity for eps = inf), else ``None``."""
        ch = self.channel
        pq = ch.tags().randomized_response
        if pq is None or ch.n_items != ch.n_reports or not np.all(np.isfinite(pq)):
            return None
        return float(pq[0]), float(pq[1])

    @property
    def grr_like(self) -> bool:
        """Whether the channel is randomized response on a square alphabet (see :attr:`rr`)."""
        return self.rr is not None

    @property
    def exact(self) -> bool:
        """Users who sent their true value (identity channel)."""
        return self.rr == (1.0, 0.0)


def groups_of(estimate: Estimate, method: str = "em") -> list[Group]:
    """The budget groups of an estimate: its ``parts``, or the estimate itself when it has none.

    :raises NotApplicable: when a group has no finite report space (OUE, OLH report sets or hashes,
        not values of a finite alphabet with a channel matrix).
    """
    parts = estimate.parts or (estimate,)
    groups = []
    for part in parts:
        if part.report_histogram is None or part.channel is None:
            raise NotApplicable(
                f"post-processor '{method}' needs each report's likelihood: an oracle with a finite "
                f"report space and a channel (grr, hr); '{part.mechanism or 'this oracle'}' "
                f"(epsilon={part.epsilon:g}) provides no report histogram/channel"
            )
        groups.append(channel_group(part))
    check_same_domain(groups)
    return groups


def channel_group(part: Estimate) -> Group:
    """The group of one estimate that carries a report histogram and its channel."""
    hist = np.asarray(part.report_histogram, dtype=float)
    if hist.shape != (part.channel.n_reports,):
        raise ValueError(
            f"report histogram of length {hist.size} does not match the channel's {part.channel.n_reports} reports"
        )
    return Group(hist, part.channel, int(part.n), float(part.epsilon))


def check_same_domain(groups: Sequence[Group]) -> None:
    """:raises ValueError: when the groups' channels disagree on the number of items."""
    d = {g.channel.n_items for g in groups}
    if len(d) != 1:
        raise ValueError(f"budget groups disagree on the domain size: {sorted(d)}")


class _GRRStack:
    """All GRR-like groups at once, over the observed (group, report) pairs only.

    ``P_g(y) = q_g + (p_g - q_g) theta_y`` on the simplex, so the gradient is
    ``sum_g (p_g - q_g) h_g / P_g`` (scattered to the reported items) plus the scalar
    ``sum_g q_g sum_y h_g[y] / P_g(y)``: O(M + d) with M <= min(G d, N) observed pairs.
    """

    def __init__(self, groups: Sequence[Group], d: int):
        group_idx, report_idx = np.nonzero(np.stack([g.histogram for g in groups]) > 0)
        self.d = d
        self.items = report_idx
        self.h = np.stack([g.histogram for g in groups])[group_idx, report_idx]
        pq = np.array([g.rr for g in groups], dtype=float)
        self.q = pq[:, 1][group_idx]
        self.delta = (pq[:, 0] - pq[:, 1])[group_idx]

    def gradient(self, theta: np.ndarray) -> tuple[np.ndarray, float]:
        """``sum_g backward_g(h_g / P_g)`` and the log-likelihood, at ``theta``."""
        P = self.q + self.delta * theta[self.items]
        ratio = self.h / P
        grad = np.bincount(self.items, weights=self.delta * ratio, minlength=self.d)
        grad += _dot(self.q, ratio)
        return grad, _dot(self.h, np.log(P))


def _generic_gradient(groups: Sequence[Group], theta: np.ndarray) -> tuple[np.ndarray, float]:
    grad = np.zeros(theta.size)
    loglik = 0.0
    for g in groups:
        P = np.asarray(g.channel.forward(theta), dtype=float)
        observed = g.histogram > 0
        ratio = np.divide(g.histogram, P, out=np.zeros_like(g.histogram), where=observed)
        grad += np.asarray(g.channel.backward(ratio), dtype=float)
        loglik += float((g.histogram * np.log(np.where(observed, P, 1.0))).sum())
    return grad, loglik


class Likelihood:
    """``L(theta)`` and ``m(theta) = grad L / N`` for a list of groups (GRR-like ones vectorized)."""

    def __init__(self, groups: Sequence[Group]):
        self.groups = list(groups)
        self.d = self.groups[0].channel.n_items
        self.n = int(sum(g.n for g in self.groups))
        stacked = [g for g in self.groups if g.grr_like]
        self.stack = _GRRStack(stacked, self.d) if stacked else None
        self.others = [g for g in self.groups if not g.grr_like]

    def mean_gradient(self, theta: np.ndarray) -> tuple[np.ndarray, float]:
        """``(m(theta), L(theta))``."""
        grad = np.zeros(self.d)
        loglik = 0.0
        if self.stack is not None:
            g, ll = self.stack.gradient(theta)
            grad += g
            loglik += ll
        if self.others:
            g, ll = _generic_gradient(self.others, theta)
            grad += g
            loglik += ll
        return grad / self.n, loglik


@dataclass
class EMResult:
    """The EM fixed point and its diagnostics."""

    theta: np.ndarray
    iterations: int
    converged: bool
    loglik: float
    #: ``m(theta)``, the mean gradient at the returned theta (KKT: <= 1, = 1 on the support)
    m: np.ndarray
    #: log-likelihood of every iterate, when asked for
    trace: list[float] = field(default_factory=list)

    @property
    def kkt_dual(self) -> float:
        """``max_x (m_x - 1)^+``: dual feasibility of the KKT conditions (0 at the exact MLE)."""
        return float(np.max(self.m - 1.0, initial=0.0))

    @property
    def kkt_slack(self) -> float:
        """``max_x theta_x |m_x - 1|``: complementary slackness (0 at the exact MLE; it is the
        size of the next EM step, so the stopping rule bounds it by about tol / d)."""
        return float(np.max(self.theta * np.abs(self.m - 1.0)))

    def warnings(self, max_iter: int) -> tuple[str, ...]:
        """For ``Estimate.warnings`` (the result rows' notes): a capped run is visible."""
        if self.converged:
            return ()
        return (f"EM hit the iteration cap ({max_iter}) before its stopping rule: the last iterate, not the exact MLE",)

    def info(self, tol: float, max_iter: int) -> dict:
        return {
            "em_iterations": int(self.iterations),  # EM maps evaluated
            "em_converged": bool(self.converged),
            "em_loglik": float(self.loglik),
            "em_stopping_rule": f"max |theta change| < {tol:g}/d, at most {max_iter} iterations",
            "em_kkt_dual": self.kkt_dual,
            "em_kkt_slack": self.kkt_slack,
        }


def run_em(
    groups: Sequence[Group],
    tol: float = DEFAULT_TOL,
    max_iter: int = DEFAULT_MAX_ITER,
    theta0: np.ndarray | None = None,
    trace: bool = False,
    accelerate: bool = True,
) -> EMResult:
    """EM reconstruction (maximum likelihood on the simplex) from the groups' report histograms.

    Stopping rule: the EM map moves theta by less than ``tol / d`` in every component, or
    ``max_iter`` EM maps have been evaluated (``converged`` is then False).

    ``accelerate`` applies SQUAREM (Varadhan & Roland, Scand. J. Statist. 2008, scheme S3): two EM
    maps give ``r = F(t) - t`` and ``v = F(F(t)) - 2F(t) + t``; the extrapolation
    ``t - 2 a r + a^2 v`` with ``a = -|r|/|v|`` (at most -1; halved towards -1 until the point is
    positive) is followed by one more EM map and kept only if the log-likelihood does not drop below
    that of ``F(F(t))`` -- so the likelihood still never decreases from one recorded iterate to the
    next, and the fixed point is the same. Components on the boundary, which plain EM shrinks
    geometrically at a rate close to 1, then reach it in far fewer maps.
    """
    lik = Likelihood(groups)
    d = lik.d
    if lik.n <= 0:
        raise ValueError("EM needs at least one report")
    theta = np.full(d, 1.0 / d) if theta0 is None else np.asarray(theta0, dtype=float) / np.sum(theta0)
    threshold = tol / d
    lls: list[float] = []
    converged = False
    evaluations = 0
    m, loglik = lik.mean_gradient(theta)

    def em_map(t: np.ndarray, mt: np.ndarray) -> np.ndarray:
        new = t * mt
        return new / new.sum()  # exact arithmetic keeps the sum at 1; this removes round-off drift

    while evaluations < max_iter:
        if trace:
            lls.append(loglik)
        theta1 = em_map(theta, m)
        evaluations += 1
        if float(np.max(np.abs(theta1 - theta))) < threshold:
            theta = theta1
            m, loglik = lik.mean_gradient(theta)
            converged = True
            break
        m1, loglik1 = lik.mean_gradient(theta1)
        if not accelerate or evaluations >= max_iter:
            theta, m, loglik = theta1, m1, loglik1
            continue
        theta2 = em_map(theta1, m1)
        evaluations += 1
        m2, loglik2 = lik.mean_gradient(theta2)
        r = theta1 - theta
        v = theta2 - theta1 - r
        norm_v = np.sqrt(_dot(v, v))
        candidate = None
        if norm_v > 0 and evaluations < max_iter:
            alpha = min(-np.sqrt(_dot(r, r)) / norm_v, -1.0)
            while alpha < -1.0:
                proposal = theta - 2 * alpha * r + alpha**2 * v
                # stay strictly inside: a component set to 0 could never come back under EM
                if np.all(proposal > 1e-3 * theta2):
                    candidate = proposal / proposal.sum()
                    break
                alpha = (alpha - 1.0) / 2 if alpha < -1.01 else -1.0
        if candidate is not None:
            mc, _ = lik.mean_gradient(candidate)
            stabilized = em_map(candidate, mc)
            evaluations += 1
            ms, loglik_s = lik.mean_gradient(stabilized)
            if loglik_s >= loglik2:
                theta, m, loglik = stabilized, ms, loglik_s
                continue
        theta, m, loglik = theta2, m2, loglik2
    if trace:
        lls.append(loglik)
    return EMResult(theta=theta, iterations=evaluations, converged=converged, loglik=loglik, m=m, trace=lls)


# ----------------------------------------------------------------------------------------------
# The Fisher information at theta, as an operator (for em-rilstone's experimental plug-in step)
# ----------------------------------------------------------------------------------------------


class Information:
    """Per-user information ``J(theta)`` of the groups, as an operator on R^d.

    - finite-budget groups: the **expected** information
      ``J_g = sum_y Q_g(y|.) Q_g(y|.)^T / P_g(y; theta)`` with weight n_g / N;
    - eps = inf groups (identity channel): the **observed** information
      ``diag(h_g / theta^2) / N`` -- the expected one, ``diag(n_g / theta) / N``, is infinite on the
      components the MLE puts on the boundary, where no exact user reported.

    For GRR-like groups ``J_g = q^2 S 11^T + q (p-q) (1 s^T + s 1^T) + (p-q)^2 diag(s)`` with
    ``s = 1/P_g`` and ``S = sum(s)``: a diagonal plus a matrix of rank <= 2, so solves are exact by
    the Woodbury identity in O(d G^2). Other channels (HR) go through preconditioned conjugate
    gradients with ``matvec`` = one forward and one backward pass per group.
    """

    def __init__(self, groups: Sequence[Group], theta: np.ndarray):
        self.d = theta.size
        n = float(sum(g.n for g in groups))
        self.diag = np.zeros(self.d)  # exact diagonal part (GRR-like groups)
        columns = [np.ones(self.d)]  # U = [1, s_1, s_2, ...]
        c00 = 0.0
        c0g = []
        self.generic: list[tuple[float, Group, np.ndarray]] = []
        for g in groups:
            w = g.n / n
            if g.exact:
                observed = g.histogram > 0
                self.diag += np.divide(g.histogram, n * theta**2, out=np.zeros(self.d), where=observed & (theta > 0))
            elif g.grr_like:
                p, q = g.rr
                s = 1.0 / (q + (p - q) * theta)
                self.diag += w * (p - q) ** 2 * s
                c00 += w * q * q * float(s.sum())
                c0g.append(w * q * (p - q))
                columns.append(s)
            else:
                P = np.asarray(g.channel.forward(theta), dtype=float)
                # reports impossible under theta carry no expected information (skip them)
                self.generic.append((w, g, np.divide(1.0, P, out=np.zeros_like(P), where=P > 0)))
        k = len(columns)
        self.U = np.stack(columns, axis=1)  # (d, k)
        self.C = np.zeros((k, k))
        self.C[0, 0] = c00
        for i, c in enumerate(c0g, start=1):
            self.C[0, i] = self.C[i, 0] = c

    # -- products and solves --------------------------------------------------------------------
    def matvec(self, v: np.ndarray) -> np.ndarray:
        out = self.diag * v + (self.U * (self.C @ _tdot(self.U, v))[None, :]).sum(axis=1)
        for w, g, inv_p in self.generic:
            out += w * np.asarray(g.channel.backward(inv_p * np.asarray(g.channel.forward(v), dtype=float)))
        return out

    def solve(self, rhs: np.ndarray, active: np.ndarray) -> np.ndarray:
        """``J^{-1} rhs`` restricted to the ``active`` components (the others are set to 0)."""
        if not self.generic:
            return self._woodbury(rhs, active)
        return self._pcg(rhs, active)

    def _woodbury(self, rhs: np.ndarray, active: np.ndarray) -> np.ndarray:
        # (D + U C U^T)^{-1} = D^{-1} - D^{-1} U (I + C U^T D^{-1} U)^{-1} C U^T D^{-1}
        out = np.zeros(self.d)
        dinv = 1.0 / self.diag[active]
        U = self.U[active]
        y = dinv * rhs[active]
        gram = np.stack([_tdot(U, dinv * U[:, j]) for j in range(U.shape[1])], axis=1)  # U' D^-1 U
        small = np.eye(self.C.shape[0]) + self.C @ gram
        coef = np.linalg.solve(small, self.C @ _tdot(U, y))
        out[active] = y - dinv * (U * coef[None, :]).sum(axis=1)
        return out

    def _pcg(self, rhs: np.ndarray, active: np.ndarray, rtol: float = 1e-10, max_iter: int = 5000) -> np.ndarray:
        # Jacobi preconditioner: the exact diagonal of the GRR-like part, plus for every other
        # channel the scalar mean eigenvalue of its term, estimated on a probe vector.
        probe = np.where(active, 1.0, 0.0)
        probe -= probe.mean()
        extra = 0.0
        if np.any(probe):
            gen = np.zeros(self.d)
            for w, g, inv_p in self.generic:
                gen += w * np.asarray(g.channel.backward(inv_p * np.asarray(g.channel.forward(probe), dtype=float)))
            extra = max(_dot(probe, gen) / _dot(probe, probe), 0.0)
        UC = (self.U[:, :, None] * self.C[None, :, :]).sum(axis=1)
        precond = self.diag + (UC * self.U).sum(axis=1) + extra
        precond = np.where(precond > 0, precond, 1.0)

        def A(v: np.ndarray) -> np.ndarray:
            full = np.where(active, v, 0.0)
            return np.where(active, self.matvec(full), 0.0)

        b = np.where(active, rhs, 0.0)
        x = np.zeros(self.d)
        r = b.copy()
        z = r / precond
        p = z.copy()
        rz = _dot(r, z)
        stop = rtol * np.sqrt(_dot(b, b))
        for _ in range(max_iter):
            if np.sqrt(_dot(r, r)) <= stop:
                break
            Ap = A(p)
            curvature = _dot(p, Ap)
            if not curvature > 0:  # J is positive definite on the active set; round-off only
                break
            alpha = rz / curvature
            x += alpha * p
            r -= alpha * Ap
            z = r / precond
            rz_new = _dot(r, z)
            p = z + (rz_new / rz) * p
            rz = rz_new
        return x


def newton_step(groups: Sequence[Group], theta: np.ndarray, m: np.ndarray) -> tuple[np.ndarray, float, np.ndarray]:
    """The Newton step of L/N from ``theta`` within the hyperplane ``sum = 1``.

    At a boundary MLE, ``Delta / N`` is what the empirical plug-in of Rilstone, Srivastava &
    Ullah's (1996) second-order bias formula reduces to (docs/em-correction.md §3; zero at an
    interior MLE). It is not EM's bias: the expansion assumes an interior root of the score
    equations. ``em-rilstone`` (experimental; formerly ``em-corrected``) subtracts it.

    ``Delta = J^{-1} (m - lam 1)`` with ``lam`` such that ``sum(Delta) = 0``; components with no
    information at all (no group can report on them) are left out (Delta = 0 there).

    :returns: ``(Delta, lam, active)``.
    """
    info = Information(groups, theta)
    # A component carries information if a finite-budget GRR group sees it (always) or an exact
    # user reported it; other channels (HR) see every component.
    active = info.diag > 0
    if info.generic:
        active[:] = True
    if active.sum() < 2:
        return np.zeros(theta.size), 1.0, active
    a = info.solve(m, active)
    b = info.solve(np.ones(theta.size), active)
    lam = float(a.sum() / b.sum())
    delta = a - lam * b
    return delta, lam, active


def sample_histograms(groups: Sequence[Group], theta: np.ndarray, rng: np.random.Generator) -> list[Group]:
    """Report histograms of fresh users drawn i.i.d. from ``theta``, with the groups' channels.

    A user drawn from theta reports y with probability ``P_g(y; theta)`` independently of the
    others, so each group's histogram is Multinomial(n_g, forward_g(theta)) -- exact for any channel.
    """
    out = []
    for g in groups:
        P = np.clip(np.asarray(g.channel.forward(theta), dtype=float), 0.0, None)
        hist = rng.multinomial(g.n, P / P.sum()).astype(float)
        out.append(Group(hist, g.channel, g.n, g.epsilon))
    return out
