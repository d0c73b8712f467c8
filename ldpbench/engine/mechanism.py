"""The mechanism of a cell, run on its users: an oracle (one budget, or a group per budget) or a
protocol, giving one estimate per output."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ldpbench.boundary.values import PluginOutputError, checked_result, frozen_population
from ldpbench.engine.groups import simulate_groups
from ldpbench.engine.simulate import simulate
from ldpbench.loading.manager import Plugins
from ldpbench.spec.budgets import parse_epsilon
from ldpbench.spec.expand import Cell
from ldpbench.spec.seeding import rng_for
from ldpbench.types import Population
from ldpbench.types.attributes import output_d


def mechanism_outputs(plugins: Plugins, cell: Cell, population: Population) -> dict[str, Any]:
    """Run the cell's oracle or protocol; return ``{label: Estimate}``."""
    mech = cell.mechanism
    ds, budget, rep, seed = cell.dataset, cell.budget, cell.repeat, cell.seed
    # The users of a repeat are drawn with a stream keyed by (dataset, budget or user mix, repeat)
    # and never by the mechanism, so every oracle in a repeat sees the same users (paired
    # comparisons); only the perturbation stream below is per mechanism. `sample: N` and `users:`
    # groups (which draw their own sample) share this key and cannot be combined.
    users_rng = rng_for(seed, "users", ds.label, budget.label, rep)
    users = population
    if ds.sample:
        users = frozen_population(population.sample(ds.sample, users_rng))
    rng = rng_for(seed, "mechanism", ds.label, budget.label, mech.label, rep)
    if mech.kind == "protocol":
        protocol = plugins.create("protocol", mech.name, mech.param_dict)
        outputs = protocol.run(users, budget.epsilon_value, rng, simulation=cell.simulation)
        if not isinstance(outputs, Mapping):
            raise PluginOutputError(f"protocol '{mech.name}' returned {type(outputs).__name__}, not a mapping")
        return {
            f"{mech.label}:{label}": checked_result(
                f"protocol '{mech.name}' (output '{label}')", est, output_d(population, str(label))
            )
            for label, est in outputs.items()
        }
    if budget.groups:
        groups = [(parse_epsilon(eps, population.d), count) for eps, count in budget.groups]

        def make_oracle(eps: float):
            return plugins.create("oracle", mech.name, mech.param_dict, d=population.d, epsilon=eps)

        est = simulate_groups(make_oracle, population, groups, rng, cell.simulation, users_rng=users_rng)
        return {mech.label: est.replace(mechanism=mech.label)}
    oracle = plugins.create("oracle", mech.name, mech.param_dict, d=population.d, epsilon=budget.epsilon_value)
    est = simulate(oracle, users.counts, rng, cell.simulation)
    return {mech.label: est.replace(mechanism=mech.label)}
