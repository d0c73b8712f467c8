"""What depends on each dataset's size ``(n, d)``, found by loading it under a cell's guards.

Plugin code runs here, before any cell (a dataset loads, an oracle is built at its ``d``); what
fails for the spec's values is a problem of the spec, what fails otherwise is left to the run.
"""

from __future__ import annotations

from typing import Any

from ldpbench.boundary.contain import PluginCodeFailed, contained_call
from ldpbench.boundary.values import PluginOutputError, checked_population
from ldpbench.errors import LdpbenchError, ParamError
from ldpbench.spec.budgets import depends_on_d, parse_epsilon
from ldpbench.spec.model import Budget, DatasetEntry
from ldpbench.spec.seeding import rng_for
from ldpbench.spec.validate.attacks import attack_dataset_facts
from ldpbench.spec.validate.context import Context, Found
from ldpbench.spec.validate.limits import MAX_PER_USER_USERS
from ldpbench.spec.validate.results import domain_problems, record_problems
from ldpbench.types import Domain
from ldpbench.types.oracle import MIN_DOMAIN

#: Seconds a dataset may take to load at validation when no cell_timeout is set (a slower one is
#: left to the run, where its cells fail or succeed on their own).
MAX_FACTS_SECONDS = 120.0


def dataset_facts(ctx: Context, found: Found, data: dict) -> None:
    """Load each dataset once and check what depends on its size: a domain of at least
    :data:`~ldpbench.types.oracle.MIN_DOMAIN` items, ``sample`` and user-group counts above n,
    budgets in ``d`` out of range (``ln(d)`` with d = 1, ``200*ln(d)``), a mechanism that enumerates
    on a domain that is not enumerable or does not take the users' record shape, and per-user
    simulation of more than :data:`~ldpbench.spec.validate.limits.MAX_PER_USER_USERS` users.

    A dataset that cannot be loaded (a missing or unreadable file, a malformed one) is a
    problem of the spec (exit 2), found here rather than as every cell failing.
    """
    limit = ctx.cell_timeout or (float(found.cell_timeout) if found.cell_timeout else None)
    seconds = limit or MAX_FACTS_SECONDS
    for ds in found.datasets:
        where = ctx.dataset_paths.get(id(ds), ("datasets",))
        size = dataset_size(ctx, ds, found.seed, where, seconds, hard=limit is not None)
        if size is None:
            continue
        n, d, domain, record = size
        domain_problems(ctx, data, ds.label, domain, found.mechanisms)
        record_problems(ctx, data, ds.label, record, found.mechanisms)
        if n <= 0:
            ctx.problem(where, f"dataset '{ds.label}' has no users")
            continue
        if d < MIN_DOMAIN:
            ctx.problem(
                where,
                f"dataset '{ds.label}' has d = {d} item(s); every oracle needs a domain of at least "
                f"{MIN_DOMAIN} items (as ldpbench audit and check-plugin --domain do)",
            )
            continue
        if ds.sample is not None and ds.sample > n:
            ctx.problem(
                where + (ds.name, "sample"),
                f"'sample' is {ds.sample:,}, more users than dataset '{ds.label}' has (n = {n:,})",
            )
        for budget in found.budgets:
            budget_facts(ctx, ds, budget, n, d)
        if domain.is_enumerable:
            oracle_facts(ctx, ds, found.budgets, d, seconds, hard=limit is not None)
        attack_dataset_facts(ctx, found.poisons, ds.label, where, d, record, domain.is_enumerable)
        if found.simulation == "per-user":
            per_user_facts(ctx, ds, found.budgets, n, ("simulation",) if "simulation" in data else where)


