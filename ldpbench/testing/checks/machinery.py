"""The kit's shared machinery: the plugin under test (:class:`Subject`), "not applicable"
(:class:`CheckSkipped`), per-check random streams and the global-random-state probe every kind of
check uses."""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ldpbench.engine.simulate import simulate
from ldpbench.params import resolve
from ldpbench.types import Attack, Dataset, Estimate, Metric, Oracle, PostProcessor, Protocol


class CheckSkipped(Exception):
    """Raised by a check that does not apply to the plugin: it needs a capability the plugin's
    tags do not declare (e.g. no aggregate path). Reported as "not applicable"."""


# ----------------------------------------------------------------------------------------------
# The plugin under test
# ----------------------------------------------------------------------------------------------


#: The kinds the kit checks, with their base classes.
_KINDS: dict[str, type] = {
    "oracle": Oracle,
    "postprocessor": PostProcessor,
    "metric": Metric,
    "dataset": Dataset,
    "protocol": Protocol,
    "attack": Attack,
}


@dataclass
class Subject:
    """A plugin class plus its parameters, able to build instances; caches shared simulations."""

    kind: str
    name: str
    cls: type
    params: dict[str, Any] = field(default_factory=dict)
    plugins: Any = None
    cache: dict[Any, Any] = field(default_factory=dict, repr=False)

    @property
    def label(self) -> str:
        if not self.params:
            return self.name
        return f"{self.name}({','.join(f'{k}={v}' for k, v in sorted(self.params.items()))})"

    def __repr__(self) -> str:
        return self.label

    def _values(self) -> dict[str, Any]:
        values = resolve(self.cls.params, self.params, owner=f"{self.kind} '{self.name}'").values
        for p in self.cls.params:
            if p.plugin_kind and isinstance(values.get(p.name), str):
                values[p.name] = self.get_plugins().create(p.plugin_kind, values[p.name])
        return values

    def get_plugins(self) -> Any:
        if self.plugins is None:
            from ldpbench.loading.manager import build_plugins

            self.plugins = build_plugins()
        return self.plugins

    def oracle(self, d: int, epsilon: float) -> Oracle:
        return self.cls(d=d, epsilon=epsilon, **self._values())

    def postprocessor(self) -> PostProcessor:
        return self.cls(**self._values())

    def build(self) -> Any:
        """An instance of a kind built from its parameters alone (post-processor, metric, dataset, attack)."""
        return self.cls(**self._values())


def _subject(
    obj: Any, plugins: Any = None, params: Mapping[str, Any] | None = None, kind: str | None = None
) -> Subject:
    """Resolve a name, a class, an instance, or ``(any of those, params)`` to a :class:`Subject`."""
    if isinstance(obj, Subject):
        return obj
    if isinstance(obj, tuple) and len(obj) == 2 and isinstance(obj[1], Mapping):
        return _subject(obj[0], plugins, {**dict(obj[1]), **dict(params or {})}, kind)
    params = dict(params or {})
    if isinstance(obj, str):
        if plugins is None:
            from ldpbench.loading.manager import build_plugins

            plugins = build_plugins()
        # Without a kind a name is looked up among oracles and post-processors only: names are
        # unique within a kind, not across kinds ("uniform" is a post-processor and a dataset).
        kinds = [kind] if kind else ["oracle", "postprocessor"]
        found = [k for k in kinds if obj in plugins.registry(k)]
        if not found:
            other = [k for k in _KINDS if k not in kinds and obj in plugins.registry(k)]
            if other:
                raise TypeError(f"{obj!r} is a {other[0]}, not a {kinds[0]}")
            raise ValueError(f"no {' or '.join(kinds)} plugin named {obj!r}")
        if len(found) > 1:
            raise ValueError(f"{obj!r} names both an oracle and a post-processor: pass the class instead")
        return Subject(found[0], obj, plugins.get(found[0], obj).cls, params, plugins)
    if isinstance(obj, tuple(_KINDS.values())):
        return _subject(type(obj), plugins, {**obj.get_params(), **params}, kind)
    for kind_name, base in _KINDS.items():
        if isinstance(obj, type) and issubclass(obj, base):
            return Subject(kind_name, obj.name or obj.__name__, obj, params, plugins)
    raise TypeError(
        f"cannot check {obj!r}: give a plugin name, or an Oracle, PostProcessor, Metric, Dataset, Protocol or Attack class or instance"
    )


def _rng(cfg: Any, *key: Any) -> np.random.Generator:
    """A stream keyed by the config seed and the check's identity (never by run order)."""
    words = [int(cfg.seed)] + [sum(ord(c) * 31**i for i, c in enumerate(str(k))) % (2**32) for k in key]
    return np.random.default_rng(np.random.SeedSequence(words))


def _where(subject: Subject, **ctx: Any) -> str:
    return f"{subject.label} (" + ", ".join(f"{k}={v}" for k, v in ctx.items()) + ")"


def _global_state() -> tuple[Any, ...]:
    state = np.random.get_state()
    return (state[0], state[1].copy(), *state[2:], random.getstate())


def _same_state(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    return a[0] == b[0] and np.array_equal(a[1], b[1]) and a[2:] == b[2:]


def _simulate(oracle: Oracle, counts: np.ndarray, rng: np.random.Generator, path: str) -> Estimate:
    """One trial through the engine's :func:`~ldpbench.engine.simulate.simulate`; the per-user path walks
    the users in three chunks, so summing over chunks is exercised too."""
    n = int(np.sum(counts))
    return simulate(oracle, counts, rng, path, chunk_users=max(1, -(-n // 3)) if path == "per-user" else None)
