"""Every built-in oracle passes the conformance kit (ldpbench.testing), as a third party's would.

The list comes from the registry at collection time (every oracle of the ldpbench distribution),
plus the non-default parameter paths: OLH with g = 2 (same p*, q* as HR), SS with k = 1 (GRR's
law through the subset sampler) and PGR over F_2 (q = 2: characteristic 2, one off-hyperplane
target, and deeper projective spaces: t = 5 at d = 16).
"""

from __future__ import annotations

from ldpbench.pluginmanager import build_plugins
from ldpbench.testing import parametrize_with_checks

_PLUGINS = build_plugins()
_BUILTIN = [info.name for info in _PLUGINS.registry("oracle") if info.origin.distribution == "ldpbench"]


@parametrize_with_checks([*_BUILTIN, ("olh", {"g": 2}), ("ss", {"k": 1}), ("pgr", {"q": 2})], plugins=_PLUGINS)
def test_builtin_oracle_conforms(plugin, check):
    check()


def test_every_builtin_oracle_is_checked():
    assert {"grr", "olh", "oue", "hr", "pgr", "ss", "sue", "blh", "adp"} <= set(_BUILTIN)
