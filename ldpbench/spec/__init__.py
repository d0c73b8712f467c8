"""Specs: YAML scenario files -> validated :class:`~ldpbench.spec.model.Spec` -> cells.

``load.py`` reads YAML safely and remembers the line of every key; ``validate.py`` checks the
spec against the format (docs/spec-format.md) and the installed plugins; ``expand.py`` turns the grid
into cells with stable identities.
"""

from ldpbench.spec.expand import Cell, expand
from ldpbench.spec.model import Budget, Entry, Pipeline, Spec
from ldpbench.spec.validate import load_spec

__all__ = ["Budget", "Cell", "Entry", "Pipeline", "Spec", "expand", "load_spec"]
