"""The privacy budgets a spec gives: one epsilon for everyone (``epsilons``), or personalized
groups of users, each with its own budget (``users``)."""

from __future__ import annotations

import math
from typing import Any

from ldpbench.errors import LdpbenchError
from ldpbench.params import parse_infinity
from ldpbench.spec.budgets import MAX_EPSILON, MIN_EPSILON, check_epsilon_range, depends_on_d, parse_epsilon
from ldpbench.spec.model import Budget, format_value
from ldpbench.spec.validate.context import Context
from ldpbench.spec.validate.limits import MAX_USERS
from ldpbench.util.suggest import closest


def privacy_budgets(ctx: Context, data: dict) -> list[Budget]:
    """``epsilons`` or ``users``, exactly one of them."""
    has_eps, has_users = "epsilons" in data, "users" in data
    if has_eps and has_users:
        ctx.problem(
            ("users",),
            "give either 'epsilons' (one budget for everyone) or 'users' (personalized budgets), not both",
        )
        return []
    if not has_eps and not has_users:
        ctx.problem((), "missing key 'epsilons' (or 'users' for personalized budgets)")
        return []
    return _epsilons(ctx, data["epsilons"]) if has_eps else _personalized(ctx, data["users"])


def _epsilons(ctx: Context, value: Any) -> list[Budget]:
    """``epsilons``: distinct plain budgets, one for all users."""
    if not isinstance(value, list):
        value = [value]
    if not value:
        ctx.problem(("epsilons",), "'epsilons' must be a non-empty list of privacy budgets")
        return []
    out, seen = [], set()
    for i, eps in enumerate(value):
        parsed = _epsilon_number(eps)
        if parsed is None:
            ctx.problem(("epsilons", i), _epsilon_problem(eps))
            continue
        if parsed in seen:
            ctx.problem(("epsilons", i), f"epsilon {format_value(parsed)} is listed twice")
            continue
        seen.add(parsed)
        out.append(Budget(epsilon=parsed))
    return out


def _personalized(ctx: Context, value: Any) -> list[Budget]:
    """``users``: one list of groups, or a mapping of labels to such lists."""
    if isinstance(value, list):
        configs = [(None, ("users",), value)]  # labelled by its groups below
    elif isinstance(value, dict) and value:
        configs = [(str(label), ("users", label), groups) for label, groups in value.items()]
    else:
        ctx.problem(
            ("users",), "'users' must be a list of {epsilon, count} groups, or a mapping of labels to such lists"
        )
        return []
    out = []
    for label, path, groups in configs:
        budget = _groups(ctx, label, path, groups)
        if budget is not None:
            out.append(budget)
    return out


def _groups(ctx: Context, label: str | None, path: tuple[Any, ...], groups: Any) -> Budget | None:
    """One personalized budget, each group remembered where it sits (for the dataset facts)."""
    if not isinstance(groups, list) or not groups:
        ctx.problem(path, "a users configuration must be a non-empty list of {epsilon, count} groups")
        return None
    gpaths = [path + (i,) for i in range(len(groups))]
    parsed = [_group(ctx, group, gpath) for group, gpath in zip(groups, gpaths)]
    if any(group is None for group in parsed):
        return None
    if label is None:  # an unnamed mix is named by what it is: "500@0.1+500@2+50@ln(d)"
        label = "+".join(f"{count}@{format_value(eps)}" for eps, count in parsed)  # type: ignore[misc]
    budget = Budget(epsilon=None, groups=tuple(parsed), users_label=label)  # type: ignore[arg-type]
    ctx.group_paths[id(budget)] = gpaths
    return budget


def _group(ctx: Context, group: Any, gpath: tuple[Any, ...]) -> tuple[Any, int] | None:
    """``(epsilon, count)`` of one group of users; None after a problem."""
    if not isinstance(group, dict):
        ctx.problem(gpath, f"a user group must be a mapping {{epsilon: ..., count: ...}}, got {group!r}")
        return None
    unknown = [key for key in group if key not in ("epsilon", "count")]
    for key in unknown:
        hint = closest(str(key), ["epsilon", "count"])
        ctx.problem(
            gpath + (key,), f"unknown key '{key}' in a user group" + (f" — did you mean '{hint}'?" if hint else "")
        )
    if "epsilon" not in group or "count" not in group:
        ctx.problem(gpath, "a user group needs both 'epsilon' and 'count'")
        return None
    count = group["count"]
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_USERS:
        ctx.problem(gpath + ("count",), f"'count' must be a number of users between 1 and {MAX_USERS:,}, got {count!r}")
        return None
    eps = group["epsilon"]
    problem = _check_epsilon_expression(eps)
    if problem:
        ctx.problem(gpath + ("epsilon",), problem)
        return None
    number = _epsilon_number(eps)
    return None if unknown else (number if number is not None else eps, count)


def _epsilon_number(value: Any) -> float | None:
    """A plain budget (a number, or inf) within range; ``None`` for anything else."""
    if isinstance(value, bool):
        return None
    if parse_infinity(value) is not None:
        return math.inf
    if isinstance(value, (int, float)) and not math.isnan(value) and value > 0:
        if math.isinf(value) or MIN_EPSILON <= value <= MAX_EPSILON:
            return float(value)
    return None


def _epsilon_problem(value: Any) -> str:
    """Why ``value`` is not a budget of the ``epsilons`` list."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 and not math.isnan(value):
        try:
            check_epsilon_range(float(value), value)
        except ValueError as exc:
            return str(exc)
    if isinstance(value, str):  # YAML reads 1e-300 (no dot) as text
        try:
            parse_epsilon(value, 2)
        except ValueError as exc:
            return str(exc)
    return f"epsilon must be a positive number (or inf), got {value!r}"


def _check_epsilon_expression(value: Any) -> str | None:
    """``None`` if ``value`` is a valid budget (number, inf, ln(d) ...), else the problem.

    An expression in ``d`` is checked here for its form only; its value, with each dataset's
    domain size, in :func:`~ldpbench.spec.validate.dataset_facts.dataset_facts`.
    """
    if _epsilon_number(value) is not None:
        return None
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        try:
            parse_epsilon(value, 2, check_range=not depends_on_d(value))
        except (ValueError, LdpbenchError) as exc:
            return f"epsilon: {exc}"
        return None
    return f"epsilon must be a positive number, inf, or an expression such as ln(d); got {value!r}"
