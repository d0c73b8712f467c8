"""Every built-in poisoning attack passes the kit (docs/poisoning.md)."""

from __future__ import annotations

from support import builtin_plugins

from ldpbench.testing import parametrize_with_checks

_PLUGINS = builtin_plugins()
_ATTACKS = [i.cls for i in _PLUGINS.registry("attack") if i.origin.distribution == "ldpbench"]


@parametrize_with_checks(_ATTACKS, plugins=_PLUGINS, epsilons=(2.0,))
def test_builtin_attack_conforms(plugin, check):
    check()


def test_the_list_is_not_empty():
    assert {c.name for c in _ATTACKS} == {"input", "ria", "rpa", "mga"}