def dataset_size(
    ctx: Context, ds: DatasetEntry, seed: int, where: tuple[Any, ...], seconds: float, *, hard: bool = True
) -> tuple[int, int, Domain, str] | None:
    """``(n, d, domain, record)`` of a dataset: from parameters declared ``describes`` when it has
    both ``n`` and ``d`` (an enumerable domain, one item per user), else by loading it; ``None``
    (after recording a problem, if it is the user's) when unknown."""
    info = ctx.plugins.get("dataset", ds.name)
    values = info.resolve_params(dict(ds.params)).values
    described = {p.describes: values.get(p.name) for p in info.params if p.describes in ("n", "d")}
    if isinstance(described.get("n"), int) and isinstance(described.get("d"), int):
        return described["n"], described["d"], Domain.enumerable(described["d"]), "item"
    try:
        # Plugin code runs here, before any cell: under the same guards as a cell (its time
        # limit, os._exit, the process backstop), so a hanging or exiting dataset cannot hang
        # or end `validate`.
        population = contained_call(
            f"dataset '{ds.label}'",
            "loading",
            lambda: ctx.plugins.create("dataset", ds.name, ds.param_dict).load(rng_for(seed, "dataset", ds.label)),
            seconds=seconds,
            passthrough=(LdpbenchError, OSError, MemoryError),
            hard=hard,  # the process backstop only under the user's limit: a slow load may run
        )
    except PluginCodeFailed:
        return None  # a plugin bug or hang, recorded: the run reports it as failed cells
    except (LdpbenchError, OSError) as exc:
        ctx.problem(where, f"dataset '{ds.label}' cannot be loaded: {exc}")
        return None
    except MemoryError:
        ctx.problem(where, f"dataset '{ds.label}' does not fit in memory")
        return None
    try:
        population = checked_population(f"dataset '{ds.name}'", population)
    except PluginOutputError:
        return None  # not a usable population: the run reports the broken plugin on its cells
    return population.n, population.d, population.item_domain, population.record


def budget_facts(ctx: Context, ds: DatasetEntry, budget: Budget, n: int, d: int) -> None:
    """The groups of a personalized budget against the dataset: counts within n, budgets in ``d``
    within range at its ``d``."""
    paths = ctx.group_paths.get(id(budget), [])
    total = 0
    for (eps, count), gpath in zip(budget.groups, paths):
        total += count
        if count > n:
            ctx.problem(
                gpath + ("count",), f"'count' is {count:,}, more users than dataset '{ds.label}' has (n = {n:,})"
            )
        if depends_on_d(eps):
            try:
                parse_epsilon(eps, d)
            except ValueError as exc:
                ctx.problem(gpath + ("epsilon",), f"with dataset '{ds.label}' (d = {d:,}): {exc}")
    if budget.groups and total > n and all(c <= n for _, c in budget.groups):
        where = paths[0][:-1] if paths else ("users",)
        ctx.problem(where, f"the user groups hold {total:,} users, more than dataset '{ds.label}' has (n = {n:,})")


def oracle_facts(
    ctx: Context, ds: DatasetEntry, budgets: list[Budget], d: int, seconds: float, *, hard: bool = True
) -> None:
    """Build every oracle at the dataset's ``d`` and each single budget: a parameter that only
    fails for this size (``ss``'s ``k`` >= d) is a problem of the spec, not failed cells."""
    epsilons = sorted({b.epsilon_value for b in budgets if not b.groups and b.epsilon_value > 0})
    for path, mech in ctx.oracle_paths:
        for eps in epsilons:
            try:
                # Plugin code: under a cell's guards, as when datasets load.
                contained_call(
                    f"oracle '{mech.label}'",
                    f"its constructor at d = {d}, epsilon = {eps:g}",
                    lambda mech=mech, eps=eps: ctx.plugins.create(
                        "oracle", mech.name, mech.param_dict, d=d, epsilon=eps
                    ),
                    seconds=seconds,
                    hard=hard,
                )
            except ParamError as exc:
                where = path + (exc.key,) if exc.key else path
                ctx.problem(where, f"oracle '{mech.label}' on dataset '{ds.label}' (d = {d}), epsilon = {eps:g}: {exc}")
                break
            except PluginCodeFailed:  # anything else is the plugin's, recorded: the run reports it
                break


def per_user_facts(ctx: Context, ds: DatasetEntry, budgets: list[Budget], n: int, where: tuple[Any, ...]) -> None:
    """``simulation: per-user`` of at most :data:`~ldpbench.spec.validate.limits.MAX_PER_USER_USERS`
    users per cell: the dataset's n, its ``sample``, or the users of each personalized budget."""
    users = [ds.sample or n] if not any(b.groups for b in budgets) else [sum(c for _, c in b.groups) for b in budgets]
    if max(users) > MAX_PER_USER_USERS:
        ctx.problem(
            where,
            f"simulation: per-user perturbs every user one by one, at most {MAX_PER_USER_USERS:,} per cell; "
            f"dataset '{ds.label}' would simulate {max(users):,} (use simulation: aggregate, or 'sample')",
        )
