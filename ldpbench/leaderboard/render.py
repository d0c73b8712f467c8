"""Render a leaderboard (:func:`ldpbench.leaderboard.aggregate.aggregate`) four ways.

- ``table`` (terminal) and ``markdown`` (GitHub) use a layout for people: one table per
  (dataset, users, metric), one row per oracle + pipeline, one column per epsilon, each cell
  ``mean ± standard error``. The best mean of each column is marked ``*`` in ``table`` and set in
  bold in ``markdown``; a cell with failed repeats says how many. Rows of a group with too few
  repeats for a verdict at ``alpha`` carry no tie mark, and a note under the tables says so.
- ``csv`` and ``json`` stay tidy: one record per leaderboard row, every column
  (:data:`~ldpbench.leaderboard.aggregate.LEADERBOARD_COLUMNS`). JSON writes NaN as ``null`` and
  infinity as ``1e999``, and puts the store's ``schema_version`` first in every row; it is the
  format ``ldpbench compare`` reads.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import polars as pl
from tabulate import tabulate

from ldpbench.errors import UsageError
from ldpbench.results.jsoncodec import dumps_json
from ldpbench.results.versioning import stamp_leaderboard_rows
from ldpbench.stats.mcs import min_repeats
from ldpbench.stats.paired import DEFAULT_ALPHA

FORMATS = ("table", "markdown", "csv", "json")


def format_number(x: float | None, digits: int = 4) -> str:
    """``x`` to ``digits`` significant digits, scientific when very small or large."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.{digits}g}"


def format_epsilon(eps: float | None) -> str:
    if eps is None or math.isnan(eps):
        return "ε=personalized"
    return f"ε={format_number(eps)}"


def format_mean_se(mean: float, stderr: float) -> str:
    """``mean ± stderr`` (the error to 2 significant digits), or just the mean without noise."""
    if stderr is None or math.isnan(stderr) or math.isnan(mean):
        return format_number(mean)
    return f"{format_number(mean)} ± {format_number(stderr, 2)}"


def _cell(row: Mapping[str, Any], fmt: str) -> str:
    if math.isnan(row["mean"]):
        return f"failed ({row['failed']})" if row["failed"] else "—"
    text = format_mean_se(row["mean"], row["stderr"])
    if row["best"]:
        text = f"**{text}**" if fmt == "markdown" else f"{text} *"
    elif row.get("tied_best"):
        text = f"{text} ≈"
    if row["failed"]:
        text += f" ({row['failed']} failed)"
    return text


def _title(dataset: str, users: str, metric: str, gib: bool | None) -> str:
    parts = [dataset] + ([f"users {users}"] if users else [])
    direction = "" if gib is None else f" ({'higher' if gib else 'lower'} is better)"
    return " · ".join(parts) + f" · {metric}{direction}"


def _blocks(lb: pl.DataFrame, fmt: str) -> list[tuple[str, list[str], list[list[str]]]]:
    """One (title, headers, rows) per (dataset, users, metric), in order of first appearance."""
    blocks: dict[tuple[str, str, str], dict[str, Any]] = {}
    for row in lb.iter_rows(named=True):
        block = blocks.setdefault(
            (row["dataset"], row["users"], row["metric"]),
            {"gib": row["greater_is_better"], "eps": {}, "rows": {}},
        )
        eps = None if row["epsilon"] is None or math.isnan(row["epsilon"]) else row["epsilon"]
        block["eps"].setdefault(eps, len(block["eps"]))
        block["rows"].setdefault((row["oracle"], row["pipeline"]), {})[eps] = _cell(row, fmt)
    out = []
    for (dataset, users, metric), block in blocks.items():
        epsilons = list(block["eps"])
        headers = ["oracle", "pipeline"] + [format_epsilon(e) for e in epsilons]
        rows = [
            [oracle, pipeline] + [cells.get(e, "") for e in epsilons]
            for (oracle, pipeline), cells in block["rows"].items()
        ]
        out.append((_title(dataset, users, metric, block["gib"]), headers, rows))
    return out


_FOOTER = (
    "mean ± standard error over repeats; {best} marks the best mean in its column (ties all marked), "
    "≈ a row not significantly worse than it (model confidence set over paired repeats)"
)


def undecided_note(lb: pl.DataFrame, alpha: float = DEFAULT_ALPHA) -> str | None:
    """What a leaderboard cannot say: "N repeats cannot show a difference at alpha; at least M
    are needed", for the rows ranked without a tie verdict (``tied_best`` null beside a rank;
    a leaderboard older than the tie columns has neither)."""
    if "tied_best" not in lb.columns or "rank" not in lb.columns or lb.is_empty():
        return None
    undecided = lb.filter(pl.col("tied_best").is_null() & pl.col("rank").is_not_null())
    if undecided.is_empty():
        return None
    counts = sorted(set(undecided["repeats"].to_list()))
    repeats = (
        f"{counts[0]} repeat{'s' if counts[0] != 1 else ''}"
        if len(counts) == 1
        else f"{counts[0]}-{counts[-1]} repeats"
    )
    return (
        f"{repeats} cannot show a difference at alpha {alpha:g}; at least {min_repeats(alpha)} are "
        f"needed (no tie verdict for {undecided.height} row{'s' if undecided.height != 1 else ''}: "
        f"{_first_rows(undecided)})"
    )


