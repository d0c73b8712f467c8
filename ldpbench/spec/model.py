"""The validated spec: plain, picklable data (it travels to worker processes)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any


def format_value(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(format_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}={format_value(v)}" for k, v in value.items()) + "}"
    return str(value)


@dataclass(frozen=True)
class Entry:
    """A reference to a plugin with the parameters the spec gave (defaults not filled in)."""

    kind: str
    name: str
    params: tuple[tuple[str, Any], ...] = ()
    version: str = ""  #: what makes results comparable (algorithm versions), for row fingerprints
    #: File parameters resolved against the spec's folder: what the plugin opens. ``params`` keeps
    #: them as written, so labels, fingerprints and seeds do not depend on where the spec sits
    #: (the same spec gives the same numbers in any checkout, on any machine).
    resolved_paths: tuple[tuple[str, str], ...] = ()
    #: the plugin's whole identity (version, algorithm version, source hash; ldpbench.loading.identity):
    #: a stored result is reused only if it is unchanged
    code: str = ""

    @property
    def param_dict(self) -> dict[str, Any]:
        """The parameters the plugin is constructed with (file paths resolved)."""
        return {**dict(self.params), **dict(self.resolved_paths)}

    @property
    def label(self) -> str:
        """``name`` or ``name(key=value,...)`` when parameters were given."""
        if not self.params:
            return self.name
        return f"{self.name}(" + ",".join(f"{k}={format_value(v)}" for k, v in self.params) + ")"

    def fingerprint_data(self) -> list[Any]:
        """What determines this entry's part of a result: the plugin and its identity
        (:mod:`ldpbench.loading.identity`), its parameters as written, and the content of every file a
        parameter names (a dataset file edited in place changes the numbers, not the spec)."""
        from ldpbench.loading.identity import content_hash

        data: list[Any] = [self.kind, self.name, self.version, [[k, _jsonable(v)] for k, v in self.params]]
        if self.resolved_paths:
            data.append([[k, content_hash(path)] for k, path in self.resolved_paths])
        return data

    def code_data(self) -> list[Any]:
        """The code behind this entry's part of a result (:mod:`ldpbench.loading.identity`)."""
        return [self.kind, self.name, self.code]


@dataclass(frozen=True)
class DatasetEntry(Entry):
    sample: int | None = None  #: draw this many users afresh in every repeat

    @property
    def label(self) -> str:
        base = Entry.label.fget(self)  # type: ignore[attr-defined]
        return f"{base}[sample={self.sample}]" if self.sample else base


@dataclass(frozen=True)
class Pipeline:
    """A chain of post-processors; its label joins the steps' labels with ``+``."""

    steps: tuple[Entry, ...]

    @property
    def label(self) -> str:
        return "+".join(step.label for step in self.steps)


@dataclass(frozen=True)
class Budget:
    """Either one epsilon for all users, or personalized groups ``(epsilon expression, count)``."""

    epsilon: float | None = None
    groups: tuple[tuple[Any, int], ...] = ()
    users_label: str = ""

    @property
    def label(self) -> str:
        return self.users_label if self.groups else format_value(self.epsilon)

    @property
    def epsilon_value(self) -> float:
        return float(self.epsilon) if self.epsilon is not None else math.nan


#: How a spec picks the target items of an attack (``targets: {select: ...}``, docs/poisoning.md).
TARGET_SELECTIONS = ("random", "least-frequent", "given")


@dataclass(frozen=True)
class Targets:
    """The target set of an attack: ``count`` items drawn at random (seeded, the same in every
    cell of a repeat), the ``count`` least frequent items of the genuine population, or the
    ``items`` given."""

    count: int
    select: str = "random"
    items: tuple[int, ...] = ()

    @property
    def label(self) -> str:
        if self.select == "given":
            return "[" + ",".join(str(i) for i in self.items) + "]"
        return f"{self.select}({self.count})"


@dataclass(frozen=True)
class Poison:
    """One poisoning setting of a spec (docs/poisoning.md): an attack, how many fake users
    (``beta``, their fraction among all reports, or ``fake_users``, their number) and the targets.
    ``attack`` None is the unattacked control (``attacks: [none, ...]``): no fake user, the same
    targets, so the gain metrics measure the honest estimate's noise on them."""

    attack: Entry | None
    targets: Targets
    beta: float | None = None
    fake_users: int | None = None

    @property
    def attack_label(self) -> str:
        return self.attack.label if self.attack is not None else "none"

    @property
    def label(self) -> str:
        """``mga[beta=0.05,targets=random(1)]``: what follows ``@`` in an attacked row's oracle."""
        if self.attack is None:
            return f"none[targets={self.targets.label}]"
        size = f"beta={format_value(self.beta)}" if self.beta is not None else f"m={self.fake_users}"
        return f"{self.attack.label}[{size},targets={self.targets.label}]"

    def fake_count(self, n: int) -> int:
        """``m`` for ``n`` genuine users: 0 for the control, ``fake_users``, or
        ``round(beta n / (1 - beta))`` so that ``m / (n + m)`` is ``beta`` (Cao et al.'s beta)."""
        if self.attack is None:
            return 0
        if self.fake_users is not None:
            return int(self.fake_users)
        beta = float(self.beta)  # type: ignore[arg-type]
        return int(round(beta * n / (1.0 - beta)))

    def fingerprint_data(self) -> list[Any]:
        """The attack entry's data, the size and the target rule (row fingerprints)."""
        t = self.targets
        attack = self.attack.fingerprint_data() if self.attack is not None else "none"
        return [attack, self.beta, self.fake_users, [t.count, t.select, list(t.items)]]


@dataclass
class Spec:
    """A validated spec (see docs/spec-format.md)."""

    path: str
    name: str
    seed: int
    repeats: int
    simulation: str
    datasets: list[DatasetEntry]
    budgets: list[Budget]
    mechanisms: list[Entry]  #: oracles and protocols
    pipelines: list[Pipeline]
    metrics: list[Entry]
    executor: Entry | None = None
    description: str = ""
    requires: list[str] = field(default_factory=list)
    cell_timeout: float | None = None  #: seconds per cell (``cell_timeout:``), None for no limit
    resolved: dict[str, Any] = field(default_factory=dict)  #: JSON-able echo for the manifest
    alpha: float = 0.05  #: level of the leaderboard's paired tests (``tied_best``)
    #: what plugin code did wrong while the spec was checked (ldpbench.boundary.contain): one
    #: line each, naming the plugin and where it raised; its cells fail in the run
    plugin_failures: tuple[str, ...] = ()
    #: the poisoning settings (``attacks`` x ``beta``/``fake_users``, docs/poisoning.md); empty
    #: when the spec has no attacks
    poisons: list[Poison] = field(default_factory=list)


def _jsonable(v: Any) -> Any:
    try:
        json.dumps(v)
        return v
    except TypeError:
        return repr(v)
