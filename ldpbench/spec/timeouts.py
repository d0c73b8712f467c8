"""``cell_timeout:`` in a spec (and ``--cell-timeout`` on the command line): seconds per cell.

A cell whose plugins run longer fails (its rows say so) and the run goes on; see
:mod:`ldpbench.boundary.guard` for how the limit is enforced and what it cannot interrupt.
"""

from __future__ import annotations

import math
from typing import Any

#: The longest limit accepted (a week): a longer one is a typo, and timers overflow far beyond.
MAX_CELL_TIMEOUT = 7 * 24 * 3600.0


def cell_timeout_problem(value: Any) -> str | None:
    """Why ``value`` is not a valid cell timeout (None if it is: a number of seconds in
    ``(0, MAX_CELL_TIMEOUT]``, or null for no limit)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return f"'cell_timeout' must be a number of seconds, got {value!r}"
    if not 0 < value <= MAX_CELL_TIMEOUT:
        return f"'cell_timeout' must be more than 0 and at most {MAX_CELL_TIMEOUT:g} seconds, got {value!r}"
    return None
