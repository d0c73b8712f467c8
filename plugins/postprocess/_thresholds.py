"""Moved to :mod:`ldpbench_plugins.numerics.noise` (shared by plugins of several kinds); these names
stay importable from here for plugins written against this module."""

from ldpbench_plugins.numerics.noise import (  # noqa: F401
    DEFAULT_BETA,
    count_noise_sd,
    count_noise_variance,
    epsilon_for_noise,
    estimate_threshold,
    noise_sd,
    significance_quantile,
    significance_threshold,
)
