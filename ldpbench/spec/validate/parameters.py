"""The parameters of an entry, each checked for what its :class:`~ldpbench.params.Param` declares.

A parameter may come only from the user (``user_only``), name another plugin (``plugin_kind``),
hold the parameters of a sibling's plugin (``params_of``) or name a file (``path``).
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

from ldpbench.errors import UnknownPluginError, UsageError
from ldpbench.loading.registry import PluginInfo
from ldpbench.params import Param
from ldpbench.spec.validate.context import Context
from ldpbench.util.safeio import check_regular_file
from ldpbench.util.suggest import closest


def checked_params(
    ctx: Context, info: PluginInfo, name: str, given: dict[str, Any], ppath: tuple[Any, ...]
) -> list[tuple[str, str]] | None:
    """``(name, resolved path)`` of every file parameter given; None after the first problem."""
    resolved_paths: list[tuple[str, str]] = []
    for p in info.params:
        if p.name not in given:
            continue
        problem = _declared_problem(ctx, info, name, p, given)
        if problem is None and p.path and isinstance(given[p.name], str):
            target = _readable_file(ctx.path.parent, p.name, given[p.name])
            if isinstance(target, Path):
                resolved_paths.append((p.name, str(target)))
            else:
                problem = target
        if problem is not None:
            ctx.problem(ppath + (p.name,), problem)
            return None
    return resolved_paths


def _declared_problem(ctx: Context, info: PluginInfo, name: str, p: Param, given: dict[str, Any]) -> str | None:
    """The problem with the given ``p``: from a spec though user-only, an unknown plugin, or
    parameters its sibling's plugin does not take."""
    if p.user_only and not ctx.trust_user_only:
        return (
            f"'{p.name}' of {info.kind} '{name}' may come only from you, not from a spec: it says where "
            f"to connect, and what comes back can run code here. Give it on the command line"
            + (" (--executor " + name + " --executor-param " + p.name + "=VALUE)" if info.kind == "executor" else "")
            + ", or pass --trust-spec-params if you trust this spec"
        )
    if p.plugin_kind:
        try:
            ctx.plugins.get(p.plugin_kind, given[p.name])
        except UnknownPluginError as exc:
            return f"'{p.name}': {exc}"
    if p.params_of:
        return params_of_problem(ctx, info, p, given)
    return None


def params_of_problem(ctx: Context, info: PluginInfo, p: Param, given: dict[str, Any]) -> str | None:
    """The problem with ``given[p.name]``, a mapping of the parameters of the plugin named by
    the sibling parameter ``p.params_of`` (calibrate's ``prior_params`` for its ``prior``)."""
    value = given.get(p.name)
    if value is None:
        return None
    sibling = next((q for q in info.params if q.name == p.params_of), None)
    if sibling is None or sibling.plugin_kind != "prior":
        return None
    family = given.get(sibling.name, sibling.default)
    try:
        names = tuple(ctx.plugins.get("prior", family).cls.parameter_names)
    except UnknownPluginError:
        return None  # reported for the sibling
    unknown = [str(k) for k in value if k not in names]
    missing = [k for k in names if k not in value]
    if unknown or missing:
        text = f"'{p.name}' of prior '{family}' must give exactly {', '.join(names) or 'nothing'}"
        if unknown:
            hint = closest(unknown[0], list(names))
            text += f"; unknown: {', '.join(unknown)}" + (f" — did you mean '{hint}'?" if hint else "")
        if missing:
            text += f"; missing: {', '.join(missing)}"
        return text
    for k, v in value.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            return f"'{p.name}': '{k}' must be a finite number, got {v!r}"
    return None


def _readable_file(spec_dir: Path, key: str, written: str) -> Path | str:
    """The file parameter ``key`` as written, resolved against the spec's folder; or the problem."""
    if "\0" in written:
        return f"'{key}': a path cannot contain a NUL character"
    target = (spec_dir / os.path.expanduser(written)).resolve()
    if not target.exists():
        return f"'{key}': no such file: {written} (looked for {target})"
    try:
        # stat only, never open: a FIFO would block, /dev/zero would never end.
        check_regular_file(target, f"'{key}':")
    except UsageError as exc:
        return str(exc)
    if not os.access(target, os.R_OK):
        return f"'{key}': {target} is not readable"
    return target
