"""What a plugin's failure says: its exception, bounded, and where in plugin code it was raised.

A plugin's exception is arbitrary code too: its ``__str__`` may raise, its message may be 100 MB.
:func:`error_text` always returns a short string, and :func:`plugin_location` the last frames of
the traceback that are plugin code (``file:line in function``), skipping the harness, the standard
library and the numerical libraries it calls into, so that a failure points at the line to fix.
A failed row stores both; the kit and the audit print :func:`describe_exception` (a plugin that
raises inside a check breaks the contract like a failed assertion does, and its author needs the
exception and the plugin's ``file:line``, not a traceback through ldpbench, NumPy or the stdlib).
"""

from __future__ import annotations

import os
import sysconfig
import traceback
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

#: Longest error message stored in a row (characters); longer ones are cut with a marker.
MAX_ERROR_CHARS = 2000
#: Frames of plugin code kept in ``where``.
MAX_FRAMES = 3

#: ldpbench itself (this module is ldpbench/boundary/failures.py).
_HARNESS = str(Path(__file__).resolve().parents[1]) + os.sep
_LIBRARIES = tuple(
    {str(Path(p).resolve()) + os.sep for key in ("stdlib", "platstdlib") if (p := sysconfig.get_paths().get(key))}
)
#: Packages a plugin calls into whose frames say nothing about the plugin's bug.
_QUIET_PACKAGES = ("numpy", "scipy", "polars", "pluggy")


def _safe_str(exc: BaseException) -> str:
    try:
        return str(exc)
    except BaseException:  # noqa: BLE001 - a plugin's __str__ may raise anything
        return "(its message could not be printed: __str__ raised)"


def bounded(text: str, limit: int = MAX_ERROR_CHARS) -> str:
    """``text`` cut to ``limit`` characters, saying how much was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [{len(text) - limit} more characters cut]"


def error_text(what: str, exc: BaseException) -> str:
    """``what: ExcType: message``, at most about :data:`MAX_ERROR_CHARS` characters."""
    message = _safe_str(exc)
    if len(message) > MAX_ERROR_CHARS:
        message = bounded(message)
    return bounded(f"{what}: {type(exc).__name__}: {message}", MAX_ERROR_CHARS + 200)


def _is_plugin_frame(filename: str) -> bool:
    try:
        path = str(Path(filename).resolve())
    except (OSError, ValueError):
        return True
    if path.startswith(_HARNESS) or path.startswith(_LIBRARIES) or filename.startswith("<"):
        return False
    parts = Path(path).parts
    return not any(pkg in parts for pkg in _QUIET_PACKAGES)


def plugin_location(exc: BaseException, frames: int = MAX_FRAMES) -> str | None:
    """The last ``frames`` frames of ``exc``'s traceback in plugin code, innermost last
    (``path:line in func``, joined by `` <- ``... innermost first), or None if none is."""
    try:
        summary = traceback.extract_tb(exc.__traceback__)
    except Exception:  # noqa: BLE001 - a traceback we cannot read is no location
        return None
    mine = [f for f in summary if _is_plugin_frame(f.filename)]
    if not mine:
        return None
    return bounded(" <- ".join(f"{f.filename}:{f.lineno} in {f.name}" for f in reversed(mine[-frames:])), 1000)


class Failure:
    """What a plugin's failure leaves in its rows: the error text and its location in plugin code."""

    __slots__ = ("error", "where")

    def __init__(self, what: str, exc: BaseException):
        self.error = error_text(what, exc)
        self.where = plugin_location(exc)


def plugin_frame(exc: BaseException) -> str | None:
    """``file:line`` of the deepest traceback frame outside ldpbench, NumPy, SciPy and the stdlib."""
    found = None
    for frame in traceback.extract_tb(exc.__traceback__):
        path = str(Path(frame.filename).resolve())
        if not path.startswith(_foreign_roots()):
            found = f"{frame.filename}:{frame.lineno}"
    return found


def _foreign_roots() -> tuple[str, ...]:
    """Folders whose frames are never the plugin's: ldpbench itself, NumPy, SciPy, the stdlib."""
    import numpy as np
    import scipy

    roots = [Path(_HARNESS)] + [Path(m.__file__).parent for m in (np, scipy)]
    roots.append(Path(sysconfig.get_paths()["stdlib"]))
    return tuple(str(r.resolve()) + os.sep for r in roots)


def describe_exception(exc: BaseException) -> str:
    """``IndexError: index 9 is out of bounds ... (raised at my_plugin.py:41)``."""
    where = plugin_frame(exc)
    text = f"{type(exc).__name__}: {exc}"
    return text + (f" (raised at {where})" if where else "")


#: Columns of :func:`failed_rows`, in order.
FAILURE_COLUMNS = ("dataset", "users", "epsilon", "oracle", "pipeline", "metric", "repeat", "error", "where")


def failed_rows(df: pl.DataFrame) -> pl.DataFrame:
    """The failed rows of a results frame (``ResultsStore.load()``), one per failed repeat, in
    stored order, with :data:`FAILURE_COLUMNS` (``where`` null for rows stored before it existed)."""
    import polars as pl

    failed = df.filter(pl.col("error").is_not_null())
    if "where" not in failed.columns:
        failed = failed.with_columns(where=pl.lit(None, dtype=pl.String()))
    return failed.select(FAILURE_COLUMNS)
