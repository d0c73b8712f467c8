"""Plugin parameters declared as data.

Every plugin declares its parameters as a tuple of :class:`Param` (name, type, default, one-line
description), the way tox declares config keys with ``add_config``. From that one declaration come
the spec validator (types, ranges, did-you-mean for unknown keys), ``ldpbench describe`` and the JSON
schema. Plugins never parse their own options.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ldpbench.errors import ParamError
from ldpbench.util.suggest import closest

_INF = re.compile(r"^(?P<sign>[+-]?)(?:inf|infinity)$", re.IGNORECASE)


def parse_infinity(value: object, *, negative: bool = False) -> float | None:
    """``inf`` written as text (``inf``, ``+inf``, ``infinity``, any case, spaces around) as a float,
    else None: the one reader of infinity in a spec or a parameter.

    :param negative: also read ``-inf`` / ``-infinity`` (a float parameter may be one; a budget never).
    """
    if not isinstance(value, str):
        return None
    match = _INF.match(value.strip())
    if match is None or (match["sign"] == "-" and not negative):
        return None
    return -math.inf if match["sign"] == "-" else math.inf


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


#: Sentinel default for a parameter the spec must give.
REQUIRED: Any = _Required()

_TYPE_NAMES = {bool: "bool", int: "int", float: "float", str: "str", list: "list", dict: "mapping"}


@dataclass(frozen=True)
class Param:
    """One declared plugin parameter.

    :param name: the key in the spec (lowercase, ``snake_case``).
    :param type: the accepted Python type, or a tuple of them (e.g. ``(float, str)`` for
        "a number or the word ``significance``"). ``float`` accepts ints; ``int`` accepts floats
        that are whole numbers. ``float`` also accepts ``inf`` / ``-inf`` written as strings.
    :param default: the default value, or :data:`REQUIRED`.
    :param help: one line shown by ``ldpbench describe``.
    :param choices: allowed values for string values.
    :param min: inclusive lower bound for numbers.
    :param max: inclusive upper bound for numbers.
    :param plugin_kind: if set, the value is the name of a plugin of that kind (e.g. ``"prior"``),
        checked against the registry and handed to the plugin as an instance.
    :param user_only: the value says where to connect or what to trust (a scheduler address, a
        scheduler file): only the user may give it, on the command line or in the environment. A
        spec that gives it is refused (``FILE:LINE``, exit 2) unless the user passes
        ``--trust-spec-params``: a spec is data, and a downloaded one must not make ``ldpbench
        run`` connect to a machine of its author's choosing (a Dask scheduler sends back pickles,
        which run code on the client).
    """

    name: str
    type: type | tuple[type, ...] = float
    default: Any = REQUIRED
    help: str = ""
    choices: tuple[Any, ...] | None = None
    min: float | None = None
    max: float | None = None
    plugin_kind: str | None = None
    nullable: bool = False
    #: a file path: the spec loader resolves a relative path against the spec's folder
    path: bool = False
    #: only the user (command line, environment) may give it, not a spec (see above)
    user_only: bool = False
    #: values refused although within [min, max] (olh's ``g``: 0 is automatic, 1 is no hash)
    forbid: tuple[Any, ...] = ()
    #: the value is a mapping of the parameters of the prior family named by this sibling
    #: parameter (calibrate's ``prior_params`` for its ``prior``): the validator checks its keys
    params_of: str | None = None
    #: for a dataset: the value *is* its number of users (``"n"``) or its domain size (``"d"``),
    #: so that validation knows them without loading the dataset (a 10**8 domain takes gigabytes)
    describes: str | None = None

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    @property
    def types(self) -> tuple[type, ...]:
        return self.type if isinstance(self.type, tuple) else (self.type,)

    def type_name(self) -> str:
        names = [_TYPE_NAMES.get(t, t.__name__) for t in self.types]
        if self.plugin_kind:
            names = [f"{self.plugin_kind} name"]
        text = " | ".join(names)
        if self.choices:
            text += " (" + ", ".join(map(str, self.choices)) + ")"
        return text

    def describe(self) -> dict[str, Any]:
        """A JSON-able description (for ``describe`` and the schema)."""
        return {
            "name": self.name,
            "type": self.type_name(),
            "default": None if self.required else self.default,
            "required": self.required,
            "help": self.help,
            "choices": list(self.choices) if self.choices else None,
            "min": self.min,
            "max": self.max,
            "user_only": self.user_only,
        }

    def coerce(self, value: Any) -> Any:
        """Check ``value`` against the declaration and return it in canonical form.

        Raises :class:`ParamError` with a message that names the parameter.
        """
        if value is None and self.nullable:
            return None
        if self.plugin_kind:
            if not isinstance(value, str):
                raise ParamError(f"'{self.name}' must be a {self.plugin_kind} name, got {value!r}", self.name)
            return value
        errors = []
        for t in self.types:
            try:
                out = _coerce_to(t, value)
            except (TypeError, ValueError) as exc:
                errors.append(str(exc))
                continue
            if isinstance(out, str) and self.choices is not None and out not in self.choices:
                hint = closest(out, [str(c) for c in self.choices])
                msg = f"'{self.name}' must be one of {', '.join(map(str, self.choices))}; got '{out}'"
                errors.append(msg + (f" — did you mean '{hint}'?" if hint else ""))
                continue
            if isinstance(out, (int, float)) and not isinstance(out, bool):
                if isinstance(out, float) and math.isnan(out):
                    errors.append(f"'{self.name}' must be a number, got NaN")
                    continue
                if self.min is not None and out < self.min:
                    errors.append(f"'{self.name}' must be >= {self.min}, got {out}")
                    continue
                if self.max is not None and out > self.max:
                    errors.append(f"'{self.name}' must be <= {self.max}, got {out}")
                    continue
                if out in self.forbid:
                    errors.append(f"'{self.name}' cannot be {out}" + (f" ({self.help})" if self.help else ""))
                    continue
            return out
        if len(errors) == 1 and not errors[0].startswith("expected"):
            raise ParamError(errors[0], self.name)
        raise ParamError(f"'{self.name}' must be {self.type_name()}, got {value!r}", self.name)


def _coerce_to(t: type, value: Any) -> Any:
    if t is bool:
        if isinstance(value, bool):
            return value
        raise TypeError("expected bool")
    if isinstance(value, bool):
        raise TypeError(f"expected {t.__name__}")
    if t is int:
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        raise TypeError("expected int")
    if t is float:
        if isinstance(value, (int, float)):
            return float(value)
        if (infinite := parse_infinity(value, negative=True)) is not None:
            return infinite
        raise TypeError("expected float")
    if t is str:
        if isinstance(value, str):
            return value
        raise TypeError("expected str")
    if t is list:
        if isinstance(value, (list, tuple)):
            return list(value)
        raise TypeError("expected list")
    if t is dict:
        if isinstance(value, Mapping):
            return dict(value)
        raise TypeError("expected mapping")
    if isinstance(value, t):
        return value
    raise TypeError(f"expected {t.__name__}")


_PARAM_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


def check_declaration(params: Sequence[Param]) -> list[str]:
    """Problems with a plugin's parameter declaration (used by the registry at registration)."""
    problems = []
    seen = set()
    for p in params:
        if not isinstance(p, Param):
            problems.append(f"params must be Param objects, got {p!r}")
            continue
        if not _PARAM_NAME.match(p.name):
            problems.append(f"parameter name '{p.name}' must match {_PARAM_NAME.pattern}")
        if p.name in seen:
            problems.append(f"parameter '{p.name}' declared twice")
        seen.add(p.name)
        if not p.required and p.default is not None and not p.plugin_kind:
            try:
                p.coerce(p.default)
            except ParamError as exc:
                problems.append(f"default of '{p.name}' does not validate: {exc}")
    return problems


@dataclass
class ResolvedParams:
    """Parameters after validation: the values the plugin gets, and the ones the spec gave."""

    values: dict[str, Any] = field(default_factory=dict)
    given: dict[str, Any] = field(default_factory=dict)


def resolve(params: Sequence[Param], given: Mapping[str, Any] | None, owner: str) -> ResolvedParams:
    """Validate ``given`` against the declaration; fill in defaults.

    Unknown keys are errors (with a did-you-mean), never silently dropped. ``owner`` names the
    plugin in messages.
    """
    given = dict(given or {})
    by_name = {p.name: p for p in params}
    for key in given:
        if key not in by_name:
            hint = closest(str(key), list(by_name))
            known = ", ".join(by_name) or "none"
            msg = f"unknown parameter '{key}' for {owner}"
            msg += f" — did you mean '{hint}'?" if hint else f" (known: {known})"
            raise ParamError(msg, str(key))
    out = ResolvedParams()
    for p in params:
        if p.name in given:
            out.values[p.name] = p.coerce(given[p.name])
            out.given[p.name] = out.values[p.name]
        elif p.required:
            raise ParamError(f"{owner} needs parameter '{p.name}' ({p.help or p.type_name()})", p.name)
        else:
            out.values[p.name] = p.default
    return out
