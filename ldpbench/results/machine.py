"""What decides the last bits of a run's numbers, for the run manifest.

ldpbench promises bit-identical numbers for the same spec and seed on the same machine and
library versions, and equality within rounding elsewhere (README, "Reproducibility"). Whether two
manifests fall under the first promise depends on more than the numpy version: numpy picks SIMD
kernels at import from the CPU's features (a sum or an ``exp2`` may round differently with
AVX-512 than with AVX2), and matrix products go through whichever BLAS numpy was built with
(OpenBLAS picks its own kernels per CPU too). This module collects those facts without adding a
dependency: numpy's own ``show_config`` (what ``numpy.show_config()`` prints), the package
versions, and ``threadpoolctl``'s view of the BLAS actually loaded. Cells run with one BLAS thread
whatever the machine's (``ldpbench.engine.threads``); the manifest says so under ``cell_threads``.
"""

from __future__ import annotations

import os
from importlib import metadata
from typing import Any

import numpy as np

from ldpbench.engine.threads import CELL_THREADS

#: Environment variables that change which kernels numpy or its BLAS use, recorded when set.
NUMERIC_ENV = (
    "NPY_DISABLE_CPU_FEATURES",
    "NPY_ENABLE_CPU_FEATURES",
    "OPENBLAS_CORETYPE",
    "OPENBLAS_NUM_THREADS",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "MKL_CBWR",
)

#: The packages whose versions decide a run's numbers besides numpy (scipy: EM's and Calibrate's
#: solvers and the t quantiles of the leaderboard; polars: the leaderboard's aggregation).
LIBRARIES = ("scipy", "polars")


def _show_config() -> dict[str, Any]:
    # Diagnostics only: a numpy built without its config record (some distribution builds) must not
    # fail a run, so any failure here leaves the section empty.
    try:
        return np.show_config(mode="dicts") or {}
    except Exception:  # noqa: BLE001 - see above
        return {}


def numpy_simd() -> dict[str, Any]:
    """numpy's SIMD: the ``baseline`` it was compiled for and the dispatched features in use here.

    ``dispatched`` are the optional kernels this machine runs (found on the CPU and not disabled by
    ``NPY_DISABLE_CPU_FEATURES``); ``not_dispatched`` the ones numpy has but does not use here.
    Two runs with the same numpy and the same ``dispatched`` list use the same kernels.
    """
    simd = _show_config().get("SIMD Extensions") or {}
    return {
        "baseline": list(simd.get("baseline") or []),
        "dispatched": list(simd.get("found") or []),
        "not_dispatched": list(simd.get("not found") or []),
    }


def blas() -> dict[str, Any]:
    """The BLAS numpy was built with (name, version, its build configuration), the BLAS libraries
    actually loaded (kernel architecture, threads outside cells) and the threads a cell runs with.
    """
    built = (_show_config().get("Build Dependencies") or {}).get("blas") or {}
    info: dict[str, Any] = {
        "name": built.get("name"),
        "version": built.get("version"),
        "config": built.get("openblas configuration"),
    }
    loaded = _loaded_blas()
    if loaded is not None:
        info["loaded"] = loaded
    info["cell_threads"] = CELL_THREADS
    return info


def _loaded_blas() -> list[dict[str, Any]] | None:
    """threadpoolctl's record of the loaded BLAS libraries (``None`` if it cannot tell)."""
    from threadpoolctl import threadpool_info

    keys = ("internal_api", "version", "architecture", "threading_layer", "num_threads")
    try:
        return [{k: lib.get(k) for k in keys} for lib in threadpool_info() if lib.get("user_api") == "blas"]
    except Exception:  # noqa: BLE001 - diagnostics only, as in _show_config
        return None


def library_versions(names: tuple[str, ...] = LIBRARIES) -> dict[str, str | None]:
    """Installed versions (``None``: not installed), read from metadata without importing them."""
    versions: dict[str, str | None] = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def numeric_environment() -> dict[str, str]:
    """The set variables of :data:`NUMERIC_ENV`."""
    return {name: os.environ[name] for name in NUMERIC_ENV if name in os.environ}
