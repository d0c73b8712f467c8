"""Moved to :mod:`ldpbench_plugins.numerics.posterior` (shared by plugins of several kinds); these names
stay importable from here for plugins written against this module."""

from ldpbench_plugins.numerics.posterior import (  # noqa: F401
    build_rule,
    interpolated_posterior,
    log_likelihood,
    posterior,
    prior_sums,
)
