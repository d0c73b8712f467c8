"""``requires``: the plugin distributions a spec needs, each installed at a version it accepts."""

from __future__ import annotations

import importlib.metadata as md

from ldpbench.spec.validate.context import Context


def requirements(ctx: Context, data: dict) -> list[str]:
    """Each requirement as written (``ldpbench-foo>=1.0``), once it is found satisfied."""
    value = data.get("requires", [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        ctx.problem(("requires",), "'requires' must be a list of requirements such as 'ldpbench-foo>=1.0'")
        return []
    from packaging.requirements import InvalidRequirement, Requirement

    out = []
    for i, req_text in enumerate(value):
        try:
            req = Requirement(str(req_text))
        except InvalidRequirement as exc:
            ctx.problem(("requires", i), f"invalid requirement {req_text!r}: {exc}")
            continue
        try:
            version = md.version(req.name)
        except md.PackageNotFoundError:
            ctx.problem(
                ("requires", i),
                f"this spec needs the plugin distribution '{req.name}', which is not installed (pip install '{req}')",
            )
            continue
        if req.specifier and not req.specifier.contains(version, prereleases=True):
            ctx.problem(("requires", i), f"this spec needs {req}, but {req.name} {version} is installed")
            continue
        out.append(str(req))
    return out
