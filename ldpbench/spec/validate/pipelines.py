"""``pipelines``: the post-processing chains, each a post-processor or a list of them run in turn."""

from __future__ import annotations

from ldpbench.spec.capabilities import default_names
from ldpbench.spec.model import Pipeline
from ldpbench.spec.validate.context import Context
from ldpbench.spec.validate.entry import entry


def pipelines(ctx: Context, data: dict) -> list[Pipeline]:
    """Every chain listed once; by default the first post-processor the plugins declare ``default``."""
    value = data["pipelines"] if "pipelines" in data else default_names(ctx.plugins, "postprocessor")[:1]
    if not isinstance(value, list) or not value:
        ctx.problem(("pipelines",), "'pipelines' must be a non-empty list (a list inside it is a chain)")
        return []
    out = []
    labels: dict[str, int] = {}
    for i, item in enumerate(value):
        chain = item if isinstance(item, list) else [item]
        if not chain:
            ctx.problem(("pipelines", i), "an empty chain")
            continue
        steps = [
            entry(ctx, step, ("pipelines", i, j) if isinstance(item, list) else ("pipelines", i), "postprocessor")
            for j, step in enumerate(chain)
        ]
        if any(s is None for s in steps):
            continue
        pipeline = Pipeline(tuple(steps))  # type: ignore[arg-type]
        if pipeline.label in labels:
            ctx.problem(("pipelines", i), f"pipeline '{pipeline.label}' is listed twice")
            continue
        labels[pipeline.label] = i
        out.append(pipeline)
    return out
