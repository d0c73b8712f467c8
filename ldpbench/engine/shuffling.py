"""The central ε a row reports under ``shuffle:`` (docs/shuffling.md): which rows a bound covers.

A bound of :mod:`ldpbench.privacy.shuffle` covers n users who each send one report of one pure
ε0-LDP randomizer through a trusted shuffler: an oracle cell with one budget for every user. It
does not cover a protocol (users report in several rounds, several times, or through different
mechanisms: PEM, Blender, a longitudinal protocol), nor personalized budgets (the users' ε0
differ): such rows carry a NaN central ε and say why in ``central_bound``, never a made-up number.
"""

from __future__ import annotations

import math
from typing import Any

from ldpbench.privacy.shuffle import ASSUMPTIONS, central_epsilon
from ldpbench.spec.expand import Cell
from ldpbench.spec.model import Budget, Entry, Spec

#: ``central_bound`` of a row no bound covers starts with this.
NOT_COVERED = "not covered"
PROTOCOL_REASON = f"{NOT_COVERED}: a protocol (several reports, rounds or mechanisms per user)"
PERSONALIZED_REASON = f"{NOT_COVERED}: personalized budgets (the users' eps0 differ)"
NO_USERS_REASON = f"{NOT_COVERED}: no reports"
INFINITE_REASON = f"{NOT_COVERED}: eps0 = inf (no local guarantee to amplify)"


def coverage(mechanism: Entry, budget: Budget) -> str | None:
    """Why no shuffle bound covers a mechanism's rows under a budget, or None when one does."""
    if mechanism.kind != "oracle":
        return PROTOCOL_REASON
    if budget.groups:
        return PERSONALIZED_REASON
    if not math.isfinite(budget.epsilon_value):
        return INFINITE_REASON
    return None


def shuffle_record(spec: Spec) -> dict[str, Any] | None:
    """What the run manifest says of ``shuffle:``: the bound, δ, its assumptions, and which
    mechanism and budget it covers (each covered row carries its ε); None without ``shuffle:``."""
    if spec.shuffle is None:
        return None
    return {
        "bound": spec.shuffle.bound,
        "delta": spec.shuffle.delta,
        "assumptions": list(ASSUMPTIONS),
        "coverage": [
            {"mechanism": m.label, "budget": b.label, "covered": (why := coverage(m, b)) is None, "why": why}
            for m in spec.mechanisms
            for b in spec.budgets
        ],
        "docs": "docs/shuffling.md",
    }


def central_columns(cell: Cell, n: int) -> dict[str, Any]:
    """``central_epsilon`` and ``central_bound`` of the cell's rows (n reports), or nothing when
    the spec has no ``shuffle:`` (its rows stay exactly as they were)."""
    if cell.shuffle is None:
        return {}
    reason = coverage(cell.mechanism, cell.budget) or (NO_USERS_REASON if n < 1 else None)
    if reason is not None:
        return {"central_epsilon": math.nan, "central_bound": reason}
    eps = central_epsilon(cell.shuffle.bound, float(cell.budget.epsilon), int(n), cell.shuffle.delta)
    return {"central_epsilon": float(eps), "central_bound": cell.shuffle.bound}
