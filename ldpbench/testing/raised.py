"""Say where a plugin raised: the exception and the deepest frame in the plugin's own code.

A plugin that raises inside a check breaks the contract like a failed assertion does; the user
needs the exception and the plugin's ``file:line``, not a traceback through ldpbench, NumPy or the
standard library (which would read as a bug of ldpbench).
"""

from __future__ import annotations

import os
import sysconfig
import traceback
from pathlib import Path

import numpy as np
import scipy

import ldpbench


def _foreign_roots() -> tuple[str, ...]:
    """Folders whose frames are never the plugin's: ldpbench itself, NumPy, SciPy, the stdlib."""
    roots = [Path(m.__file__).parent for m in (ldpbench, np, scipy)] + [Path(sysconfig.get_paths()["stdlib"])]
    return tuple(str(r.resolve()) + os.sep for r in roots)


def plugin_frame(exc: BaseException) -> str | None:
    """``file:line`` of the deepest traceback frame outside ldpbench, NumPy, SciPy and the stdlib."""
    roots = _foreign_roots()
    found = None
    for frame in traceback.extract_tb(exc.__traceback__):
        path = str(Path(frame.filename).resolve())
        if not path.startswith(roots):
            found = f"{frame.filename}:{frame.lineno}"
    return found


def describe_exception(exc: BaseException) -> str:
    """``IndexError: index 9 is out of bounds ... (raised at my_plugin.py:41)``."""
    where = plugin_frame(exc)
    text = f"{type(exc).__name__}: {exc}"
    return text + (f" (raised at {where})" if where else "")
