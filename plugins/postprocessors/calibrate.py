"""Calibrate ([JG19], Jia & Gong, INFOCOM 2019): the posterior mean under a fitted prior.

Each count-scale estimate ``f_hat_i = f_i + s_i`` of a pure oracle is replaced by

    f~_i = E[f | f_hat = f_hat_i] = sum_k k P(k|theta) phi(f_hat_i - k) / sum_k P(k|theta) phi(f_hat_i - k)

([JG19] Eq. 11-12), the estimator that minimizes the conditional mean squared error (Theorem 2).
The noise is Gaussian with mean 0 and the oracle's data-independent variance
``sigma_s^2 = n q*(1-q*) / (p*-q*)^2`` (Eq. 13-14; ``Estimate.variance`` times n^2). The prior is a
family plugin (``prior: power-law`` by default, as in [JG19] §IV) whose parameters are fitted on
the same estimates (a data-dependent prior): by the mean-variance method (Eq. 17-20) or by maximum
likelihood (Eq. 16). Works for any pure oracle (GRR, OLH, OUE, HR); [JG19] evaluates OUE.

``zero_below: significance`` also zeroes items against the significance threshold
``T = Phi^-1(1 - beta/d) sigma_s`` ([JG19] §IV-B: "further resetting the frequencies smaller than
the significance threshold in OUE-Calibrate has a negligible impact"). The paper does not say which
frequencies it compares with T, so ``zero_rule`` chooses: ``calibrated`` zeroes where the
calibrated value is at most T (the default, unchanged), ``raw`` where the oracle's raw estimate is
below T (OUE-Zero's rule, Eq. 22, applied before calibrating).
The fitted parameters and diagnostics go to ``Estimate.info["calibrate"]``.

Cost: the posterior is evaluated on 16 Chebyshev nodes per sigma-wide panel that holds estimates
and interpolated to the d estimates (``interpolated_posterior``, relative error ~1e-9); each node
costs about 250 kernel evaluations (windows, quadrature; see ``ldpbench_plugins.numerics.posterior``). At Kosarak scale
(d = 41,270) that is ~0.03 s per estimate vector; ``fit: mle`` adds a likelihood per optimizer step.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ldpbench import hookimpl
from ldpbench.errors import NotApplicable, ParamError
from ldpbench.params import Param
from ldpbench.types import Estimate, PostProcessor, PriorFamily
from ldpbench_plugins.numerics.noise import DEFAULT_BETA, count_noise_sd, significance_threshold
from ldpbench_plugins.numerics.posterior import interpolated_posterior

FITS = ("mean-variance", "mle")


def fit_prior(
    prior: PriorFamily,
    x: np.ndarray,
    noise_var: float,
    support: tuple[int, int],
    fit: str,
    fixed: dict[str, Any] | None = None,
) -> tuple[tuple[float, ...], list[str]]:
    """Prior parameters for count-scale estimates ``x``; returns ``(theta, warnings)``."""
    warnings: list[str] = []
    names = tuple(prior.parameter_names)
    if fixed:
        unknown = sorted(set(fixed) - set(names))
        missing = [p for p in names if p not in fixed]
        if unknown or missing:
            raise ParamError(
                f"prior_params for '{prior.name}' must give exactly {', '.join(names) or 'nothing'}"
                + (f"; unknown: {', '.join(unknown)}" if unknown else "")
                + (f"; missing: {', '.join(missing)}" if missing else ""),
                "prior_params",
            )
        return tuple(float(fixed[p]) for p in names), warnings
    if len(names) >= 2:
        excess = float(np.var(x)) - noise_var
        if excess <= 0:
            warnings.append(
                "the estimates vary no more than the noise (var(f_hat) <= sigma_s^2): the prior's "
                "scale is set to a tiny value, a near point mass at the mean"
            )
    if fit == "mle":
        theta = prior.fit_mle(x, noise_var, support)
    else:
        theta = prior.fit_mean_variance(x, noise_var, support)
    return tuple(float(t) for t in theta), warnings


class Calibrate(PostProcessor):
    """Calibrate [JG19]: posterior mean under the oracle's Gaussian noise and a fitted prior."""

    name = "calibrate"
    params = (
        Param("prior", str, "power-law", "prior family of the true counts", plugin_kind="prior"),
        Param(
            "fit",
            str,
            "mean-variance",
            "how to fit the prior: mean-variance ([JG19] Eq. 17-20) or mle (Eq. 16)",
            choices=FITS,
        ),
        Param(
            "zero_below",
            str,
            "off",
            "also zero calibrated values at or below the significance threshold",
            choices=("off", "significance"),
        ),
        Param(
            "zero_rule",
            str,
            "calibrated",
            "zero_below compares T with: the calibrated value (zero if <= T) or the raw estimate (zero if < T)",
            choices=("calibrated", "raw"),
        ),
        Param(
            "beta", float, DEFAULT_BETA, "significance level of the threshold (zero_below)", min=1e-300, max=0.999999
        ),
        Param(
            "support_min",
            int,
            None,
            "lowest true count of the prior's support (default: the family's, 1 for power-law, else 0)",
            min=0,
            max=10**10,
            nullable=True,
        ),
        Param(
            "prior_params",
            dict,
            None,
            "fix the prior's parameters (count scale) instead of fitting them",
            nullable=True,
            params_of="prior",
        ),
    )

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        # Refused at construction, so that `ldpbench validate` reports it at the spec's line.
        lowest = getattr(self.prior, "lowest_support_min", 0)
        if self.support_min is not None and self.support_min < lowest:
            raise ParamError(
                f"support_min = {self.support_min} is below {lowest}, where the '{self.prior.name}' prior starts "
                f"(omit support_min for the family's default, {self.prior.default_support_min})",
                "support_min",
            )

    def apply(self, estimate: Estimate, rng: np.random.Generator) -> Estimate:
        prior: PriorFamily = self.prior
        n = int(estimate.n)
        if n < 1:
            raise NotApplicable("calibrate needs an estimate from at least one user")
        sigma = count_noise_sd(estimate, self.name)
        lo = int(prior.default_support_min if self.support_min is None else self.support_min)
        if lo > n:
            raise ParamError(f"support_min = {lo} exceeds the number of users n = {n}", "support_min")
        support = (lo, n)
        x = n * np.asarray(estimate.frequencies, dtype=float)
        theta, warnings = fit_prior(prior, x, sigma * sigma, support, self.fit, self.prior_params)
        post = interpolated_posterior(x, sigma, prior, theta, support)
        counts = post.mean
        threshold = None
        if self.zero_below == "significance":
            threshold = significance_threshold(sigma, x.size, self.beta)
            keep = counts > threshold if self.zero_rule == "calibrated" else x >= threshold
            counts = np.where(keep, counts, 0.0)
        info = {
            "prior": prior.name,
            "fit": "fixed" if self.prior_params else self.fit,
            "params": dict(zip(prior.parameter_names, theta)),
            "support": [lo, n],
            "noise_sd": sigma,
            "scale": "count",
        }
        if threshold is not None:
            info["zero_below"] = threshold
            info["zero_rule"] = self.zero_rule
        out = estimate.replace(frequencies=counts / n, info={**estimate.info, self.name: info})
        return out.replace(warnings=out.warnings + tuple(f"{self.name}: {w}" for w in warnings))


@hookimpl
def ldpbench_register_postprocessors(registry):
    registry.register(Calibrate)


__all__ = ["Calibrate", "count_noise_sd", "fit_prior"]
