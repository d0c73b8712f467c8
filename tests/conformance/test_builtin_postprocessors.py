"""Every built-in post-processor passes the post-processor contract of the conformance kit.

Parametrized from the registry at collection time, so post-processors added later are checked
without editing this file. Inputs are estimates from every built-in oracle (and a bare hand-built
estimate); a post-processor may decline an input it cannot use with an ``ldpbench.errors``
exception (EM without a report histogram).
"""

from __future__ import annotations

from support import builtin_plugins

from ldpbench.testing import parametrize_with_checks

_PLUGINS = builtin_plugins()

#: Parameters that keep a slow plugin's checks quick without changing what is checked.
_QUICK_PARAMS = {"em-bootstrap": {"replicates": 2}}

_BUILTIN = [
    (info.name, _QUICK_PARAMS.get(info.name, {}))
    for info in _PLUGINS.registry("postprocessor")
    if info.origin.distribution == "ldpbench"
]


@parametrize_with_checks(_BUILTIN, plugins=_PLUGINS)
def test_builtin_postprocessor_conforms(plugin, check):
    check()


def test_registry_lists_the_base_postprocessor():
    assert "base" in {name for name, _ in _BUILTIN}
