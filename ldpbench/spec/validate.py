"""Validate a spec document against the format and the installed plugins.

Every problem is reported as ``FILE:LINE: message``, with a did-you-mean for unknown keys and names,
and all problems of a spec are reported together.
"""

from __future__ import annotations

import importlib.metadata as md
import math
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import LdpbenchError, ParamError, SpecError, UnknownPluginError
from ..pluginmanager import Plugins
from ..suggest import closest
from .load import Document, parse_document, read_document
from .model import Budget, DatasetEntry, Entry, Pipeline, Spec, format_value

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
    "alpha",
)
SIMULATIONS = ("aggregate", "per-user")
MAX_REPEATS = 100_000
MAX_EPSILON = 100.0
MAX_USERS = 10**10
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def load_spec(path: str | Path, plugins: Plugins) -> Spec:
    """Read, validate and resolve a spec file; raise :class:`SpecError` listing every problem."""
    doc = read_document(path)
    return Validator(doc, plugins, Path(path)).run()


def load_spec_text(text: str, plugins: Plugins, filename: str = "<spec>") -> Spec:
    """Validate a spec given as YAML text (the notebook API); relative paths are from the cwd."""
    return Validator(parse_document(text, filename), plugins, Path.cwd() / filename).run()


class Validator:
    def __init__(self, doc: Document, plugins: Plugins, path: Path):
        self.doc = doc
        self.plugins = plugins
        self.path = path
        self.problems: list[str] = []

    # -- helpers ----------------------------------------------------------------------------
    def problem(self, path: tuple[Any, ...], message: str) -> None:
        self.problems.append(f"{self.doc.where(path)}: {message}")

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
        elif not isinstance(name, str) or not _NAME.match(name):
            self.problem(("name",), f"'name' must be a word of letters, digits, '.', '_' or '-', got {name!r}")
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

        datasets = [e for e in self.entries(data, "datasets", "dataset", required=True) if e is not None]
        budgets = self.budgets(data)
        mechanisms = [
            e for e in self.entries(data, "oracles", ("oracle", "protocol"), required=True) if e is not None
        ]
        pipelines = self.pipelines(data)
        metrics = [e for e in self.entries(data, "metrics", "metric", default=["mse"]) if e is not None]
        executor = None
        if "executor" in data:
            executor = self.entry(data["executor"], ("executor",), "executor")
        requires = self.requires(data)
        plugins_dir = data.get("plugins_dir")
        if plugins_dir is not None and not isinstance(plugins_dir, str):
            self.problem(("plugins_dir",), "'plugins_dir' must be a path")
            plugins_dir = None
        if plugins_dir is not None:
            plugins_dir = str((self.path.parent / plugins_dir).resolve())

        if any(b.groups for b in budgets):
            for i, ds in enumerate(datasets):
                if ds.sample:
                    self.problem(("datasets", i), "'sample' and 'users' cannot be combined: 'users' already draws the users")
            for i, mech in enumerate(mechanisms):
                if mech.kind == "protocol":
                    self.problem(("oracles", i), f"protocol '{mech.name}' does not support personalized budgets ('users')")

        if self.problems:
            raise SpecError(self.problems)
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
            "file": str(self.path),
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
            plugins_dir=plugins_dir,
            resolved=resolved,
            alpha=alpha,
        )

    def alpha(self, data: dict) -> float:
        """``alpha``: the level of the leaderboard's paired tests against the best (``tied_best``)."""
        from ..stats.paired import DEFAULT_ALPHA

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
    def entries(
        self, data: dict, key: str, kind: str | tuple[str, ...], required: bool = False, default: list | None = None
    ) -> list[Entry | None]:
        if key not in data:
            if required:
                self.problem((), f"missing key '{key}'")
                return []
            data = {key: default or []}
        value = data[key]
        if not isinstance(value, list):
            value = [value] if isinstance(value, (str, dict)) else value
        if not isinstance(value, list) or not value:
            message = f"'{key}' must be a non-empty list of plugin names or {{name: {{params}}}} entries"
            if value is None or value == []:
                # Nothing given: say what could be (the unknown-name message does it for a typo).
                kinds = (kind,) if isinstance(kind, str) else kind
                names = sorted(n for k in kinds for n in self.plugins.registry(k).names())
                message += f"; available: {', '.join(names)}"
            self.problem((key,), message)
            return []
        return [self.entry(item, (key, i), kind) for i, item in enumerate(value)]

    def entry(self, item: Any, path: tuple[Any, ...], kinds: str | tuple[str, ...]) -> Entry | None:
        kinds = (kinds,) if isinstance(kinds, str) else kinds
        kind_text = " or ".join(kinds)
        if isinstance(item, str):
            name, params, ppath = item, {}, path
        elif isinstance(item, dict) and len(item) == 1:
            name, params = next(iter(item.items()))
            ppath = path + (name,)
            if params is None:
                params = {}
            if not isinstance(name, str):
                self.problem(path, f"expected a {kind_text} name, got {name!r}")
                return None
            if not isinstance(params, dict):
                self.problem(ppath, f"parameters of '{name}' must be a mapping, got {params!r}")
                return None
        else:
            self.problem(path, f"expected a {kind_text} name or {{name: {{params}}}}, got {item!r}")
            return None
        info = None
        for kind in kinds:
            if name in self.plugins.registry(kind):
                info = self.plugins.get(kind, name)
                break
        if info is None:
            known = [n for kind in kinds for n in self.plugins.registry(kind).names()]
            hint = closest(name, known)
            self.problem(path, str(UnknownPluginError(kind_text, name, hint, known)))
            return None
        params = dict(params)
        sample = None
        if info.kind == "dataset" and "sample" in params:
            sample = params.pop("sample")
            if isinstance(sample, bool) or not isinstance(sample, int) or not 1 <= sample <= MAX_USERS:
                self.problem(ppath + ("sample",), f"'sample' must be a number of users between 1 and {MAX_USERS:,}, got {sample!r}")
                sample = None
        try:
            resolved = info.resolve_params(params)
        except ParamError as exc:
            self.problem(ppath + ((exc.key,) if exc.key else ()), str(exc))
            return None
        given = dict(resolved.given)
        for key, value in given.items():
            # No size in a benchmark is this large; refuse it here rather than let a plugin try
            # to allocate it (d: 1e12) or a loop run for ever.
            if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_USERS:
                self.problem(ppath + (key,), f"'{key}' is too large: {value:,} (at most {MAX_USERS:,})")
                return None
        resolved_paths: list[tuple[str, str]] = []
        for p in info.params:
            if p.name not in given:
                continue
            if p.plugin_kind:
                try:
                    self.plugins.get(p.plugin_kind, given[p.name])
                except UnknownPluginError as exc:
                    self.problem(ppath + (p.name,), f"'{p.name}': {exc}")
                    return None
            if p.path and isinstance(given[p.name], str):
                target = (self.path.parent / os.path.expanduser(given[p.name])).resolve()
                if not target.exists():
                    self.problem(ppath + (p.name,), f"'{p.name}': no such file: {given[p.name]} (looked for {target})")
                    return None
                resolved_paths.append((p.name, str(target)))
        ordered = tuple((k, given[k]) for k in params if k in given)
        paths = tuple(resolved_paths)
        if info.kind == "dataset":
            return DatasetEntry(info.kind, name, ordered, info.version, paths, sample=sample)
        return Entry(info.kind, name, ordered, info.version, paths)

    def pipelines(self, data: dict) -> list[Pipeline]:
        value = data.get("pipelines", ["base"])
        if not isinstance(value, list) or not value:
            self.problem(("pipelines",), "'pipelines' must be a non-empty list (a list inside it is a chain)")
            return []
        out = []
        labels: dict[str, int] = {}
        for i, item in enumerate(value):
            chain = item if isinstance(item, list) else [item]
            if not chain:
                self.problem(("pipelines", i), "an empty chain")
                continue
            steps = [
                self.entry(step, ("pipelines", i, j) if isinstance(item, list) else ("pipelines", i), "postprocessor")
                for j, step in enumerate(chain)
            ]
            if any(s is None for s in steps):
                continue
            pipeline = Pipeline(tuple(steps))  # type: ignore[arg-type]
            if pipeline.label in labels:
                self.problem(("pipelines", i), f"pipeline '{pipeline.label}' is listed twice")
                continue
            labels[pipeline.label] = i
            out.append(pipeline)
        return out

    # -- budgets -----------------------------------------------------------------------------
    def budgets(self, data: dict) -> list[Budget]:
        has_eps, has_users = "epsilons" in data, "users" in data
        if has_eps and has_users:
            self.problem(("users",), "give either 'epsilons' (one budget for everyone) or 'users' (personalized budgets), not both")
            return []
        if not has_eps and not has_users:
            self.problem((), "missing key 'epsilons' (or 'users' for personalized budgets)")
            return []
        if has_eps:
            value = data["epsilons"]
            if not isinstance(value, list):
                value = [value]
            if not value:
                self.problem(("epsilons",), "'epsilons' must be a non-empty list of privacy budgets")
                return []
            out, seen = [], set()
            for i, eps in enumerate(value):
                parsed = _epsilon_number(eps)
                if parsed is None:
                    self.problem(("epsilons", i), f"epsilon must be a positive number (or inf), got {eps!r}")
                    continue
                if parsed in seen:
                    self.problem(("epsilons", i), f"epsilon {format_value(parsed)} is listed twice")
                    continue
                seen.add(parsed)
                out.append(Budget(epsilon=parsed))
            return out
        value = data["users"]
        if isinstance(value, list):
            configs = [(None, ("users",), value)]  # labelled by its groups below
        elif isinstance(value, dict) and value:
            configs = [(str(label), ("users", label), groups) for label, groups in value.items()]
        else:
            self.problem(("users",), "'users' must be a list of {epsilon, count} groups, or a mapping of labels to such lists")
            return []
        out = []
        for label, path, groups in configs:
            budget = self.groups(label, path, groups)
            if budget is not None:
                out.append(budget)
        return out

    def groups(self, label: str | None, path: tuple[Any, ...], groups: Any) -> Budget | None:
        if not isinstance(groups, list) or not groups:
            self.problem(path, "a users configuration must be a non-empty list of {epsilon, count} groups")
            return None
        parsed = []
        ok = True
        for i, group in enumerate(groups):
            gpath = path + (i,)
            if not isinstance(group, dict):
                self.problem(gpath, f"a user group must be a mapping {{epsilon: ..., count: ...}}, got {group!r}")
                ok = False
                continue
            for key in group:
                if key not in ("epsilon", "count"):
                    hint = closest(str(key), ["epsilon", "count"])
                    self.problem(gpath + (key,), f"unknown key '{key}' in a user group" + (f" — did you mean '{hint}'?" if hint else ""))
                    ok = False
            if "epsilon" not in group or "count" not in group:
                self.problem(gpath, "a user group needs both 'epsilon' and 'count'")
                ok = False
                continue
            count = group["count"]
            if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_USERS:
                self.problem(gpath + ("count",), f"'count' must be a number of users between 1 and {MAX_USERS:,}, got {count!r}")
                ok = False
                continue
            eps = group["epsilon"]
            problem = _check_epsilon_expression(eps)
            if problem:
                self.problem(gpath + ("epsilon",), problem)
                ok = False
                continue
            number = _epsilon_number(eps)
            parsed.append((number if number is not None else eps, count))
        if not ok:
            return None
        if label is None:  # an unnamed mix is named by what it is: "500@0.1+500@2+50@ln(d)"
            label = "+".join(f"{count}@{format_value(eps)}" for eps, count in parsed)
        return Budget(epsilon=None, groups=tuple(parsed), users_label=label)

    # -- requirements ------------------------------------------------------------------------
    def requires(self, data: dict) -> list[str]:
        value = data.get("requires", [])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list):
            self.problem(("requires",), "'requires' must be a list of requirements such as 'ldpbench-foo>=1.0'")
            return []
        from packaging.requirements import InvalidRequirement, Requirement

        out = []
        for i, req_text in enumerate(value):
            try:
                req = Requirement(str(req_text))
            except InvalidRequirement as exc:
                self.problem(("requires", i), f"invalid requirement {req_text!r}: {exc}")
                continue
            try:
                version = md.version(req.name)
            except md.PackageNotFoundError:
                self.problem(("requires", i), f"this spec needs the plugin distribution '{req.name}', which is not installed (pip install '{req}')")
                continue
            if req.specifier and not req.specifier.contains(version, prereleases=True):
                self.problem(("requires", i), f"this spec needs {req}, but {req.name} {version} is installed")
                continue
            out.append(str(req))
        return out


def _epsilon_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.strip().lower() in ("inf", "infinity", "+inf"):
        return math.inf
    if isinstance(value, (int, float)) and not math.isnan(value) and value > 0:
        if math.isinf(value) or value <= MAX_EPSILON:
            return float(value)
    return None


def _check_epsilon_expression(value: Any) -> str | None:
    """``None`` if ``value`` is a valid budget (number, inf, ln(d) ...), else the problem."""
    if _epsilon_number(value) is not None:
        return None
    if isinstance(value, str):
        parse = _budget_parser()
        if parse is None:
            return f"epsilon expressions need ldpbench.budgets; got {value!r}"
        try:
            eps = parse(value, 2)
        except (ValueError, LdpbenchError) as exc:
            return f"epsilon: {exc}"
        if not (eps > 0):
            return f"epsilon must be positive, got {value!r}"
        return None
    return f"epsilon must be a positive number, inf, or an expression such as ln(d); got {value!r}"


def _budget_parser() -> Callable[[Any, int], float] | None:
    try:
        from ..budgets import parse_epsilon
    except ImportError:
        return None
    return parse_epsilon
