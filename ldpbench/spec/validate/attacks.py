"""The poisoning keys (docs/poisoning.md): ``attacks``, ``beta`` or ``fake_users``, ``targets``.

``attacks`` lists attack entries (``none`` for an unattacked cell beside them); every attack is
crossed with every ``beta`` (or ``fake_users``) value, and every oracle of the spec with every
setting. An attack on a mechanism it does not define (a protocol, an oracle outside its tags'
``oracles``), or with personalized budgets, is refused here; what depends on the dataset (targets
inside the domain, one item per user) in :func:`attack_dataset_facts`.
"""

from __future__ import annotations

import math
from typing import Any

from ldpbench.boundary.contain import PluginCodeFailed, contained_call
from ldpbench.spec.model import TARGET_SELECTIONS, Budget, Entry, Poison, Targets
from ldpbench.spec.validate.context import Context
from ldpbench.spec.validate.entry import entry

#: The keys that only make sense with ``attacks``.
POISON_KEYS = ("beta", "fake_users", "targets")
#: What an attack's ``oracles`` holds when it is defined for every oracle (honest perturbation).
ANY_ORACLE = "*"
#: The entry of ``attacks`` that stands for an unattacked cell.
NO_ATTACK = "none"
_TARGET_KEYS = ("count", "select", "items")
#: At most this many fake users (as many as the largest population a spec may draw).
MAX_FAKE_USERS = 10**9


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def poison_settings(ctx: Context, data: dict) -> list[Poison]:
    """The spec's poisoning settings, attack-major (``attacks`` x ``beta``/``fake_users``); empty
    when it has no ``attacks``."""
    if "attacks" not in data:
        for key in POISON_KEYS:
            if key in data:
                ctx.problem((key,), f"'{key}' needs 'attacks' (docs/poisoning.md)")
        return []
    raw = _as_list(data["attacks"])
    if not raw:
        ctx.problem(("attacks",), "'attacks' must be a non-empty list of attack names or {name: {params}} entries")
        return []
    attacks: list[Entry | None] = []
    listed_path = ("attacks",) if isinstance(data["attacks"], list) else ()
    for i, item in enumerate(raw):
        path = ("attacks", i) if listed_path else ("attacks",)
        if item == NO_ATTACK:
            attacks.append(None)
            continue
        e = entry(ctx, item, path, "attack")
        if e is not None:
            attacks.append(e)
    sizes = _sizes(ctx, data)
    targets = _targets(ctx, data)
    out: list[Poison] = []
    for attack in attacks:
        if attack is None:  # the control: no fake users, the same targets
            out.append(Poison(attack=None, targets=targets))
            continue
        for beta, m in sizes:
            out.append(Poison(attack=attack, targets=targets, beta=beta, fake_users=m))
    return out


def _sizes(ctx: Context, data: dict) -> list[tuple[float | None, int | None]]:
    """``beta`` values in (0, 1), or ``fake_users`` counts >= 1: exactly one of the two keys."""
    if ("beta" in data) == ("fake_users" in data):
        ctx.problem(
            ("attacks",),
            "an attack needs exactly one of 'beta' (fraction of fake users among all reports) "
            "or 'fake_users' (their number)",
        )
        return []
    key = "beta" if "beta" in data else "fake_users"
    values = _as_list(data[key])
    out: list[tuple[float | None, int | None]] = []
    if not values:
        ctx.problem((key,), f"'{key}' must be a number or a non-empty list of numbers")
    for i, v in enumerate(values):
        path = (key, i) if isinstance(data[key], list) else (key,)
        if key == "beta":
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not (0 < float(v) < 1) or math.isnan(v):
                ctx.problem(path, f"beta must be a number strictly between 0 and 1, got {v!r}")
                continue
            out.append((float(v), None))
        else:
            if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= MAX_FAKE_USERS:
                ctx.problem(path, f"fake_users must be a whole number from 1 to {MAX_FAKE_USERS:,}, got {v!r}")
                continue
            out.append((None, int(v)))
    if len({(b, m) for b, m in out}) != len(out):
        ctx.problem((key,), f"'{key}' lists a value twice")
    return out


