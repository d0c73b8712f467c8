"""Random streams keyed by identity, never by execution order.

Every random draw of a run comes from ``SeedSequence(entropy=spec seed, spawn_key=key(identity))``
where the identity names what is drawn ("users of dataset X, budget Y, repeat 3"). The same spec
and seed therefore give bit-identical numbers serially, on N processes, or on a cluster, and adding
a pipeline or a metric to a spec does not change any other number. (NumPy's "Parallel random number
generation" guide; pytest-randomly's reproducible reseeding.)
"""

from __future__ import annotations

import hashlib

import numpy as np


def identity_key(*parts: object) -> tuple[int, ...]:
    """A spawn key of four 32-bit words from a stable hash of ``parts``."""
    text = "\x1f".join(str(p) for p in parts)
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return tuple(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4))


def rng_for(seed: int, *identity: object) -> np.random.Generator:
    """The generator for one identity under the spec seed."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy=seed, spawn_key=identity_key(*identity))))
