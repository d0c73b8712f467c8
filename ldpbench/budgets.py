"""Privacy budgets written in a spec: numbers, ``inf``, and a few logarithm expressions.

Personalized budgets ([MHS18]: 500 users at eps = 0.1, 500 at 2, 50 at ln(K), 20 at infinity)
need budgets that depend on the domain size. A spec may write:

- a number: ``0.5``, ``2``, ``1e-1`` (a YAML number or a numeric string);
- ``inf`` (also ``infinity``, ``+inf``): the user sends the true value;
- ``ln(d)``: the natural log of the domain size (with ``ln(d)`` a GRR user reports the truth with
  probability 1/2: e^eps / (e^eps + d - 1) = d / (2d - 1) ~ 1/2);
- ``k*ln(d)`` or ``ln(d)*k`` with a number ``k`` (``2*ln(d)``);
- ``ln(K)`` or ``k*ln(K)`` with a number ``K`` (``ln(400)``).

The grammar is matched by a regular expression and the value computed with :func:`math.log`:
nothing in a spec is ever evaluated as code.
"""

from __future__ import annotations

import math
import numbers
import re

__all__ = ["parse_epsilon"]

_NUMBER = r"(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_INF = re.compile(r"^\+?(?:inf|infinity)$", re.IGNORECASE)
_PLAIN = re.compile(rf"^\+?{_NUMBER}$")
# [k *] ln(arg) [* k'], arg = d or a number; spaces allowed around the tokens.
_LOG = re.compile(
    rf"^(?:(?P<pre>{_NUMBER})\s*\*\s*)?ln\s*\(\s*(?P<arg>d|{_NUMBER})\s*\)(?:\s*\*\s*(?P<post>{_NUMBER}))?$",
    re.IGNORECASE,
)

_HELP = "expected a positive number, inf, ln(d), k*ln(d) or ln(K) with a number K"


def parse_epsilon(value: object, d: int) -> float:
    """The budget ``value`` (a number or an expression) as a float, for a domain of ``d`` items.

    :raises ValueError: for anything outside the grammar above, a non-positive budget (``ln(1)``
        included) or NaN; the message names the offending value.
    """
    if isinstance(value, bool):
        raise ValueError(f"epsilon {value!r} is a boolean; {_HELP}")
    if isinstance(value, numbers.Real):
        eps = float(value)
    elif isinstance(value, str):
        eps = _parse_text(value.strip(), d)
    else:
        raise ValueError(f"epsilon {value!r} has type {type(value).__name__}; {_HELP}")
    if math.isnan(eps) or eps <= 0:
        raise ValueError(f"epsilon must be positive, got {value!r} (= {eps:g})")
    return eps


def _parse_text(text: str, d: int) -> float:
    if _INF.match(text):
        return math.inf
    if _PLAIN.match(text):
        return float(text)
    match = _LOG.match(text)
    if match is None:
        raise ValueError(f"cannot read epsilon {text!r}; {_HELP}")
    arg = match["arg"]
    if arg.lower() == "d":
        if int(d) != d or d < 1:
            raise ValueError(f"ln(d) needs a domain size d >= 1, got {d!r}")
        x = float(d)
    else:
        x = float(arg)
    if x <= 0:
        raise ValueError(f"cannot take the logarithm of {arg} in epsilon {text!r}")
    factor = 1.0
    for key in ("pre", "post"):
        if match[key] is not None:
            factor *= float(match[key])
    return factor * math.log(x)
