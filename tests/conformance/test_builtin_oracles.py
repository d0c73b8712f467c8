"""Every built-in oracle passes the conformance kit (ldpbench.testing), as a third party's would.

The list comes from the registry at collection time (every oracle of the ldpbench distribution),
plus the non-default parameter paths: OLH with g = 2 (same p*, q* as HR), SS with k = 1 (GRR's
law through the subset sampler), PGR over F_2 (q = 2: characteristic 2, one off-hyperplane
target, and deeper projective spaces: t = 5 at d = 16), THE with a fixed threshold,
CMS and HCMS with small sketches, and Apple's fixed hash family (``estimator: apple``), whose
estimator is biased given the family: it declares so (``unbiased=False``), so the kit tests its
mean against its declared ``expected_estimate`` and its table against both declared moments,
instead of the checks of a pure, unbiased protocol.
"""

from __future__ import annotations

from support import builtin_plugins

from ldpbench.testing import parametrize_with_checks

_PLUGINS = builtin_plugins()
_BUILTIN = [info.name for info in _PLUGINS.registry("oracle") if info.origin.distribution == "ldpbench"]

_APPLE = {"estimator": "apple", "m": 4, "k": 3}
_VARIANTS = [
    ("olh", {"g": 2}),
    ("ss", {"k": 1}),
    ("pgr", {"q": 2}),
    ("the", {"theta": 0.8}),
    ("cms", {"m": 4}),
    ("hcms", {"m": 2}),
    ("cms", _APPLE),
    ("hcms", _APPLE),
]


@parametrize_with_checks([*_BUILTIN, *_VARIANTS], plugins=_PLUGINS)
def test_builtin_oracle_conforms(plugin, check):
    check()


def test_every_builtin_oracle_is_checked():
    assert {"grr", "olh", "oue", "hr", "ss", "sue", "blh", "adp", "pgr", "she", "the", "cms", "hcms"} <= set(_BUILTIN)
