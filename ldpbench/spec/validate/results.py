"""What each mechanism returns against what takes it, and the domain each needs.

A mechanism's result is a frequency vector (every oracle; a protocol by default) or identified
items (a heavy-hitter protocol, its tags' ``result``). Every metric declares the results it scores
and every post-processor those it takes (their tags' ``results``): a spec pairing one with a
mechanism of another result kind is refused here, at the metric's or the step's line, naming the
nearest metric that does score it. A mechanism that enumerates its domain (every oracle; a
protocol whose tags say ``enumerates_domain``) is refused on a dataset whose domain is not
enumerable (:func:`domain_problems`, run once the datasets are loaded), and one whose tags do not
take the shape of the dataset's records (:func:`record_problems`). docs/data-model.md.
"""

from __future__ import annotations

from typing import Any

from ldpbench.boundary.contain import PluginCodeFailed, contained_call
from ldpbench.errors import ParamError
from ldpbench.spec.capabilities import _entry_path, _step_path
from ldpbench.spec.model import Entry, Pipeline
from ldpbench.spec.validate.context import Context
from ldpbench.types import Domain
from ldpbench.types.domain import FREQUENCIES
from ldpbench.util.suggest import closest


def mechanism_result(ctx: Context, mech: Entry) -> str | None:
    """The result kind of a mechanism (``None`` when its tags cannot be read here)."""
    if mech.kind == "oracle":
        return FREQUENCIES
    tags = _protocol_tags(ctx, mech)
    return tags.result if tags is not None else None


def _tags(ctx: Context, kind: str, name: str, label: str, params: dict[str, Any]) -> Any:
    """A plugin's tags, built and read under the guards every validation-time plugin call runs
    under (boundary/contain.py: its time limit, exits contained, the process backstop); ``None``
    when it fails, which the step that builds it reports (once: the failures are collected)."""
    who = f"{kind} '{label}'"
    try:
        plugin = contained_call(who, "its constructor", lambda: ctx.plugins.create(kind, name, params))
        return contained_call(who, "tags()", plugin.tags)
    except (PluginCodeFailed, ParamError):
        return None


def _protocol_tags(ctx: Context, mech: Entry) -> Any:
    return _tags(ctx, "protocol", mech.name, mech.label, mech.param_dict)


def _takes(ctx: Context, kind: str, entry: Entry) -> tuple[str, ...] | None:
    tags = _tags(ctx, kind, entry.name, entry.label, entry.param_dict)
    return None if tags is None else tuple(tags.results)


def result_pairings(
    ctx: Context, data: dict, mechanisms: list[Entry], pipelines: list[Pipeline], metrics: list[Entry]
) -> None:
    """Every metric and post-processor step takes the result of every mechanism of the spec."""
    results: dict[str, str] = {}
    for mech in mechanisms:
        result = mechanism_result(ctx, mech)
        if result is not None:
            results.setdefault(result, f"{mech.kind} '{mech.name}'")
    if not results:
        return
    raw_metrics = data.get("metrics")
    for i, metric in enumerate(metrics):
        takes = _takes(ctx, "metric", metric)
        if takes is None:
            continue
        for result, who in results.items():
            if result in takes:
                continue
            where = ("metrics", i) if isinstance(raw_metrics, list) else ("metrics",)
            ctx.problem(
                where,
                f"metric '{metric.name}' scores {_kinds(takes)}, but {who} returns {result}{_hint(ctx, metric.name, result)}",
            )
    for pipeline in pipelines:
        for step in pipeline.steps:
            takes = _takes(ctx, "postprocessor", step)
            if takes is None:
                continue
            for result, who in results.items():
                if result not in takes:
                    ctx.problem(
                        _step_path(data.get("pipelines"), step.name),
                        f"post-processor '{step.name}' takes {_kinds(takes)}, but {who} returns {result}: "
                        f"use the pipeline 'base'",
                    )


def _kinds(takes: tuple[str, ...]) -> str:
    return " and ".join(takes) if takes else "no result"


def _hint(ctx: Context, name: str, result: str) -> str:
    """``; did you mean 'hh-f1'?``: the nearest installed metric that scores ``result``."""
    scorers = []
    for info in ctx.plugins.registry("metric"):
        tags = _tags(ctx, "metric", info.name, info.name, {})  # one that cannot be built bare suggests nothing
        if tags is not None and result in tags.results:
            scorers.append(info.name)
    if not scorers:
        return ""
    # The fuzzy match, else one whose name holds a word of the given one ('mse' -> 'identified-mse').
    words = set(name.split("-"))
    best = closest(name, scorers) or next((s for s in sorted(scorers) if words & set(s.split("-"))), None)
    listed = f"metrics scoring {result}: {', '.join(sorted(scorers))}"
    return f"; did you mean '{best}'? ({listed})" if best else f" ({listed})"


def enumerates(ctx: Context, mech: Entry) -> bool:
    """Whether the mechanism lists every item of its domain (every oracle does)."""
    if mech.kind == "oracle":
        return True
    tags = _protocol_tags(ctx, mech)
    return True if tags is None else bool(tags.enumerates_domain)


def records_taken(ctx: Context, mech: Entry) -> tuple[str, ...]:
    """The record shapes a mechanism takes: one item per user for every oracle; a protocol's tags."""
    if mech.kind == "oracle":
        return ("item",)
    tags = _protocol_tags(ctx, mech)
    return ("item",) if tags is None else tuple(tags.records)


#: What a user holds, by record shape, as the refusal says it.
_RECORD_PHRASES = {
    "item": "one item",
    "set": "a set of items",
    "tuple": "a tuple of attributes",
    "sequence": "a sequence of items over rounds",
}


def record_problems(ctx: Context, data: dict, dataset_label: str, record: str, mechanisms: list[Entry]) -> None:
    """Every mechanism takes the shape of the dataset's users' records, else it is refused at its line."""
    for mech in mechanisms:
        takes = records_taken(ctx, mech)
        if record not in takes:
            ctx.problem(
                _entry_path(data, "oracles", mech.name),
                f"{mech.kind} '{mech.name}' takes records of shape {' and '.join(takes)}, but the users of "
                f"dataset '{dataset_label}' each hold {_RECORD_PHRASES.get(record, f'a {record}')}",
            )


def domain_problems(ctx: Context, data: dict, dataset_label: str, domain: Domain, mechanisms: list[Entry]) -> None:
    """On a domain that is not enumerable, every mechanism that enumerates is refused at its line."""
    if domain.is_enumerable:
        return
    allowed = sorted(
        info.name for info in ctx.plugins.registry("protocol") if not enumerates(ctx, Entry("protocol", info.name))
    )
    for mech in mechanisms:
        if not enumerates(ctx, mech):
            continue
        use = f"; use a method that lists only candidates: {', '.join(allowed)}" if allowed else ""
        ctx.problem(
            _entry_path(data, "oracles", mech.name),
            f"{mech.kind} '{mech.name}' enumerates its domain, but dataset '{dataset_label}' holds "
            f"{domain.describe()} ({domain.cardinality:,} items), which no method may enumerate{use}",
        )
