"""The keys that list plugins: ``datasets``, ``oracles``, ``metrics`` and ``executor``.

Each is a list of entries (:mod:`ldpbench.spec.validate.entry`), or one entry alone; ``pipelines``,
a list of chains, is :mod:`ldpbench.spec.validate.pipelines`.
"""

from __future__ import annotations

from ldpbench.spec.capabilities import default_names
from ldpbench.spec.model import DatasetEntry, Entry
from ldpbench.spec.validate.context import Context
from ldpbench.spec.validate.entry import entry


def entries(
    ctx: Context, data: dict, key: str, kind: str | tuple[str, ...], required: bool = False, default: list | None = None
) -> list[Entry | None]:
    """The entries listed under ``key``, None for each one refused."""
    if key not in data:
        if required:
            ctx.problem((), f"missing key '{key}'")
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
            names = sorted(n for k in kinds for n in ctx.plugins.registry(k).names())
            message += f"; available: {', '.join(names)}"
        ctx.problem((key,), message)
        return []
    return [entry(ctx, item, (key, i), kind) for i, item in enumerate(value)]


def dataset_entries(ctx: Context, data: dict) -> list[DatasetEntry]:
    """``datasets``, each remembered where it sits in the spec (for the dataset facts)."""
    datasets = []
    for i, e in enumerate(entries(ctx, data, "datasets", "dataset", required=True)):
        if e is not None:
            ctx.dataset_paths[id(e)] = ("datasets", i) if isinstance(data.get("datasets"), list) else ("datasets",)
            datasets.append(e)
    return datasets  # type: ignore[return-value]


def oracle_entries(ctx: Context, data: dict) -> list[Entry]:
    """``oracles``: oracles and protocols; each oracle remembered where it sits (for the oracle facts)."""
    listed = entries(ctx, data, "oracles", ("oracle", "protocol"), required=True)
    ctx.oracle_paths = [
        (("oracles", i, e.name), e) for i, e in enumerate(listed) if e is not None and e.kind == "oracle"
    ]
    return [e for e in listed if e is not None]


def metric_entries(ctx: Context, data: dict) -> list[Entry]:
    """``metrics``, by default those the metric plugins declare ``default``."""
    default = default_names(ctx.plugins, "metric")
    return [e for e in entries(ctx, data, "metrics", "metric", default=default) if e is not None]


def executor_entry(ctx: Context, data: dict) -> Entry | None:
    """``executor``: one entry, or None for the default."""
    if "executor" not in data:
        return None
    return entry(ctx, data["executor"], ("executor",), "executor")
