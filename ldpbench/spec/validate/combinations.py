"""Choices valid one by one that cannot go together: personalized budgets with ``sample`` or a
protocol, and what the spec asks of its plugins against the capabilities they declare."""

from __future__ import annotations

from ldpbench.spec.capabilities import capability_problems
from ldpbench.spec.model import Budget, DatasetEntry, Entry, Pipeline
from ldpbench.spec.validate.context import Context


def personalized_budget_problems(
    ctx: Context, datasets: list[DatasetEntry], mechanisms: list[Entry], budgets: list[Budget]
) -> None:
    """With ``users``, no dataset may draw a ``sample`` and no mechanism may be a protocol."""
    if not any(b.groups for b in budgets):
        return
    for i, ds in enumerate(datasets):
        if ds.sample:
            ctx.problem(("datasets", i), "'sample' and 'users' cannot be combined: 'users' already draws the users")
    for i, mech in enumerate(mechanisms):
        if mech.kind == "protocol":
            ctx.problem(("oracles", i), f"protocol '{mech.name}' does not support personalized budgets ('users')")


def missing_capabilities(
    ctx: Context,
    data: dict,
    simulation: str,
    mechanisms: list[Entry],
    pipelines: list[Pipeline],
    budgets: list[Budget],
) -> None:
    """Every capability the spec needs of a plugin that its tags do not declare."""
    for path, message in capability_problems(ctx.plugins, data, simulation, mechanisms, pipelines, budgets):
        ctx.problem(path, message)
