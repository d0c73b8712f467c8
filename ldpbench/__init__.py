"""ldpbench: a benchmark harness for frequency estimation under local differential privacy.

Plugin authors need only::

    from ldpbench import hookimpl
    from ldpbench.types import Oracle, PostProcessor, Metric, Dataset, Estimate, Population
    from ldpbench.params import Param
"""

from __future__ import annotations

import pluggy

from ldpbench.util.version import VERSION as __version__  # noqa: E402 - read from the installed metadata

#: Marker for hook implementations in plugin modules (``@hookimpl``).
hookimpl = pluggy.HookimplMarker("ldpbench")

from ldpbench.api import estimate_from_vector, postprocess, run  # noqa: E402
from ldpbench.params import REQUIRED, Param  # noqa: E402
from ldpbench.types import (  # noqa: E402
    Channel,
    Dataset,
    Estimate,
    Executor,
    Metric,
    Oracle,
    Population,
    PostProcessor,
    PriorFamily,
    Protocol,
)

__all__ = [
    "__version__",
    "hookimpl",
    "Param",
    "REQUIRED",
    "Channel",
    "Dataset",
    "Estimate",
    "Executor",
    "Metric",
    "Oracle",
    "PostProcessor",
    "PriorFamily",
    "Population",
    "Protocol",
    "estimate_from_vector",
    "postprocess",
    "run",
]
