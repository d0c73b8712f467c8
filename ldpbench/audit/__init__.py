"""Privacy audits of frequency oracles: is a plugin as private as the epsilon it claims?

- :mod:`.exact` reads the exact output law (``Oracle.output_table()``) at several domain sizes and
  over the plugin's declared parameters, and checks every likelihood ratio against ``e^eps``: a
  proof of epsilon-LDP (or a counterexample) where the table is finite.
- :mod:`.law` checks that what ``perturb`` sends (``Oracle.encode_reports``) follows those tables,
  at every point the exact audit enumerated: without it the proof is about an abstraction.
- :mod:`.empirical` draws reports of two chosen inputs and runs distinguishing attacks in the
  manner of LDP-Auditor (Arcolezi & Gambs, PETS 2024), giving a lower confidence bound on the
  effective epsilon at realistic sizes: it can catch a leak, never prove its absence.

- :mod:`.verdict` runs both on one installed oracle and says what they found
  (:func:`audit_plugin`, what ``ldpbench audit NAME`` runs; ``ldpbench check-plugin`` runs a quick
  form).

The names below are public (``from ldpbench.audit import audit_plugin``).
"""

from __future__ import annotations

from ldpbench.audit.empirical import EmpiricalAudit, empirical_audit
from ldpbench.audit.exact import ExactAudit, exact_audit
from ldpbench.audit.law import LawAudit, law_audit
from ldpbench.audit.verdict import PluginAudit, audit_plugin

__all__ = [
    "EmpiricalAudit",
    "ExactAudit",
    "LawAudit",
    "PluginAudit",
    "audit_plugin",
    "empirical_audit",
    "exact_audit",
    "law_audit",
]
