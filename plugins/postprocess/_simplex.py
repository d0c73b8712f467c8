"""Moved to :mod:`ldpbench_plugins.numerics.simplex` (shared by plugins of several kinds); these names
stay importable from here for plugins written against this module."""

from ldpbench_plugins.numerics.simplex import (  # noqa: F401
    project_to_simplex,
    project_to_simplex_iterative,
    simplex_shift,
    simplex_shift_iterative,
)
