"""What a spec asks of its plugins, checked against what their tags declare.

A spec can name plugins that exist and take valid parameters, yet ask for something one of them
cannot do: aggregate simulation (the default) of an oracle without an aggregate path, an
EM-family post-processor (``requires_channel``) after an oracle without a finite report space,
``ibu`` (``requires_likelihood``) after an oracle whose aggregate has no declared likelihood
(neither a report histogram nor ``bernoulli_support`` counts), ``mle-rr``
(``requires_randomized_response``) after an oracle whose channel is not randomized response, or
with personalized budgets, or a step that reads a pure protocol's p*, q* (``requires_pure``) after
one that sums real-valued reports.
Without this check every cell of such a spec would fail at run time; here the spec is refused by
``ldpbench validate`` / ``run`` with ``FILE:LINE`` at the plugin's entry, naming the missing
capability. Capabilities are read from :meth:`~ldpbench.types.Oracle.tags` only, as the engine
reads them (:func:`ldpbench.engine.simulate.simulate`), so the two cannot disagree.

The spec's defaults (the metrics and the pipeline of a spec that lists none) are declared by the
plugins too (their ``default`` tag), so the core names no plugin.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

from ldpbench.boundary.contain import PluginCodeFailed, contained_call
from ldpbench.errors import ParamError
from ldpbench.loading.manager import Plugins
from ldpbench.spec.model import Budget, Entry, Pipeline
from ldpbench.types import Oracle, OracleTags, PostProcessorTags

#: The domain size at which an oracle is built to read its tags (the dataset is not loaded at
#: validation time; tags that depend on ``d``, such as ``output_table``, are not checked here).
PROBE_DOMAIN = 16

Problem = tuple[tuple[Any, ...], str]


def capability_problems(
    plugins: Plugins,
    data: dict[str, Any],
    simulation: str,
    mechanisms: Sequence[Entry],
    pipelines: Sequence[Pipeline],
    budgets: Sequence[Budget],
) -> list[Problem]:
    """``(path in the spec, message)`` for every capability the spec needs and a plugin lacks."""
    problems: list[Problem] = []
    epsilon = _probe_epsilon(budgets)
    personalized = any(b.groups for b in budgets)
    for mech in mechanisms:
        if mech.kind == "protocol":
            problems.extend(_protocol_problems(plugins, data, simulation, mech))
            problems.extend(_protocol_step_problems(plugins, data, mech, pipelines))
        if mech.kind != "oracle":
            continue
        where = _entry_path(data, "oracles", mech.name)
        try:
            oracle = _probe_oracle(plugins, mech, epsilon)
        except ParamError as exc:
            # A value the spec gave that the constructor refuses (pgr's q must be a prime): report
            # it here, at its line, rather than as failed cells of the run.
            problems.append((_param_path(data, where, exc.key), str(exc)))
            continue
        if oracle is None:
            continue
        try:
            tags = contained_call(f"oracle '{mech.name}'", "tags()", oracle.tags)
        except PluginCodeFailed:
            continue  # recorded; its cells fail in the run
        if simulation == "aggregate" and not tags.aggregate:
            said = "'simulation: aggregate'" if "simulation" in data else "the default 'simulation: aggregate'"
            problems.append(
                (
                    where,
                    (
                        f"oracle '{mech.name}' has no aggregate path (it implements neither sample_support_counts "
                        f"nor sample_report_histogram), but this spec uses {said}: set 'simulation: per-user'"
                    ),
                )
            )
        for path, step in _steps(data, pipelines):
            info = plugins.get("postprocessor", step.name)
            who = f"postprocessor '{step.label}'"
            try:
                built = contained_call(
                    who,
                    "its constructor",
                    lambda step=step: plugins.create("postprocessor", step.name, step.param_dict),
                )
                needs = contained_call(who, "tags()", built.tags)
            except Exception:  # noqa: BLE001 - a failing constructor is recorded and reported by the run
                continue
            message = _missing(info.name, mech.name, oracle, tags, needs, simulation, personalized)
            if message:
                if "use '" not in message and "set 'simulation" not in message:
                    message += _alternative(
                        plugins, info.name, needs, mech.name, oracle, tags, simulation, personalized
                    )
                problems.append((path, message))
    return problems


def _one_item_reports(oracle: Oracle) -> bool:
    """Whether every report of ``oracle`` supports exactly one item: p* + (d - 1) q* = 1 (GRR)."""
    try:
        p, q = float(oracle.p_star), float(oracle.q_star)
    except Exception:  # noqa: BLE001 - plugin code: a cell that runs it reports the failure
        return False
    return abs(p + (oracle.d - 1) * q - 1.0) <= 1e-9


def _missing(
    step: str,
    name: str,
    oracle: Oracle,
    tags: OracleTags,
    needs: PostProcessorTags,
    simulation: str,
    personalized: bool,
) -> str | None:
    """Why post-processor ``step`` cannot follow oracle ``name`` in this spec (``None``: it can)."""
    if needs.requires_pure and tags.real_valued_counts:
        return (
            f"post-processor '{step}' needs a pure oracle's p* and q*, but oracle '{name}' "
            f"aggregates real-valued reports (its tags: real_valued_counts = True)"
        )
    if needs.requires_reports:
        if not tags.support_matrix:
            return (
                f"post-processor '{step}' needs each report's support, but oracle '{name}' gives none "
                f"(its tags: support_matrix = False)"
            )
        if simulation != "per-user":
            return (
                f"post-processor '{step}' needs each report's support, which only the per-user path "
                f"keeps: set 'simulation: per-user'"
            )
    if needs.requires_itemset_reports and _one_item_reports(oracle):
        return (
            f"post-processor '{step}' mines itemsets of the reports' supports, but every report of "
            f"oracle '{name}' supports exactly one item (p* + (d - 1) q* = 1)"
        )
    histogram = tags.finite_output and (simulation == "per-user" or tags.aggregate_histogram)
    if needs.requires_channel or needs.requires_randomized_response:
        if not tags.finite_output:
            return (
                f"post-processor '{step}' needs a finite-output oracle (a report histogram and "
                f"a channel), but oracle '{name}' has none (its tags: finite_output = False)"
            )
        if not histogram:
            return (
                f"post-processor '{step}' needs the report histogram, but the aggregate path of "
                f"oracle '{name}' gives none (it does not implement sample_report_histogram): "
                f"set 'simulation: per-user'"
            )
    if needs.requires_randomized_response:
        if _randomized_response(oracle) is None:
            return (
                f"post-processor '{step}' needs a randomized-response channel (grr), but the channel of "
                f"oracle '{name}' declares none (its tags: randomized_response = None): use 'ibu'"
            )
        if personalized:
            return (
                f"post-processor '{step}' is the closed form for one budget, but this spec gives users "
                f"personalized budgets ('users:'): use 'ibu' or 'em'"
            )
    if needs.requires_likelihood and not (histogram or tags.bernoulli_support):
        why = (
            "its tags: finite_output = False, bernoulli_support = False"
            if not tags.finite_output
            else "its aggregate path gives no report histogram and its tags: bernoulli_support = False; "
            "set 'simulation: per-user'"
        )
        return (
            f"post-processor '{step}' needs a likelihood of what oracle '{name}' aggregates (a report "
            f"histogram and channel, or support counts declared bernoulli_support), but it has none ({why})"
        )
    return None


def _likelihood_based(needs: PostProcessorTags) -> bool:
    return bool(needs.requires_channel or needs.requires_randomized_response or needs.requires_likelihood)


def _alternative(
    plugins: Plugins,
    step: str,
    needs: PostProcessorTags,
    name: str,
    oracle: Oracle,
    tags: OracleTags,
    simulation: str,
    personalized: bool,
) -> str:
    """``": use 'ibu', which accepts oracle 'x'"``: the installed post-processor nearest to ``step``
    that can follow this oracle here (one of the same family first: a likelihood-based step is
    replaced by a likelihood-based one), or "" when none can. Built bare from its defaults."""
    from ldpbench.util.suggest import closest

    family: list[str] = []
    others: list[str] = []
    for info in plugins.registry("postprocessor"):
        if info.name == step:
            continue
        try:
            other = contained_call(
                f"postprocessor '{info.name}'",
                "built bare for its tags()",
                lambda info=info: plugins.create("postprocessor", info.name).tags(),
            )
        except Exception:  # noqa: BLE001 - one that cannot be built bare is no suggestion
            continue
        if _missing(info.name, name, oracle, tags, other, simulation, personalized) is None:
            (family if _likelihood_based(other) == _likelihood_based(needs) else others).append(info.name)
    pool = family or others
    if not pool:
        return ""
    best = closest(step, pool) or sorted(pool)[0]
    return f"; use '{best}' instead, which accepts oracle '{name}' here"


def _randomized_response(oracle: Oracle) -> tuple[float, float] | None:
    """The ``(p, q)`` the oracle's channel declares, or ``None``."""
    try:
        return contained_call(
            f"oracle '{oracle.name}'", "channel().tags()", lambda: oracle.channel().tags().randomized_response
        )
    except Exception:  # noqa: BLE001 - a channel that fails here fails (and is reported) in the run
        return None


