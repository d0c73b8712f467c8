"""The plugin contract is declared (tags; ldpbench/types/tags.py) and read, never probed for.

Tags are derived from what a class overrides (issue 11: a class whose capabilities contradicted its
methods), and nothing in ldpbench/ asks a plugin for an attribute with getattr or hasattr.
"""

from __future__ import annotations

import re

from support import ROOT, GRRNoHistogramSampler, GRRPerUserOnly

from ldpbench.types import Oracle
from ldpbench_plugins.oracles.grr import GRR


def test_tags_are_derived_from_what_the_class_overrides():
    tags = GRR(d=4, epsilon=1.0).tags()
    assert tags.aggregate and tags.finite_output and tags.aggregate_histogram and tags.output_rows
    assert tags.support_matrix  # GRR implements support_matrix: the tag is on

    class WithoutSupportMatrix(GRR):
        support_matrix = Oracle.support_matrix  # back to the base class's "not implemented"

    assert not WithoutSupportMatrix(d=4, epsilon=1.0).tags().support_matrix
    no_hist = GRRNoHistogramSampler(d=4, epsilon=1.0).tags()
    assert no_hist.aggregate and no_hist.finite_output and not no_hist.aggregate_histogram
    assert not GRRPerUserOnly(d=4, epsilon=1.0).tags().aggregate


def test_oue_declares_its_chunk_size_as_a_tag():
    from ldpbench_plugins.oracles.oue import OUE

    o = OUE(d=100_000, epsilon=1.0)
    assert o.tags().chunk_users == o.chunk_users < 1 << 20


# -- no probing ------------------------------------------------------------------------------------

#: getattr/hasattr calls in ldpbench/ that are not about plugins (argparse, entry points, os, the
#: lazy re-export of ldpbench.testing), by file and the text of the call.
NOT_PLUGIN_PROBES = {
    ("spec/load.py", 'getattr(exc, "problem", None)'),
    ("loading/manager.py", "getattr(pm.hook, hook_name)"),
    ("util/safeio.py", 'getattr(os, "O_NONBLOCK", 0)'),
    ("util/safeio.py", 'getattr(os, "O_CLOEXEC", 0)'),
    ("cli/__init__.py", 'getattr(args, "func", None)'),
    ("cli/_common.py", 'getattr(args, "trust_spec_plugins", False)'),
    ("cli/_common.py", 'getattr(args, "trust_spec_params", False)'),
    ("cli/_common.py", 'getattr(args, "disable_plugin", None)'),
    ("cli/_common.py", 'getattr(args, "cell_timeout", None)'),
    ("boundary/guard.py", 'hasattr(signal, "SIGALRM")'),
    ("loading/identity.py", 'getattr(module, "__file__", None)'),
    ("results/store.py", 'getattr(os, "O_CLOEXEC", 0)'),
    ("results/store.py", 'getattr(os, "O_DIRECTORY", 0)'),
    ("boundary/guard.py", 'hasattr(signal, "setitimer")'),
    ("testing/__init__.py", 'getattr(importlib.import_module(f"{__name__}.checks.{_PUBLIC[name]}"), name)'),
    ("types/kinds.py", "getattr(loaded, attribute)"),
    ("__init__.py", "getattr(importlib.import_module(_MOVED[name]), name)"),
    # the fields of a report dataclass, read to encode them (data, not a capability)
    ("types/reports.py", "getattr(reports, f.name)"),
    # a kind's checks module (ldpbench's own, not a plugin) that names the tags a check needs
    ("testing/checks/runner.py", 'hasattr(module, "missing")'),
}


def test_nothing_in_ldpbench_probes_plugins_for_attributes():
    root = ROOT / "ldpbench"
    found = set()
    for path in root.rglob("*.py"):
        for call in re.findall(r"\b(?:has|get)attr\((?:[^()]|\([^()]*\))*\)", path.read_text(encoding="utf-8")):
            found.add((path.relative_to(root).as_posix(), call))
    assert found - NOT_PLUGIN_PROBES == set()


def test_exact_marginals_follows_exact_aggregate_unless_declared():
    assert GRR(d=4, epsilon=1.0).tags().exact_marginals  # exact jointly, so per item too

    class Approximate(GRR):
        exact_aggregate = False

    class MarginalsOnly(GRR):
        exact_aggregate = False
        exact_marginals = True

    class Contradicts(GRR):
        exact_marginals = False  # the joint law is exact: its marginals cannot be wrong

    assert not Approximate(d=4, epsilon=1.0).tags().exact_marginals
    assert MarginalsOnly(d=4, epsilon=1.0).tags().exact_marginals
    assert Oracle.contract_problems(MarginalsOnly) == Oracle.contract_problems(GRR)
    assert any("exact_marginals cannot be False" in p for p in Oracle.contract_problems(Contradicts))
