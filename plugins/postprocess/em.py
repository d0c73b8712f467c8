"""EM reconstruction and two small-sample corrections of it ([MHS18]; algorithms.md §4).

- ``em``: the maximum-likelihood estimate on the probability simplex from the reports' sufficient
  statistics (each budget group's report histogram and channel), by EM (Agrawal et al. 2005, as
  used by [MHS18] §3). Works for GRR with any mix of budgets (eps = inf included) and for every
  oracle with a finite channel (HR); oracles without one (OUE, OLH) are refused with a clear error.
- ``em-corrected``: the second-order (Rilstone, Srivastava & Ullah 1996) correction of the EM
  estimate derived for the **constrained** problem (docs/em-correction.md): the plug-in bias of
  the MLE is ``b = Delta / N``, where Delta is the Newton step of the mean log-likelihood within
  the hyperplane sum(theta) = 1. It is exactly zero at an interior MLE (algorithms.md §4.4) and
  acts through the categories EM drives to zero; the output is ``project(theta - scale * b)``.
  ``scale = 1`` is the derivation; other values are for sensitivity diagnostics only (not derived).
- ``em-bootstrap``: a different, standard correction -- the **parametric-bootstrap bias
  correction** ``project(2 theta - mean_b theta*_b)`` with theta*_b the EM estimates of reports
  simulated from theta. Not [MHS18]'s method.

Every output lies on the simplex; ``Estimate.info`` records the EM iterations, whether the stopping
rule was met, the final log-likelihood and the KKT violation of the fixed point.
"""

from __future__ import annotations

import numpy as np

from ldpbench import hookimpl
from ldpbench.params import Param
from ldpbench.types import Estimate, PostProcessor

from ._em import DEFAULT_MAX_ITER, DEFAULT_TOL, groups_of, newton_step, run_em, sample_histograms
from ._simplex import project_to_simplex

_EM_PARAMS = (
    Param("tol", float, DEFAULT_TOL, "stop when max |theta change| < tol/d", min=0.0),
    Param("max_iter", int, DEFAULT_MAX_ITER, "cap on the number of EM maps evaluated", min=1),
    Param("accelerate", bool, True, "SQUAREM extrapolation (same fixed point, fewer EM maps)"),
)


class EM(PostProcessor):
    """EM reconstruction: the constrained MLE of the item distribution from report histograms.

    [MHS18] §3 / Agrawal et al. 2005; algorithms.md §4.3. Cost O(d x groups) per iteration.
    """

    name = "em"
    params = _EM_PARAMS

    def _run(self, groups):
        return run_em(groups, tol=self.tol, max_iter=self.max_iter, accelerate=self.accelerate)

    def fit(self, estimate: Estimate):
        return self._run(groups_of(estimate, self.name))

    def apply(self, estimate: Estimate, rng: np.random.Generator) -> Estimate:
        result = self.fit(estimate)
        return estimate.replace(
            frequencies=result.theta, info={**estimate.info, **result.info(self.tol, self.max_iter)}
        )


class EMCorrected(EM):
    """EM plus the second-order bias correction for the constrained MLE (docs/em-correction.md).

    ``theta_corrected = project_simplex(theta - scale * Delta / N)``, Delta the Newton step of
    the mean log-likelihood within sum(theta) = 1 (expected information of the finite-budget
    groups, observed information of the eps = inf group). Zero at an interior MLE; lifts the
    categories EM puts on the boundary and lowers the others.
    """

    name = "em-corrected"
    params = _EM_PARAMS + (
        Param("scale", float, 1.0, "multiplier of the derived correction (1 = the derivation)", min=0.0),
    )

    def apply(self, estimate: Estimate, rng: np.random.Generator) -> Estimate:
        groups = groups_of(estimate, self.name)
        result = self._run(groups)
        n = sum(g.n for g in groups)
        delta, lam, active = newton_step(groups, result.theta, result.m)
        bias = delta / n
        corrected = project_to_simplex(result.theta - self.scale * bias)
        info = {
            **estimate.info,
            **result.info(self.tol, self.max_iter),
            "correction_l1": float(np.abs(corrected - result.theta).sum()),
            "correction_multiplier": lam,
            "boundary_items": int(np.sum(result.theta < 1e-6 / result.theta.size)),
        }
        return estimate.replace(frequencies=corrected, info=info)


class EMBootstrap(EM):
    """EM with a parametric-bootstrap bias correction (a standard method, not [MHS18]'s).

    ``project_simplex(2 theta - mean_b theta*_b)``: theta*_b is EM on report histograms simulated
    from theta with the same groups, sizes and channels (users i.i.d. from theta).
    Cost: ``replicates + 1`` EM runs.
    """

    name = "em-bootstrap"
    params = _EM_PARAMS + (Param("replicates", int, 20, "bootstrap replicates", min=1),)

    def apply(self, estimate: Estimate, rng: np.random.Generator) -> Estimate:
        groups = groups_of(estimate, self.name)
        result = self._run(groups)
        total = np.zeros(result.theta.size)
        for _ in range(self.replicates):
            boot = self._run(sample_histograms(groups, result.theta, rng))
            total += boot.theta
        bias = total / self.replicates - result.theta
        corrected = project_to_simplex(result.theta - bias)
        info = {
            **estimate.info,
            **result.info(self.tol, self.max_iter),
            "bootstrap_replicates": int(self.replicates),
            "correction_l1": float(np.abs(corrected - result.theta).sum()),
        }
        return estimate.replace(frequencies=corrected, info=info)


@hookimpl
def ldpbench_register_postprocessors(registry):
    registry.register(EM)
    registry.register(EMCorrected)
    registry.register(EMBootstrap)