def default_names(plugins: Plugins, kind: str) -> list[str]:
    """The installed plugins of ``kind`` (``metric`` or ``postprocessor``) whose tags claim
    ``default``: what a spec gets when it lists none."""
    out = []
    for info in plugins.registry(kind):
        try:
            claims = contained_call(
                f"{kind} '{info.name}'",
                "built bare for its tags()",
                lambda info=info: plugins.create(kind, info.name).tags().default,
            )
        except Exception:  # noqa: BLE001 - a plugin that cannot be built bare is no default
            continue
        if claims:
            out.append(info.name)
    return out


def default_oracle(plugins: Plugins, d: int, epsilon: float) -> str:
    """The one installed oracle whose tags claim ``default`` (at this ``d`` and ``epsilon``)."""
    from ldpbench.errors import UsageError

    names = []
    for info in plugins.registry("oracle"):
        try:
            claims = contained_call(
                f"oracle '{info.name}'",
                "built for its tags()",
                lambda info=info: plugins.create("oracle", info.name, d=d, epsilon=epsilon).tags().default,
            )
            if claims:
                names.append(info.name)
        except Exception:  # noqa: BLE001 - an oracle that cannot be built here is not the default
            continue
    if len(names) != 1:
        claim = f"several oracles claim it ({', '.join(names)})" if names else "no installed oracle declares it"
        raise UsageError(f"no default oracle: {claim}; name one with oracle=")
    return names[0]


