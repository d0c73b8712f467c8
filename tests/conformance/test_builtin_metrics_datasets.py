"""Every built-in metric and every built-in dataset that needs no file of yours passes the kit.

Parametrized from the registry at collection time (by class: names are unique within a kind, not
across kinds, and a bare name is looked up among oracles and post-processors).
"""

from __future__ import annotations

from support import builtin_plugins

from ldpbench.testing import parametrize_with_checks

_PLUGINS = builtin_plugins()

#: Datasets that read a file the user provides (no default): the kit cannot load them bare.
_NEEDS_A_FILE = {"fimi", "histogram", "kosarak", "search-log"}

#: Parameters that keep a slow dataset's checks quick without changing what is checked.
_QUICK_PARAMS = {"synthetic-search": {"users": 20_000, "queries": 50_000}}

_METRICS = [i.cls for i in _PLUGINS.registry("metric") if i.origin.distribution == "ldpbench"]
_DATASETS = [
    (i.cls, _QUICK_PARAMS.get(i.name, {}))
    for i in _PLUGINS.registry("dataset")
    if i.origin.distribution == "ldpbench" and i.name not in _NEEDS_A_FILE
]


#: The targets' frequency gain is signed (an attack's pull on the estimate, docs/poisoning.md), not
#: an error: a noisy estimate may score above the exact one's 0 either way. The share of targets
#: identified measures an attack's success, not the estimate's accuracy: the exact top-k holds no
#: target (0), a noisy one may hold one.
_EXPECTED = {
    "frequency-gain": {"check_metric_prefers_the_truth": "a signed gain, not an error (docs/poisoning.md)"},
    "targets-identified": {"check_metric_prefers_the_truth": "an attack's success, not an error (docs/poisoning.md)"},
}


@parametrize_with_checks(_METRICS, plugins=_PLUGINS, expected_failed_checks=_EXPECTED)
def test_builtin_metric_conforms(plugin, check):
    check()


@parametrize_with_checks(_DATASETS, plugins=_PLUGINS)
def test_builtin_dataset_conforms(plugin, check):
    check()


def test_the_lists_are_not_empty():
    assert {c.name for c in _METRICS} >= {"mse", "l1", "ndcg"}
    assert {c.name for c, _ in _DATASETS} >= {"zipf", "uniform", "retail"}
