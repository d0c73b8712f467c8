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

Every budget, written or computed, must lie in [:data:`MIN_EPSILON`, :data:`MAX_EPSILON`] or be
``inf`` written as such: ``'1000'``, ``200*ln(d)`` or ``ln(1e400)`` (which is ``inf`` in floating
point) are refused, like ``epsilons: [1000]``. Expressions in ``d`` are checked with each
dataset's own domain size when the spec is validated.
"""

from __future__ import annotations

import math
import numbers
import re

from ldpbench.params import parse_infinity

__all__ = ["MAX_EPSILON", "MIN_EPSILON", "check_epsilon_range", "depends_on_d", "parse_epsilon"]

#: The largest finite budget. At eps = 100 every oracle already reports the truth with
#: probability 1 - e^-100 (GRR keeps a value with probability e^eps / (e^eps + d - 1)), and
#: e^eps overflows float64 past eps = 709: larger budgets only break the arithmetic.
MAX_EPSILON = 100.0
#: The smallest budget. Below it e^eps - 1 (the denominator of every oracle's unbiased estimate)
#: is under 1e-4, the estimates are noise many orders larger than the counts, and at 1e-300 it
#: is 0 (a division by zero). Studies go down to 0.01 ([W17] Fig. 2).
MIN_EPSILON = 1e-4

_NUMBER = r"(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_PLAIN = re.compile(rf"^\+?{_NUMBER}$")
# [k *] ln(arg) [* k'], arg = d or a number; spaces allowed around the tokens.
_LOG = re.compile(
    rf"^(?:(?P<pre>{_NUMBER})\s*\*\s*)?ln\s*\(\s*(?P<arg>d|{_NUMBER})\s*\)(?:\s*\*\s*(?P<post>{_NUMBER}))?$",
    re.IGNORECASE,
)

_HELP = "expected a positive number, inf, ln(d), k*ln(d) or ln(K) with a number K"


def depends_on_d(value: object) -> bool:
    """Whether the budget ``value`` is an expression in the domain size (``ln(d)``, ``2*ln(d)``)."""
    if not isinstance(value, str):
        return False
    match = _LOG.match(value.strip())
    return match is not None and match["arg"].lower() == "d"


def parse_epsilon(value: object, d: int, *, check_range: bool = True) -> float:
    """The budget ``value`` (a number or an expression) as a float, for a domain of ``d`` items.

    :param check_range: also refuse a finite budget outside [MIN_EPSILON, MAX_EPSILON] (off only
        to check an expression in ``d`` before the domain size is known).
    :raises ValueError: for anything outside the grammar above, a non-positive budget (``ln(1)``
        included), NaN, or a budget out of range; the message names the offending value.
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
    written_inf = math.isinf(eps) and (not isinstance(value, str) or parse_infinity(value) is not None)
    if check_range and not written_inf:
        check_epsilon_range(eps, value)
    return eps


def check_epsilon_range(eps: float, written: object) -> None:
    """Refuse a finite budget outside [MIN_EPSILON, MAX_EPSILON] (and an expression that overflows).

    :raises ValueError: naming what was ``written`` and its value.
    """
    expression = isinstance(written, str) and "ln" in written.lower()
    shown = f"{written!r} = {eps:g}" if expression else f"{eps:g}"
    if math.isinf(eps):
        raise ValueError(f"epsilon {written!r} is not finite; write inf for users who send their true value")
    if eps > MAX_EPSILON:
        raise ValueError(f"epsilon {shown} is above the largest budget, {MAX_EPSILON:g}")
    if eps < MIN_EPSILON:
        raise ValueError(f"epsilon {shown} is below the smallest budget, {MIN_EPSILON:g}")


def _parse_text(text: str, d: int) -> float:
    if parse_infinity(text) is not None:
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