def _probe_epsilon(budgets: Sequence[Budget]) -> float:
    for b in budgets:
        eps = b.epsilon_value
        if math.isfinite(eps) and eps > 0:
            return eps
    return 1.0


def _probe_oracle(plugins: Plugins, mech: Entry, epsilon: float) -> Oracle | None:
    """The oracle built at the probe size; ``None`` if it cannot be built there.

    :raises ParamError: the constructor refuses a parameter the spec gave (whatever d and epsilon:
        a refusal about another parameter may depend on the probe's sizes, so it is left to the run).
    """
    who = f"oracle '{mech.label}'"
    try:
        oracle: Oracle = contained_call(
            who,
            "its constructor",
            lambda: plugins.create("oracle", mech.name, mech.param_dict, d=PROBE_DOMAIN, epsilon=epsilon),
        )
        contained_call(who, "tags()", oracle.tags)
        return oracle
    except ParamError as exc:
        if exc.key is not None and exc.key in mech.param_dict:
            raise
        return None
    except Exception:  # noqa: BLE001 - parameters that fail here fail (and are reported) in the run
        return None


def _param_path(data: dict[str, Any], where: tuple[Any, ...], key: str | None) -> tuple[Any, ...]:
    """The spec path of parameter ``key`` of the oracle entry at ``where`` (the entry itself if the
    spec does not spell it out as ``{name: {key: ...}}``)."""
    node: Any = data
    for part in where:
        node = node[part] if isinstance(node, (list, dict)) else None
    if isinstance(node, dict) and len(node) == 1:
        params = next(iter(node.values()))
        if isinstance(params, dict) and key in params:
            return (*where, next(iter(node)), key)
    return where


def _entry_path(data: dict[str, Any], key: str, name: str) -> tuple[Any, ...]:
    """The spec path of the first entry of list ``key`` naming ``name`` (for ``FILE:LINE``)."""
    value = data.get(key)
    items = value if isinstance(value, list) else [value]
    for i, item in enumerate(items):
        if _entry_name(item) == name:
            return (key, i) if isinstance(value, list) else (key,)
    return (key,)


