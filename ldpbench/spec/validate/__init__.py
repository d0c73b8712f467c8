"""Validate a spec document against the format and the installed plugins.

Every problem is reported as ``FILE:LINE: message``, with a did-you-mean for unknown keys and names,
and all problems of a spec are reported together.
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path
from typing import Any

from ldpbench.boundary.guard import cell_guard, is_real_interrupt
from ldpbench.boundary.values import PluginOutputError, checked_population
from ldpbench.errors import LdpbenchError, ParamError, SpecError, UnknownPluginError, UsageError
from ldpbench.loading.identity import entry_version
from ldpbench.loading.manager import Plugins
from ldpbench.params import Param, parse_infinity
from ldpbench.spec.budgets import MAX_EPSILON, MIN_EPSILON, check_epsilon_range, depends_on_d, parse_epsilon
from ldpbench.spec.capabilities import capability_problems, default_names
from ldpbench.spec.load import Document, parse_document, read_document
from ldpbench.spec.model import Budget, DatasetEntry, Entry, Pipeline, Spec, format_value
from ldpbench.spec.seeding import rng_for
from ldpbench.spec.timeouts import cell_timeout_problem
from ldpbench.spec.validate.context import Context, Found
from ldpbench.spec.validate.dataset_facts import dataset_facts
from ldpbench.spec.validate.limits import MAX_NAME_LENGTH, MAX_PER_USER_USERS, MAX_REPEATS, MAX_USERS
from ldpbench.spec.validate.pipelines import pipelines as pipeline_chains
from ldpbench.spec.validate.plugin_dirs import plugin_dirs_for, spec_plugins_dir
from ldpbench.spec.validate.plugin_lists import dataset_entries, executor_entry, metric_entries, oracle_entries
from ldpbench.spec.validate.privacy_budgets import privacy_budgets
from ldpbench.spec.validate.requirements import requirements
from ldpbench.util.provenance import portable_path
from ldpbench.util.safeio import check_regular_file
from ldpbench.util.suggest import closest

__all__ = ["load_spec", "load_spec_text", "plugin_dirs_for", "spec_plugins_dir"]

TOP_LEVEL_KEYS = (
    "name",
    "description",
    "seed",
    "repeats",
    "simulation",
    "datasets",
    "epsilons",
    "users",
    "oracles",
    "pipelines",
    "metrics",
    "executor",
    "requires",
    "plugins_dir",
    "cell_timeout",
    "alpha",
)
SIMULATIONS = ("aggregate", "per-user")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def load_spec(
    path: str | Path,
    plugins: Plugins,
    *,
    trust_user_only: bool = False,
    cell_timeout: float | None = None,
    document: Document | None = None,
) -> Spec:
    """Read, validate and resolve a spec file; raise :class:`SpecError` listing every problem.

    :param trust_user_only: let the spec give parameters declared ``user_only`` (a scheduler
        address): ``--trust-spec-params`` on the command line.
    :param document: the file as already read by :func:`~ldpbench.spec.load.read_document` (the
        command line reads a spec once, for its ``plugins_dir`` and then to validate it).
    """
    doc = document if document is not None else read_document(path)
    return Validator(doc, plugins, Path(path), trust_user_only=trust_user_only, cell_timeout=cell_timeout).run()


def load_spec_text(text: str, plugins: Plugins, filename: str = "<spec>", *, trust_user_only: bool = False) -> Spec:
    """Validate a spec given as YAML text (the notebook API); relative paths are from the cwd."""
    return Validator(
        parse_document(text, filename), plugins, Path.cwd() / filename, trust_user_only=trust_user_only
    ).run()


class Validator(Context):
    def run(self) -> Spec:
        data = self.doc.data
        if not isinstance(data, dict):
            raise SpecError(f"{self.doc.where(())}: a spec must be a mapping of keys (name, datasets, ...)")
        for key in data:
            if key not in TOP_LEVEL_KEYS:
                hint = closest(str(key), TOP_LEVEL_KEYS)
                self.problem((key,), f"unknown key '{key}'" + (f" — did you mean '{hint}'?" if hint else ""))

        name = data.get("name")
        if name is None:
            self.problem((), "missing key 'name'")
            name = "unnamed"
        elif not isinstance(name, str) or not _NAME.fullmatch(name):
            # fullmatch: "$" would also match before a trailing newline ("abc\n").
            shown = name if not isinstance(name, str) or len(name) <= 60 else name[:60] + "..."
            self.problem(
                ("name",),
                f"'name' must be a word of letters, digits, '.', '_' or '-' (it names the results folder), got {shown!r}",
            )
            name = "unnamed"
        elif len(name) > MAX_NAME_LENGTH:
            self.problem(
                ("name",),
                f"'name' is {len(name)} characters long; at most {MAX_NAME_LENGTH} (it names the results folder)",
            )
            name = "unnamed"
        description = data.get("description", "")
        if not isinstance(description, str):
            self.problem(("description",), "'description' must be text")
            description = ""
        seed = self.integer(data, "seed", 0, 0, 2**63 - 1)
        repeats = self.integer(data, "repeats", 10, 1, MAX_REPEATS)
        alpha = self.alpha(data)
        simulation = data.get("simulation", "aggregate")
        if simulation not in SIMULATIONS:
            hint = closest(str(simulation), SIMULATIONS)
            self.problem(
                ("simulation",),
                f"'simulation' must be one of {', '.join(SIMULATIONS)}, got {simulation!r}"
                + (f" — did you mean '{hint}'?" if hint else ""),
            )
            simulation = "aggregate"

        datasets = dataset_entries(self, data)
        budgets = privacy_budgets(self, data)
        mechanisms = oracle_entries(self, data)
        pipelines = pipeline_chains(self, data)
        metrics = metric_entries(self, data)
        executor = executor_entry(self, data)
        requires = requirements(self, data)
        cell_timeout = data.get("cell_timeout")
        if (timeout_problem := cell_timeout_problem(cell_timeout)) is not None:
            self.problem(("cell_timeout",), timeout_problem)
            cell_timeout = None
        # Loaded (or refused) before validation, by whoever built the plugins (spec_plugins_dir).
        if data.get("plugins_dir") is not None and not isinstance(data["plugins_dir"], str):
            self.problem(("plugins_dir",), "'plugins_dir' must be a path")

        if any(b.groups for b in budgets):
            for i, ds in enumerate(datasets):
                if ds.sample:
                    self.problem(
                        ("datasets", i), "'sample' and 'users' cannot be combined: 'users' already draws the users"
                    )
            for i, mech in enumerate(mechanisms):
                if mech.kind == "protocol":
                    self.problem(
                        ("oracles", i), f"protocol '{mech.name}' does not support personalized budgets ('users')"
                    )

        for path, message in capability_problems(self.plugins, data, simulation, mechanisms, pipelines, budgets):
            self.problem(path, message)
        if not self.problems:
            # Only a spec that is otherwise valid loads its datasets: loading may take a while.
            found = Found(
                name,
                description,
                seed,
                repeats,
                alpha,
                simulation,
                datasets,
                budgets,
                mechanisms,
                pipelines,
                metrics,
                executor,
                requires,
                cell_timeout,
            )
            dataset_facts(self, found, data)
        self.raise_problems()
        resolved = {
            "name": name,
            "description": description,
            "seed": seed,
            "repeats": repeats,
            "simulation": simulation,
            "datasets": [d.label for d in datasets],
            "budgets": [b.label for b in budgets],
            "oracles": [m.label for m in mechanisms],
            "pipelines": [p.label for p in pipelines],
            "metrics": [m.label for m in metrics],
            "executor": executor.label if executor else None,
            "requires": requires,
            "alpha": alpha,
            "file": portable_path(self.path),  # a committed manifest must not carry a home directory
        }
        return Spec(
            path=str(self.path),
            name=name,
            seed=seed,
            repeats=repeats,
            simulation=simulation,
            datasets=datasets,  # type: ignore[arg-type]
            budgets=budgets,
            mechanisms=mechanisms,
            pipelines=pipelines,
            metrics=metrics,
            executor=executor,
            description=description,
            requires=requires,
            cell_timeout=float(cell_timeout) if cell_timeout is not None else None,
            resolved=resolved,
            alpha=alpha,
        )

    def alpha(self, data: dict) -> float:
        """``alpha``: the level of the leaderboard's paired tests against the best (``tied_best``)."""
        from ldpbench.stats.paired import DEFAULT_ALPHA

        value = data.get("alpha", DEFAULT_ALPHA)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
            self.problem(("alpha",), f"'alpha' must be a number between 0 and 1 (exclusive), got {value!r}")
            return DEFAULT_ALPHA
        return float(value)

    def integer(self, data: dict, key: str, default: int, lo: int, hi: int) -> int:
        value = data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            self.problem((key,), f"'{key}' must be a whole number, got {value!r}")
            return default
        if not lo <= value <= hi:
            self.problem((key,), f"'{key}' must be between {lo} and {hi:,}, got {value:,}")
            return default
        return value

    # -- plugin entries ----------------------------------------------------------------------
