"""Every built-in heavy-hitter protocol passes the kit's protocol checks: each round's oracle
audited exactly and empirically, its accounting across rounds, a planted set identified
(ldpbench/testing/checks/protocol.py). Blender (a frequency result) is not collected: the checks
do not concern it."""

from __future__ import annotations

from support import builtin_plugins

from ldpbench.testing import parametrize_with_checks

_PLUGINS = builtin_plugins()
_PROTOCOLS = [i.cls for i in _PLUGINS.registry("protocol") if i.origin.distribution == "ldpbench"]
#: PEM's other way of spending the budget, checked too.
_VARIANTS = [(i.cls, {"split": "budget"}) for i in _PLUGINS.registry("protocol") if i.name == "pem"]


@parametrize_with_checks(_PROTOCOLS + _VARIANTS, plugins=_PLUGINS)
def test_builtin_protocol_conforms(plugin, check):
    check()