def _steps(data: dict[str, Any], pipelines: Sequence[Pipeline]) -> Iterator[tuple[tuple[Any, ...], Entry]]:
    """Every distinct post-processor step of the spec's pipelines, with its path."""
    raw = data.get("pipelines")
    seen: set[str] = set()
    for pipeline in pipelines:
        for step in pipeline.steps:
            key = step.label  # parameters may be mappings (prior_params): the label is hashable
            if key in seen:
                continue
            seen.add(key)
            yield _step_path(raw, step.name), step


def _step_path(raw: Any, name: str) -> tuple[Any, ...]:
    if not isinstance(raw, list):
        return ("pipelines",)
    for i, item in enumerate(raw):
        if isinstance(item, list):
            for j, step in enumerate(item):
                if _entry_name(step) == name:
                    return ("pipelines", i, j)
        elif _entry_name(item) == name:
            return ("pipelines", i)
    return ("pipelines",)


def _entry_name(item: Any) -> Any:
    if isinstance(item, dict) and len(item) == 1:
        return next(iter(item))
    return item


def _protocol_problems(plugins: Plugins, data: dict[str, Any], simulation: str, mech: Entry) -> list[Problem]:
    """A protocol whose tags say it has no aggregate path (``ProtocolTags.aggregate = False``) in
    a spec simulating ``aggregate``: refused at its line, as an oracle without one is."""
    if simulation != "aggregate":
        return []
    try:
        protocol = contained_call(
            f"protocol '{mech.name}'", "its constructor", lambda: plugins.create("protocol", mech.name, mech.param_dict)
        )
        tags = contained_call(f"protocol '{mech.name}'", "tags()", protocol.tags)
    except (PluginCodeFailed, ParamError):
        return []  # recorded; reported by the step that builds it, or its cells fail in the run
    if tags.aggregate:
        return []
    said = "'simulation: aggregate'" if "simulation" in data else "the default 'simulation: aggregate'"
    return [
        (
            _entry_path(data, "oracles", mech.name),
            f"protocol '{mech.name}' has no aggregate path (its tags: aggregate = False), but this spec uses "
            f"{said}: set 'simulation: per-user'",
        )
    ]


def _protocol_step_problems(
    plugins: Plugins, data: dict[str, Any], mech: Entry, pipelines: Sequence[Pipeline]
) -> list[Problem]:
    """A pipeline step that needs what a protocol's outputs declare they lack
    (``ProtocolTags.output_channel``, ``output_randomized_response``, ``output_likelihood`` set to
    False: ``rs-rfd`` with ``oracle: oue-r`` followed by ``ibu``), refused at the step's line. A
    capability left ``None`` is not checked (its rows say so at run time)."""
    who = f"protocol '{mech.label}'"
    try:
        protocol = contained_call(
            who, "its constructor", lambda: plugins.create("protocol", mech.name, mech.param_dict)
        )
        tags = contained_call(who, "tags()", protocol.tags)
    except (PluginCodeFailed, ParamError):
        return []
    problems: list[Problem] = []
    for path, step in _steps(data, pipelines):
        try:
            built = contained_call(
                f"postprocessor '{step.label}'",
                "its constructor",
                lambda step=step: plugins.create("postprocessor", step.name, step.param_dict),
            )
            needs = contained_call(f"postprocessor '{step.label}'", "tags()", built.tags)
        except Exception:  # noqa: BLE001 - a failing constructor is recorded and reported by the run
            continue
        lacks = [
            (needs.requires_channel, tags.output_channel, "a report histogram with its channel", "output_channel"),
            (
                needs.requires_randomized_response,
                tags.output_randomized_response,
                "a randomized-response channel",
                "output_randomized_response",
            ),
            (
                needs.requires_likelihood,
                tags.output_likelihood,
                "a likelihood of what it aggregated (a report histogram with its channel, or Bernoulli "
                "support counts with p*, q*)",
                "output_likelihood",
            ),
        ]
        for needed, offered, what, field in lacks:
            if needed and offered is False:
                problems.append(
                    (
                        path,
                        f"post-processor '{step.name}' needs {what}, but the estimates of protocol "
                        f"'{mech.label}' carry none (its tags: {field} = False)",
                    )
                )
                break
    return problems
