"""The prior-family contract: :class:`PriorFamily` (for Calibrate and Power)."""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from ldpbench.types.plugin import Plugin


class PriorFamily(Plugin):
    """A parametric prior over true **counts** for Calibrate and Power ([JG19] §III-C).

    The prior is a law on an integer support ``K = {lo, ..., hi}`` (inclusive; Calibrate uses
    ``lo = default_support_min`` unless the user says otherwise and ``hi = n``), given by an
    unnormalized log weight ``log_weight(k, theta)``: ``P(k | theta) = exp(log_weight(k, theta)) / Z``.
    ``theta`` is a tuple of floats in the order of ``parameter_names``, in the count scale.

    What a family must implement:

    - :meth:`log_weight` (vectorized over ``k``);
    - :meth:`fit_mean_variance`: the mean-variance method of [JG19] Eq. 17-20 (solve
      ``E_theta[f] = mean(f_hat)`` and, for two-parameter families, ``Var_theta[f] = var(f_hat) -
      sigma_s^2``);
    - :meth:`fit_mle`: maximum likelihood under Gaussian noise, [JG19] Eq. 16.

    The built-in families subclass ``ldpbench_plugins.priors.PriorFamilyBase``, which provides
    ``fit_mle``, :meth:`log_normalizer` and :meth:`moments` through Calibrate's posterior engine;
    a third-party family can subclass it too and then needs only ``log_weight`` and
    ``fit_mean_variance``. Register a family with the ``ldpbench_register_prior_families`` hook.

    Optional hints let the posterior engine replace sums over many integers by quadrature (the
    Poisson summation formula makes a sum over the integers of a function that is smooth on the
    integer scale equal to its integral). A family that sets ``smooth = True`` promises that
    ``log_weight`` accepts real ``k`` and is analytic on the support except near
    :meth:`rough_points`, varying on a length scale of at least :meth:`smooth_scale` there. With
    ``smooth = False`` (the default) the engine sums over integers only: exact, but slower for
    large noise.
    """

    #: Names of the family's parameters, in the order ``theta`` and the ``fit_*`` results use.
    parameter_names: ClassVar[tuple[str, ...]] = ()
    #: The lowest count of the default support (a power law lives on {1, ..., n}, most on {0, ..., n}).
    default_support_min: ClassVar[int] = 0
    #: The lowest support start the law is defined for (a power law's k^-alpha is infinite at 0):
    #: a Calibrate ``support_min`` below it is refused when the spec is validated.
    lowest_support_min: ClassVar[int] = 0
    #: Whether ``log_weight`` is a smooth function of real ``k`` away from :meth:`rough_points`.
    smooth: ClassVar[bool] = False

    @abstractmethod
    def log_weight(self, k: np.ndarray, theta: Sequence[float]) -> np.ndarray:
        """Unnormalized log prior weight of counts ``k`` (a float array; integers unless ``smooth``)."""

    @abstractmethod
    def fit_mean_variance(self, estimates: np.ndarray, noise_var: float, support: tuple[int, int]) -> tuple[float, ...]:
        """Parameters matching the estimates' mean and variance minus the noise ([JG19] Eq. 17-20).

        :param estimates: the count-scale estimates ``f_hat`` of the d items.
        :param noise_var: the count-scale noise variance ``sigma_s^2`` ([JG19] Eq. 14).
        :param support: ``(lo, hi)``, inclusive.
        """

    @abstractmethod
    def fit_mle(self, estimates: np.ndarray, noise_var: float, support: tuple[int, int]) -> tuple[float, ...]:
        """Maximum-likelihood parameters under Gaussian noise ([JG19] Eq. 16)."""

    # -- hints for the posterior engine (optional) ----------------------------------------------
    def rough_points(self, theta: Sequence[float]) -> tuple[float, ...]:
        """Points (on or off the support) where ``log_weight`` is not analytic: a kink (Laplace's
        mode), a singularity (0 for a power law, -1 for Poisson). The support ends count anyway."""
        return ()

    def smooth_scale(self, k: np.ndarray, theta: Sequence[float]) -> np.ndarray:
        """Local length scale over which ``log_weight`` bends (e.g. the Gaussian's tau); ``inf``
        for a log weight that is linear or that bends ever more slowly."""
        return np.full(np.shape(k), np.inf)

    def effective_support(self, theta: Sequence[float], support: tuple[int, int]) -> tuple[int, int]:
        """A sub-interval of ``support`` outside which the weight is below ``exp(-700)`` times its
        maximum (the engine then ignores those counts). Default: the whole support."""
        return support

    def to_unconstrained(self, theta: Sequence[float]) -> np.ndarray:
        """Map ``theta`` to unconstrained coordinates for the maximum-likelihood optimizer."""
        return np.asarray(theta, dtype=float)

    def from_unconstrained(self, u: np.ndarray) -> tuple[float, ...]:
        """Inverse of :meth:`to_unconstrained`."""
        return tuple(float(v) for v in u)

    # -- the normalized law (defaults: exact sums over the support) ------------------------------
    def log_normalizer(self, theta: Sequence[float], support: tuple[int, int]) -> float:
        """``log Z = log sum_{k in support} exp(log_weight(k))``."""
        lo, hi = self.effective_support(theta, support)
        total, top = 0.0, -np.inf
        for start in range(lo, hi + 1, 1 << 20):
            lw = self.log_weight(np.arange(start, min(hi, start + (1 << 20) - 1) + 1, dtype=float), theta)
            new_top = max(top, float(lw.max()))
            total = total * math.exp(top - new_top) + float(np.exp(lw - new_top).sum())
            top = new_top
        return top + math.log(total)

    def log_pmf(self, k: np.ndarray, theta: Sequence[float], support: tuple[int, int]) -> np.ndarray:
        """Log prior probability of counts ``k`` (normalized on ``support``, inclusive)."""
        k = np.asarray(k, dtype=float)
        out = self.log_weight(k, theta) - self.log_normalizer(theta, support)
        return np.where((k >= support[0]) & (k <= support[1]), out, -np.inf)

    def moments(self, theta: Sequence[float], support: tuple[int, int]) -> tuple[float, float]:
        """Mean and variance of the law on ``support`` (the discretized, truncated law)."""
        lo, hi = self.effective_support(theta, support)
        k = np.arange(lo, hi + 1, dtype=float)
        w = np.exp(self.log_weight(k, theta) - self.log_normalizer(theta, (lo, hi)))
        mean = float((k * w).sum())
        return mean, float((((k - mean) ** 2) * w).sum())
