"""Binary local hashing (BLH) ([W17] §4.4; Bassily & Smith, "Local, private, efficient protocols
for succinct histograms", STOC 2015).

Local hashing with ``g = 2``: each user draws a hash function ``H: D -> {0, 1}`` (a random seed),
hashes her value and reports the bit through binary randomized response; the report ``<H, b>``
supports ``{v : H(v) = b}``. With [W17] §4.4's constants at ``g = 2``:
``p* = e^eps / (e^eps + 1)`` and ``q* = 1/2``, approximate variance ``(e^eps + 1)^2 / (n (e^eps - 1)^2)``
([W17] §4.4). ``blh`` is exactly ``olh`` with ``g = 2`` (same code, same random draws);
it exists under its own name because [W17] compares it as a protocol of its own.
"""

from __future__ import annotations

from ldpbench import hookimpl

from .olh import OLH


class BLH(OLH):
    """Binary local hashing: hash to one bit, then binary randomized response on it.

    Every path is :class:`~.olh.OLH`'s with two buckets (the splitmix64 hash's top bit is an
    exactly uniform bit for a uniform seed):

    - **Per-user path**: a real seeded hash family; reports are ``(seed, bit)``.
    - **Aggregate path**: ``c_v ~ Binomial(n_v, p*) + Binomial(n - n_v, 1/2)`` independently over v,
      exact in distribution for the idealized protocol (a fully random hash per user, [W17] §4.4),
      the same statement and approximation as OLH's.
    - **Output table**: all ``2^d`` functions times the bit while ``2^(d+1) <= 65536``.

    No parameters (``g`` is fixed at 2). ``epsilon = inf`` gives p* = 1, q* = 1/2.
    """

    name = "blh"
    params = ()

    def hash_range(self) -> int:
        return 2


@hookimpl
def ldpbench_register_oracles(registry):
    registry.register(BLH)
