"""Stage 3 of a run: one cell, population -> mechanism -> pipelines -> metrics.

Everything that shapes a stored number lives here (and is hashed into every row's code
fingerprint, :func:`ldpbench.loading.identity.core_identity`).
"""