def budgets_note(lb: pl.DataFrame) -> str | None:
    """The declared budgets of the longitudinal mechanisms (columns ``epsilon_inf``, ``epsilon_1``;
    docs/longitudinal.md): ``l-grr: ε=1 → ε∞ 1, ε1 0.5; ...``, or ``None`` when no row has them
    (every other leaderboard is printed as before)."""
    if "epsilon_1" not in lb.columns:
        return None
    rows = lb.filter(pl.col("epsilon_1").is_not_null() & pl.col("epsilon_1").is_not_nan())
    if rows.is_empty():
        return None
    seen: dict[str, dict[float | None, str]] = {}
    for r in rows.iter_rows(named=True):
        name = str(r["oracle"]).split(":", 1)[0]
        inf = r["epsilon_inf"]
        text = "none" if inf is None or math.isinf(inf) else format_number(inf)
        eps = r["epsilon"]
        seen.setdefault(name, {}).setdefault(
            eps, f"{format_epsilon(eps)} → ε∞ {text}, ε1 {format_number(r['epsilon_1'])}"
        )
    return (
        "budgets over rounds (ε∞: any number of reports of one value, none: unbounded; ε1: one report): "
        + "; ".join(f"{name}: " + ", ".join(by_eps.values()) for name, by_eps in seen.items())
    )


#: Rows a note names before it counts the rest.
_NAMED_ROWS = 3


def _first_rows(rows: pl.DataFrame) -> str:
    """``adult ε=1 grr · base mse, ... and 19 more``: the first rows of a note, by identity."""
    names = []
    for r in rows.head(_NAMED_ROWS).iter_rows(named=True):
        where = " ".join(str(x) for x in (r.get("dataset"), r.get("users") or format_epsilon(r.get("epsilon"))) if x)
        names.append(f"{where} {r.get('oracle')} · {r.get('pipeline')} {r.get('metric')}")
    more = rows.height - len(names)
    return ", ".join(names) + (f" and {more} more" if more > 0 else "")


def render(lb: pl.DataFrame, fmt: str = "table", alpha: float = DEFAULT_ALPHA) -> str:
    """Render a leaderboard (:func:`aggregate`) as ``table``, ``markdown``, ``csv`` or ``json``.

    :param alpha: the level the tie marks were computed at (the spec's ``alpha``), named in the
        note on rows too few repeats could not decide.
    """
    if fmt not in FORMATS:
        raise UsageError(f"unknown leaderboard format '{fmt}' (choose from {', '.join(FORMATS)})")
    if fmt == "csv":
        return lb.write_csv()
    if fmt == "json":
        # Still a bare list (`run --format json` prints rows only); the version rides in each row.
        return dumps_json(stamp_leaderboard_rows(lb.to_dicts()), indent=2) + "\n"
    if lb.is_empty():
        return "No results.\n"
    parts = []
    for title, headers, rows in _blocks(lb, fmt):
        align = ["left", "left"] + ["right"] * (len(headers) - 2)
        if fmt == "markdown":
            rows = [[c.replace("|", "\\|") for c in r] for r in rows]
            table = tabulate(rows, headers, tablefmt="github", disable_numparse=True, colalign=align)
            parts.append(f"### {title}\n\n{table}\n")
        else:
            table = tabulate(rows, headers, tablefmt="simple", disable_numparse=True, colalign=align)
            parts.append(f"{title}\n\n{table}\n")
    footer = _FOOTER.format(best="bold" if fmt == "markdown" else "*")
    parts.append(f"_{footer}_\n" if fmt == "markdown" else f"{footer}\n")
    budgets = budgets_note(lb)
    if budgets:
        parts.append(f"_{budgets}_\n" if fmt == "markdown" else f"{budgets}\n")
    for note in (undecided_note(lb, alpha), central_note(lb)):
        if note:
            parts.append(f"_{note}_\n" if fmt == "markdown" else f"{note}\n")
    return "\n".join(parts)


def central_note(lb: pl.DataFrame) -> str | None:
    """Under a spec's ``shuffle:`` (docs/shuffling.md): the central ε of the shuffled reports, per
    dataset and ε0 ("zipf(...) ε=1: 0.0153, ε=4: 0.17"), and the rows no bound covers, with why."""
    if "central_bound" not in lb.columns or lb["central_bound"].null_count() == lb.height:
        return None
    covered: dict[tuple[str, str], dict[str, str]] = {}
    uncovered: dict[str, list[str]] = {}
    for r in lb.iter_rows(named=True):
        bound, eps = r["central_bound"], r["central_epsilon"]
        if bound is None:
            continue
        if eps is None or math.isnan(eps):
            name = f"{r['oracle']}" + (f" (users {r['users']})" if r["users"] else "")
            if name not in uncovered.setdefault(bound, []):
                uncovered[bound].append(name)
            continue
        key = (bound, r["dataset"] + (f" users {r['users']}" if r["users"] else ""))
        covered.setdefault(key, {})[format_epsilon(r["epsilon"])] = format_number(eps)
    parts = [
        f"{where} " + ", ".join(f"{e}: {v}" for e, v in values.items()) + f" ({bound})"
        for (bound, where), values in covered.items()
    ]
    parts += [f"{', '.join(names)}: {why}" for why, names in uncovered.items()]
    return "central ε of the shuffled reports (docs/shuffling.md): " + "; ".join(parts)
