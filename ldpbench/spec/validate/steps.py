"""The steps of validating a spec, in the order its problems are listed, and the :class:`Spec` they make."""

from __future__ import annotations

from ldpbench.boundary.contain import collecting_failures
from ldpbench.spec.model import Spec
from ldpbench.spec.timeouts import cell_timeout_problem
from ldpbench.spec.validate.attacks import attack_problems, poison_settings, poisoning_metric_problems
from ldpbench.spec.validate.combinations import missing_capabilities, personalized_budget_problems
from ldpbench.spec.validate.context import Context, Found
from ldpbench.spec.validate.dataset_facts import dataset_facts
from ldpbench.spec.validate.limits import MAX_REPEATS
from ldpbench.spec.validate.pipelines import pipelines
from ldpbench.spec.validate.plugin_lists import dataset_entries, executor_entry, metric_entries, oracle_entries
from ldpbench.spec.validate.privacy_budgets import privacy_budgets
from ldpbench.spec.validate.requirements import requirements
from ldpbench.spec.validate.results import result_pairings
from ldpbench.spec.validate.settings import (
    alpha_level,
    cell_timeout,
    description,
    plugins_dir_is_a_path,
    simulation_mode,
    spec_mapping,
    spec_name,
    unknown_keys,
    whole_number,
)
from ldpbench.util.provenance import portable_path


def run(ctx: Context) -> Spec:
    """Validate the spec step by step; raise :class:`SpecError` listing every problem, else return it.

    Plugin code run on the way (constructors, ``tags()``, dataset loads) is contained
    (:mod:`ldpbench.boundary.contain`) under the cell time limit; what it did wrong is recorded
    in ``Spec.plugin_failures``.
    """
    data = spec_mapping(ctx.doc)
    with collecting_failures(_plugin_seconds(ctx, data)) as failures:
        spec = _steps(ctx, data)
    spec.plugin_failures = tuple(str(f) for f in failures.values())
    return spec


def _plugin_seconds(ctx: Context, data: dict) -> float | None:
    """The time limit of plugin code while the spec is checked: the cells' (--cell-timeout, else
    a valid ``cell_timeout:`` of the spec), None for none."""
    if ctx.cell_timeout:
        return float(ctx.cell_timeout)
    raw = data.get("cell_timeout") if isinstance(data, dict) else None
    return float(raw) if raw is not None and cell_timeout_problem(raw) is None else None


def _steps(ctx: Context, data: dict) -> Spec:
    unknown_keys(ctx, data)
    found = Found(  # each step in turn (keyword arguments are evaluated in order)
        name=spec_name(ctx, data),
        description=description(ctx, data),
        seed=whole_number(ctx, data, "seed", 0, 0, 2**63 - 1),
        repeats=whole_number(ctx, data, "repeats", 10, 1, MAX_REPEATS),
        alpha=alpha_level(ctx, data),
        simulation=simulation_mode(ctx, data),
        datasets=dataset_entries(ctx, data),
        budgets=privacy_budgets(ctx, data),
        mechanisms=oracle_entries(ctx, data),
        pipelines=pipelines(ctx, data),
        metrics=metric_entries(ctx, data),
        executor=executor_entry(ctx, data),
        requires=requirements(ctx, data),
        cell_timeout=cell_timeout(ctx, data),
        poisons=poison_settings(ctx, data),
    )
    plugins_dir_is_a_path(ctx, data)
    personalized_budget_problems(ctx, found.datasets, found.mechanisms, found.budgets)
    attack_problems(ctx, found.poisons, found.mechanisms, found.budgets)
    poisoning_metric_problems(ctx, data, found.metrics, found.poisons)
    missing_capabilities(ctx, data, found.simulation, found.mechanisms, found.pipelines, found.budgets)
    result_pairings(ctx, data, found.mechanisms, found.pipelines, found.metrics)
    if not ctx.problems:
        # Only a spec that is otherwise valid loads its datasets: loading may take a while.
        dataset_facts(ctx, found, data)
    ctx.raise_problems()
    return validated_spec(ctx, found)


def validated_spec(ctx: Context, found: Found) -> Spec:
    """The :class:`Spec` of a spec without problems, with its ``resolved`` echo for the manifest."""
    resolved = {
        "name": found.name,
        "description": found.description,
        "seed": found.seed,
        "repeats": found.repeats,
        "simulation": found.simulation,
        "datasets": [d.label for d in found.datasets],
        "budgets": [b.label for b in found.budgets],
        "oracles": [m.label for m in found.mechanisms],
        "pipelines": [p.label for p in found.pipelines],
        "metrics": [m.label for m in found.metrics],
        "executor": found.executor.label if found.executor else None,
        "requires": found.requires,
        "alpha": found.alpha,
        **({"poisons": [p.label for p in found.poisons]} if found.poisons else {}),
        "file": portable_path(ctx.path),  # a committed manifest must not carry a home directory
    }
    return Spec(
        path=str(ctx.path),
        name=found.name,
        seed=found.seed,
        repeats=found.repeats,
        simulation=found.simulation,
        datasets=found.datasets,
        budgets=found.budgets,
        mechanisms=found.mechanisms,
        pipelines=found.pipelines,
        metrics=found.metrics,
        executor=found.executor,
        description=found.description,
        requires=found.requires,
        cell_timeout=float(found.cell_timeout) if found.cell_timeout is not None else None,
        resolved=resolved,
        alpha=found.alpha,
        poisons=list(found.poisons),
    )
