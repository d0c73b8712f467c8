"""JSON as ldpbench writes it: strict JSON, without NaN or infinity literals.

JSON has no NaN or infinity. We write NaN as ``null`` (a failed value, a personalized budget) and
±infinity as ``±1e999`` — valid JSON that Python and JavaScript parse back to infinity (``epsilon:
inf`` is a legal budget). :func:`dumps_json` does that for every file ldpbench writes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np


def _plain(value: Any) -> Any:
    """NumPy scalars and arrays to Python ones (rows often carry ``np.float64``)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value


_POS_INF = "\x00ldpbench+inf\x00"
_NEG_INF = "\x00ldpbench-inf\x00"


def _encodable(obj: Any) -> Any:
    obj = _plain(obj)
    if isinstance(obj, float):
        if math.isnan(obj):
            return None
        if math.isinf(obj):
            return _POS_INF if obj > 0 else _NEG_INF
        return obj
    if isinstance(obj, Mapping):
        return {str(k): _encodable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_encodable(v) for v in obj]
    return obj


def _default(obj: Any) -> Any:
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    raise TypeError(f"{type(obj).__name__} is not JSON serializable")


def dumps_json(obj: Any, indent: int | None = None) -> str:
    """``json.dumps`` that writes NaN as ``null`` and ±inf as ``±1e999`` (strict JSON).

    ``json.loads`` reads ``1e999`` back as ``inf``; ``null`` comes back as ``None``.
    """
    try:  # the common case, no NaN, infinity or NumPy integer: no copy needed
        return json.dumps(obj, indent=indent, allow_nan=False)
    except (ValueError, TypeError):
        pass
    # Infinities travel through json.dumps as sentinel strings, then become bare numbers.
    text = json.dumps(_encodable(obj), indent=indent, allow_nan=False, default=_default)
    return text.replace(json.dumps(_POS_INF), "1e999").replace(json.dumps(_NEG_INF), "-1e999")
