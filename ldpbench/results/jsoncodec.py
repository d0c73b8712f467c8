"""JSON as ldpbench writes it: strict JSON, without NaN or infinity literals.

JSON has no NaN or infinity. We write NaN as ``null`` (a failed value, a personalized budget) and
±infinity as ``±1e999`` — valid JSON that Python and JavaScript parse back to infinity (``epsilon:
inf`` is a legal budget). :func:`dumps_json` does that for every file ldpbench writes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
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


#: Infinities travel through ``json.dumps`` as a marker string, replaced afterwards by a bare
#: number. A string of the data (a ``users:`` group label) may equal any fixed marker, so the
#: marker of each call is one that no string of the data contains (:func:`_free_marker`).
_MARKER = "\x00ldpbench{sign}inf{salt}\x00"


def _strings(obj: Any) -> Iterator[str]:
    obj = _plain(obj)
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, Mapping):
        for k, v in obj.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(obj, (list, tuple, set, frozenset)):
        for v in obj:
            yield from _strings(v)


def _free_marker(obj: Any) -> tuple[str, str]:
    """``(+inf marker, -inf marker)`` that occur in no string of ``obj``."""
    texts = [t for t in _strings(obj) if "\x00ldpbench" in t]
    salt = 0
    while True:
        pos, neg = (_MARKER.format(sign=sign, salt=salt or "") for sign in "+-")
        if not any(pos in t or neg in t for t in texts):
            return pos, neg
        salt += 1


#: Placeholders of :func:`dumps_json`'s first pass (never written: an infinity found means a second
#: pass with real markers).
_PLUS_INF, _MINUS_INF = object(), object()


def _encodable(obj: Any, markers: tuple[Any, Any], found: list[bool] | None = None) -> Any:
    """``obj`` with NaN as None and ±inf as the markers; an infinity appends to ``found``."""
    kind = type(obj)
    if kind is str or kind is int or kind is bool or obj is None:  # most of a row: as it is
        return obj
    if kind is not float:
        obj = _plain(obj)
    if isinstance(obj, float):
        if math.isnan(obj):
            return None
        if math.isinf(obj):
            if found is not None:
                found.append(True)
            return markers[0] if obj > 0 else markers[1]
        return obj
    if isinstance(obj, Mapping):
        return {str(k): _encodable(v, markers, found) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_encodable(v, markers, found) for v in obj]
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
    # A result row with a NaN at its top level (a failed value, a NaN theory: most rows) goes
    # straight to the second pass instead of failing the first half-way.
    flat_nan = type(obj) is dict and any(type(v) is float and v != v for v in obj.values())
    if not flat_nan:
        try:  # the common case, no NaN, infinity or NumPy integer: no copy needed
            return json.dumps(obj, indent=indent, allow_nan=False)
        except (ValueError, TypeError):
            pass
    # Infinities travel through json.dumps as marker strings, then become bare numbers. Most
    # objects here hold a NaN and no infinity: one pass with placeholders finds out, and only an
    # object with an infinity pays for the search of markers its strings do not contain.
    found: list[bool] = []
    plain = _encodable(obj, (_PLUS_INF, _MINUS_INF), found)
    if not found:
        return json.dumps(plain, indent=indent, allow_nan=False, default=_default)
    pos, neg = _free_marker(obj)
    text = json.dumps(_encodable(obj, (pos, neg)), indent=indent, allow_nan=False, default=_default)
    return text.replace(json.dumps(pos), "1e999").replace(json.dumps(neg), "-1e999")
