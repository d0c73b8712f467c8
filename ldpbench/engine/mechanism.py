"""The mechanism of a cell, run on its users: an oracle (one budget, or a group per budget) or a
protocol, giving one estimate per output."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ldpbench.boundary.values import PluginOutputError, checked_result, frozen_population, readonly
from ldpbench.engine.groups import simulate_groups
from ldpbench.engine.poisoning import report_order_rng
from ldpbench.engine.simulate import DEFAULT_CHUNK_USERS, simulate
from ldpbench.loading.manager import Plugins
from ldpbench.spec.budgets import parse_epsilon
from ldpbench.spec.expand import Cell
from ldpbench.spec.seeding import rng_for
from ldpbench.types import Poisoning, Population, ProtocolPoison
from ldpbench.types.attributes import output_d
from ldpbench.types.data import declared_buckets


def mechanism_outputs(
    plugins: Plugins,
    cell: Cell,
    population: Population,
    poisoning: Poisoning | None = None,
    keep_reports: bool = False,
) -> dict[str, Any]:
    """Run the cell's oracle or protocol; return ``{label: Estimate}``.

    :param poisoning: an attacked cell's plan (:func:`~ldpbench.engine.poisoning.poisoning_plan`):
        its attack crafts ``poisoning.fake_users`` reports for the targets, with a stream of its own
        (the genuine users' draws are those of the unattacked cell), and they are aggregated with
        the genuine ones (:func:`~ldpbench.engine.simulate.simulate`; docs/poisoning.md).
    :param keep_reports: keep every report's support on the estimate (a pipeline step declares
        ``requires_reports``; one oracle, one budget, the per-user path), shuffled by a stream of
        its own (:func:`~ldpbench.engine.poisoning.report_order_rng`)."""
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
        extra: dict[str, Any] = {}
        if cell.poison is not None and poisoning is not None and poisoning.fake_users and cell.poison.attack:
            # Cao, Jia & Gong §6: the protocol asks the attack for each round's fake reports
            # (Attack.craft_hashed) with a stream of the attack's own; the genuine draws stay the
            # unattacked cell's (docs/poisoning.md).
            attack = plugins.create("attack", cell.poison.attack.name, cell.poison.attack.param_dict)
            arng = rng_for(seed, "attack", ds.label, budget.label, mech.label, cell.poison.label, rep)
            extra["poison"] = ProtocolPoison(attack, readonly(poisoning.targets), poisoning.fake_users, arng)
        outputs = protocol.run(users, budget.epsilon_value, rng, simulation=cell.simulation, **extra)
        if not isinstance(outputs, Mapping):
            raise PluginOutputError(f"protocol '{mech.name}' returned {type(outputs).__name__}, not a mapping")
        label_of = cell.output_label if cell.poison is not None else mech.label
        return {
            f"{label_of}:{label}": checked_result(
                f"protocol '{mech.name}' (output '{label}')", est, _output_size(population, str(label), est)
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
    order = report_order_rng(cell) if keep_reports else None
    if cell.poison is None or poisoning is None:
        est = simulate(oracle, users.counts, rng, cell.simulation, keep_reports=order)
        return {mech.label: est.replace(mechanism=mech.label)}
    m, chunks = poisoning.fake_users, iter(())
    if m and cell.poison.attack is not None:
        attack = plugins.create("attack", cell.poison.attack.name, cell.poison.attack.param_dict)
        arng = rng_for(seed, "attack", ds.label, budget.label, mech.label, cell.poison.label, rep)
        targets = readonly(poisoning.targets)
        # Crafted and aggregated chunk by chunk, as many users at a time as the per-user path takes.
        chunk = int(oracle.tags().chunk_users or DEFAULT_CHUNK_USERS)
        chunks = (attack.craft(oracle, targets, min(chunk, m - start), arng) for start in range(0, m, chunk))
    est = simulate(oracle, users.counts, rng, cell.simulation, fake_users=m, fake_chunks=chunks, keep_reports=order)
    return {cell.output_label: est.replace(mechanism=cell.output_label)}


def _output_size(population: Population, label: str, estimate: Any) -> int:
    """The length an output's frequencies must have: ``k`` for an estimate over ``k`` contiguous
    buckets of ``[d]`` (``declared_buckets``), else its attribute's or the population's domain size."""
    d = output_d(population, label)
    return declared_buckets(estimate, d) or d