def _targets(ctx: Context, data: dict) -> Targets:
    """``targets: {count: r, select: random|least-frequent|given, items: [...]}``; default one
    random target."""
    raw = data.get("targets", {})
    if not isinstance(raw, dict):
        ctx.problem(
            ("targets",), "'targets' must be a mapping {count: r, select: random|least-frequent|given, items: [...]}"
        )
        return Targets(1)
    for key in raw:
        if key not in _TARGET_KEYS:
            ctx.problem(("targets", key), f"unknown key '{key}' in 'targets'; expected {', '.join(_TARGET_KEYS)}")
    select = raw.get("select", "given" if "items" in raw else "random")
    if select not in TARGET_SELECTIONS:
        ctx.problem(
            ("targets", "select"), f"targets select must be one of {', '.join(TARGET_SELECTIONS)}, got {select!r}"
        )
        return Targets(1)
    if select == "given":
        items = raw.get("items")
        if (
            not isinstance(items, list)
            or not items
            or not all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in items)
            or len(set(items)) != len(items)
        ):
            ctx.problem(
                ("targets", "items"),
                "targets select 'given' needs 'items': a non-empty list of distinct items (whole numbers >= 0)",
            )
            return Targets(1)
        if "count" in raw and raw["count"] != len(items):
            ctx.problem(
                ("targets", "count"), f"targets count {raw['count']!r} differs from the {len(items)} items given"
            )
        return Targets(len(items), "given", tuple(sorted(items)))
    if "items" in raw:
        ctx.problem(("targets", "items"), f"'items' goes with select 'given', not '{select}'")
    count = raw.get("count", 1)
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        ctx.problem(("targets", "count"), f"targets count must be a whole number >= 1, got {count!r}")
        return Targets(1, select)
    return Targets(count, select)


def attack_problems(ctx: Context, poisons: list[Poison], mechanisms: list[Entry], budgets: list[Budget]) -> None:
    """Each attack against each mechanism of the spec: an oracle its tags name, one budget each."""
    if not poisons:
        return
    seen: set[str] = set()
    raw = ctx.doc.data.get("attacks") if isinstance(ctx.doc.data, dict) else None
    for poison in poisons:
        if poison.attack is None or poison.attack.label in seen:
            continue
        seen.add(poison.attack.label)
        path = _attack_path(raw, poison.attack.name)
        try:
            who = f"attack '{poison.attack.name}'"
            built = contained_call(
                who,
                "its constructor",
                lambda p=poison: ctx.plugins.create("attack", p.attack.name, p.attack.param_dict),
            )
            tags = contained_call(who, "tags()", built.tags)
            supported, protocols = tuple(tags.oracles), tuple(tags.protocols)
        except PluginCodeFailed as exc:
            ctx.problem(path, str(exc))
            continue
        for i, mech in enumerate(mechanisms):
            if mech.kind == "protocol" and mech.name in protocols:
                continue
            if mech.kind != "oracle" or (ANY_ORACLE not in supported and mech.name not in supported):
                what = f"{mech.kind} '{mech.name}'"
                ctx.problem(
                    path,
                    f"attack '{poison.attack.name}' is not defined for {what} (oracles: line "
                    f"{ctx.doc.line(('oracles', i))}); it is defined for "
                    + ("every oracle" if ANY_ORACLE in supported else f"the oracles {', '.join(supported)}")
                    + (f" and the protocols {', '.join(protocols)}" if protocols else " (no protocol)"),
                )
    if any(b.groups for b in budgets):
        ctx.problem(("attacks",), "attacks and personalized budgets ('users') cannot be combined")


def _attack_path(raw: Any, name: str) -> tuple[Any, ...]:
    if isinstance(raw, list):
        for i, item in enumerate(raw):
            if item == name or (isinstance(item, dict) and name in item):
                return ("attacks", i)
    return ("attacks",)


def attack_dataset_facts(
    ctx: Context, poisons: list[Poison], label: str, where: tuple[Any, ...], d: int, record: str, enumerable: bool
) -> None:
    """What an attack needs of a dataset: one item per user over an enumerable domain, and its
    targets inside ``[0, d)``."""
    if not poisons:
        return
    if record != "item" or not enumerable:
        ctx.problem(
            where, f"dataset '{label}': attacks need one item per user over an enumerable domain (record '{record}')"
        )
        return
    targets = poisons[0].targets
    if targets.select == "given" and max(targets.items) >= d:
        ctx.problem(("targets", "items"), f"target item {max(targets.items)} lies outside dataset '{label}' (d = {d})")
    elif targets.count > d:
        ctx.problem(("targets", "count"), f"{targets.count} targets asked of dataset '{label}' with d = {d} items")


def poisoning_metric_problems(ctx: Context, data: dict, metrics: list[Entry], poisons: list[Poison]) -> None:
    """A metric that scores a poisoned cell (``MetricTags.poisoning``: the gain) needs ``attacks``."""
    if poisons:
        return
    raw = data.get("metrics")
    for i, metric in enumerate(metrics):
        who = f"metric '{metric.name}'"
        try:
            built = contained_call(
                who, "its constructor", lambda m=metric: ctx.plugins.create("metric", m.name, m.param_dict)
            )
            needs = bool(contained_call(who, "tags()", built.tags).poisoning)
        except PluginCodeFailed:
            continue  # its rows fail in the run, as any metric's whose code fails
        if needs:
            where = ("metrics", i) if isinstance(raw, list) else ("metrics",)
            ctx.problem(where, f"{who} scores a poisoned cell: the spec needs 'attacks' (docs/poisoning.md)")
