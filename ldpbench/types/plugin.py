"""What every plugin class shares: a registered ``name``, declared ``params``, stored values."""

from __future__ import annotations

from abc import ABC
from typing import Any, ClassVar

from ldpbench.params import Param


def implements(cls: type, base: type, method: str) -> bool:
    """Whether ``cls`` overrides ``base``'s default ``method`` (an optional capability).

    This is how a base class derives its default tags from what a plugin class implements. The
    method is declared on ``base`` (it is part of the contract); the question is only which class
    of the MRO defines it, so no instance is needed and nothing is called.
    """
    defined = next(k.__dict__[method] for k in cls.__mro__ if method in k.__dict__)
    return defined is not base.__dict__[method]


class Plugin(ABC):  # noqa: B024 - abstract as a family: each kind declares its own abstract methods
    """What all plugin classes share: a registered ``name``, declared ``params``, stored values.

    The constructor receives the validated parameter values as keyword arguments and stores them
    verbatim (scikit-learn's convention: no logic in ``__init__`` beyond storing and cheap derived
    constants). Plugins never touch global random state: every method that draws takes an
    explicit :class:`numpy.random.Generator`.
    """

    #: The registered name: lowercase words joined by hyphens (``norm-sub``).
    name: ClassVar[str] = ""
    #: Declared parameters (see :mod:`ldpbench.params`).
    params: ClassVar[tuple[Param, ...]] = ()
    #: Bump when the plugin's numbers change for the same inputs: ``compare`` then marks rows
    #: "not comparable" instead of "regressed".
    algorithm_version: ClassVar[str] = "1"

    def __init__(self, **params: Any) -> None:
        # Declared defaults fill in what is not given, so that ``NormSub()`` built by hand behaves
        # like one built from a spec (``plugins.create`` validates and passes every value).
        values = {p.name: p.default for p in type(self).params if not p.required}
        values.update(params)
        for key, value in values.items():
            setattr(self, key, value)
        self._param_values = values

    @classmethod
    def contract_problems(kind, cls: type) -> list[str]:
        """Where plugin class ``cls`` contradicts this kind's contract, read from the class alone
        (nothing is constructed); empty when it does not.

        The registry calls it on the kind's base class (``Oracle.contract_problems(cls)``) when a
        class is registered, so that each kind's registration rules live with its contract; the
        rules of every kind are added to those of :class:`Plugin` (none).
        """
        return []

    def get_params(self) -> dict[str, Any]:
        """The parameter values the plugin was built with (declared defaults filled in)."""
        return dict(self._param_values)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._param_values.items())
        return f"{type(self).__name__}({args})"
