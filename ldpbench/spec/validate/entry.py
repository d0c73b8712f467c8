"""One plugin entry of a spec, ``name`` or ``{name: {params}}``, checked into an :class:`Entry`.

The entry must name an installed plugin of the kind its key lists, with parameters the plugin
accepts (:mod:`ldpbench.spec.validate.parameters` for what a parameter declares of itself).
"""

from __future__ import annotations

from typing import Any

from ldpbench.boundary.contain import PluginCodeFailed, contained_call
from ldpbench.errors import ParamError, UnknownPluginError
from ldpbench.loading.identity import entry_version
from ldpbench.loading.registry import PluginInfo
from ldpbench.spec.model import DatasetEntry, Entry
from ldpbench.spec.validate.context import Context
from ldpbench.spec.validate.limits import MAX_USERS
from ldpbench.spec.validate.parameters import checked_params
from ldpbench.util.suggest import closest


def entry(ctx: Context, item: Any, path: tuple[Any, ...], kinds: str | tuple[str, ...]) -> Entry | None:
    """The entry ``item``, at ``path``, of a plugin of one of ``kinds``; None after a problem."""
    kinds = (kinds,) if isinstance(kinds, str) else kinds
    written = _name_and_params(ctx, item, path, " or ".join(kinds))
    if written is None:
        return None
    name, params, ppath = written
    info = _plugin_named(ctx, name, path, kinds)
    if info is None:
        return None
    params = dict(params)
    sample = _pop_sample(ctx, info, params, ppath)
    try:
        resolved = info.resolve_params(params)
    except ParamError as exc:
        ctx.problem(ppath + ((exc.key,) if exc.key else ()), str(exc))
        return None
    given = dict(resolved.given)
    if _too_large(ctx, given, ppath):
        return None
    resolved_paths = checked_params(ctx, info, name, given, ppath)
    ordered = tuple((k, given[k]) for k in params if k in given)
    label = Entry(info.kind, name, ordered).label  # as messages name it: vf-pp(fault=sleep)
    if resolved_paths is None or not _builds_alone(ctx, info, label, {**params, **dict(resolved_paths)}, ppath):
        return None
    paths = tuple(resolved_paths)
    version, code = entry_version(ctx.plugins, info, resolved.values)  # plugins named by params too
    if info.kind == "dataset":
        return DatasetEntry(info.kind, name, ordered, version, paths, sample=sample, code=code)
    return Entry(info.kind, name, ordered, version, paths, code=code)


def _name_and_params(
    ctx: Context, item: Any, path: tuple[Any, ...], kind_text: str
) -> tuple[str, dict[Any, Any], tuple[Any, ...]] | None:
    """``(name, parameters as written, path of the parameters)``; None after a problem."""
    if isinstance(item, str):
        return item, {}, path
    if not isinstance(item, dict) or len(item) != 1:
        ctx.problem(path, f"expected a {kind_text} name or {{name: {{params}}}}, got {item!r}")
        return None
    name, params = next(iter(item.items()))
    if params is None:
        params = {}
    if not isinstance(name, str):
        ctx.problem(path, f"expected a {kind_text} name, got {name!r}")
        return None
    if not isinstance(params, dict):
        ctx.problem(path + (name,), f"parameters of '{name}' must be a mapping, got {params!r}")
        return None
    return name, params, path + (name,)


def _plugin_named(ctx: Context, name: str, path: tuple[Any, ...], kinds: tuple[str, ...]) -> PluginInfo | None:
    """The installed plugin ``name`` of the first of ``kinds`` that has one; else a did-you-mean."""
    for kind in kinds:
        if name in ctx.plugins.registry(kind):
            return ctx.plugins.get(kind, name)
    known = [n for kind in kinds for n in ctx.plugins.registry(kind).names()]
    hint = closest(name, known)
    ctx.problem(path, str(UnknownPluginError(" or ".join(kinds), name, hint, known)) + ctx.plugins.broken_note())
    return None


def _pop_sample(ctx: Context, info: PluginInfo, params: dict[Any, Any], ppath: tuple[Any, ...]) -> int | None:
    """A dataset's ``sample``, taken out of ``params`` (it is the harness's, not the plugin's)."""
    if info.kind != "dataset" or "sample" not in params:
        return None
    sample = params.pop("sample")
    if isinstance(sample, bool) or not isinstance(sample, int) or not 1 <= sample <= MAX_USERS:
        ctx.problem(
            ppath + ("sample",),
            f"'sample' must be a number of users between 1 and {MAX_USERS:,}, got {sample!r}",
        )
        return None
    return sample


def _too_large(ctx: Context, given: dict[str, Any], ppath: tuple[Any, ...]) -> bool:
    """Whether a whole number given is beyond any size (a problem is recorded if so)."""
    for key, value in given.items():
        # No size in a benchmark is this large; refuse it here rather than let a plugin try
        # to allocate it (d: 1e12) or a loop run for ever.
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_USERS:
            ctx.problem(ppath + (key,), f"'{key}' is too large: {value:,} (at most {MAX_USERS:,})")
            return True
    return False


def _builds_alone(ctx: Context, info: PluginInfo, label: str, given: dict[Any, Any], ppath: tuple[Any, ...]) -> bool:
    """Whether a metric or post-processor can be built from ``given`` (a problem is recorded if not)."""
    if info.kind not in ("metric", "postprocessor"):
        return True
    # Built from their parameters alone, cheaply: values a constructor refuses together
    # (em-murakami's alpha grid upside down, l1's top: 1 with rescale: both) are reported
    # here, at their line, rather than as failed cells of the run.
    try:
        contained_call(
            f"{info.kind} '{label}'", "its constructor", lambda: ctx.plugins.create(info.kind, info.name, given)
        )
    except ParamError as exc:
        ctx.problem(ppath + ((exc.key,) if exc.key else ()), str(exc))
        return False
    except PluginCodeFailed:
        return True  # the plugin's own failure, recorded: its cells fail in the run
    return True
