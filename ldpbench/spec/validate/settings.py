"""The spec's own keys: which top-level keys exist, and the plain values they hold.

Each function checks one key and returns its value, or the default after recording a problem, so
that validation goes on to the next key.
"""

from __future__ import annotations

import re
from typing import Any

from ldpbench.errors import SpecError
from ldpbench.spec.load import Document
from ldpbench.spec.timeouts import cell_timeout_problem
from ldpbench.spec.validate.context import Context
from ldpbench.spec.validate.limits import MAX_NAME_LENGTH
from ldpbench.util.suggest import closest

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
    "attacks",
    "beta",
    "fake_users",
    "targets",
)
SIMULATIONS = ("aggregate", "per-user")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def spec_mapping(doc: Document) -> dict[Any, Any]:
    """The spec's mapping of keys; anything else is refused at once (nothing more can be checked)."""
    if not isinstance(doc.data, dict):
        raise SpecError(f"{doc.where(())}: a spec must be a mapping of keys (name, datasets, ...)")
    return doc.data


def unknown_keys(ctx: Context, data: dict) -> None:
    """Every top-level key the format does not know, with a did-you-mean."""
    for key in data:
        if key not in TOP_LEVEL_KEYS:
            hint = closest(str(key), TOP_LEVEL_KEYS)
            ctx.problem((key,), f"unknown key '{key}'" + (f" — did you mean '{hint}'?" if hint else ""))


def spec_name(ctx: Context, data: dict) -> str:
    """``name``: a word that names the results folder; ``"unnamed"`` when refused."""
    name = data.get("name")
    if name is None:
        ctx.problem((), "missing key 'name'")
        return "unnamed"
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        # fullmatch: "$" would also match before a trailing newline ("abc\n").
        shown = name if not isinstance(name, str) or len(name) <= 60 else name[:60] + "..."
        ctx.problem(
            ("name",),
            f"'name' must be a word of letters, digits, '.', '_' or '-' (it names the results folder), got {shown!r}",
        )
        return "unnamed"
    if len(name) > MAX_NAME_LENGTH:
        ctx.problem(
            ("name",),
            f"'name' is {len(name)} characters long; at most {MAX_NAME_LENGTH} (it names the results folder)",
        )
        return "unnamed"
    return name


def description(ctx: Context, data: dict) -> str:
    """``description``: free text."""
    value = data.get("description", "")
    if not isinstance(value, str):
        ctx.problem(("description",), "'description' must be text")
        return ""
    return value


def whole_number(ctx: Context, data: dict, key: str, default: int, lo: int, hi: int) -> int:
    """A whole number in ``[lo, hi]`` (``seed``, ``repeats``)."""
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        ctx.problem((key,), f"'{key}' must be a whole number, got {value!r}")
        return default
    if not lo <= value <= hi:
        ctx.problem((key,), f"'{key}' must be between {lo} and {hi:,}, got {value:,}")
        return default
    return value


def alpha_level(ctx: Context, data: dict) -> float:
    """``alpha``: the level of the leaderboard's paired tests against the best (``tied_best``)."""
    from ldpbench.stats.paired import DEFAULT_ALPHA

    value = data.get("alpha", DEFAULT_ALPHA)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        ctx.problem(("alpha",), f"'alpha' must be a number between 0 and 1 (exclusive), got {value!r}")
        return DEFAULT_ALPHA
    return float(value)


def simulation_mode(ctx: Context, data: dict) -> str:
    """``simulation``: ``aggregate`` (the default) or ``per-user``."""
    simulation = data.get("simulation", "aggregate")
    if simulation not in SIMULATIONS:
        hint = closest(str(simulation), SIMULATIONS)
        ctx.problem(
            ("simulation",),
            f"'simulation' must be one of {', '.join(SIMULATIONS)}, got {simulation!r}"
            + (f" — did you mean '{hint}'?" if hint else ""),
        )
        return "aggregate"
    return simulation


def cell_timeout(ctx: Context, data: dict) -> Any:
    """``cell_timeout``: seconds per cell as the spec gives them, or None (no limit, or refused)."""
    value = data.get("cell_timeout")
    if (timeout_problem := cell_timeout_problem(value)) is not None:
        ctx.problem(("cell_timeout",), timeout_problem)
        return None
    return value


def plugins_dir_is_a_path(ctx: Context, data: dict) -> None:
    """``plugins_dir``: a path, if given."""
    # Loaded (or refused) before validation, by whoever built the plugins (spec_plugins_dir).
    if data.get("plugins_dir") is not None and not isinstance(data["plugins_dir"], str):
        ctx.problem(("plugins_dir",), "'plugins_dir' must be a path")
