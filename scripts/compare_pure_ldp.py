"""Per-user speed of ldpbench's oracles and heavy-hitter protocols beside their peers' implementations.

The peers are pure-LDP (Cormode, Maddock, Maple, PVLDB 2021; github Samuel-Maddock/pure-LDP,
package ``pure-ldp`` 1.2.0) and multi-freq-ldpy (Arcolezi et al.; package ``multi-freq-ldpy``
0.2.5). Neither is a dependency of ldpbench, which never imports them: every import of a peer is
inside this script's ``*_oracles`` / ``*_heavy_hitters`` functions. Install them beside ldpbench
only to run this script. pure-LDP imports scikit-learn and statsmodels (for RAPPOR) without
declaring them, and its local hashing hashes ``str`` values, which xxhash 4 refuses ("Strings must
be encoded before hashing"), so::

    python3 -m venv /tmp/peers-venv
    /tmp/peers-venv/bin/pip install -e . pure-ldp multi-freq-ldpy scikit-learn statsmodels "xxhash<4"
    /tmp/peers-venv/bin/python scripts/compare_pure_ldp.py [--n 2000] [--big-n 200000] [--d 1024] [--epsilon 1]
    /tmp/peers-venv/bin/python scripts/compare_pure_ldp.py --heavy-hitters [--n 200] [--big-n 1000000] [--bits 16]
    /tmp/peers-venv/bin/python scripts/compare_pure_ldp.py --longitudinal [--n 2000] [--big-n 200000] [--d 64] [--T 10]

NumPy 2: pure-LDP's ``FreqOracleServer`` builds its arrays with ``np.zeros(d)`` and its CMS server
(and the LH servers of its TreeHist and SFP) pass ``d = None``, which NumPy 1 read as ``()`` (a
deprecation since 1.20) and NumPy 2 refuses ("Use () not None as shape arguments"). Pinning
``numpy<2`` in the side environment is not possible (ldpbench needs NumPy >= 2.0.1 and both run in
this one process), so :func:`pure_ldp_numpy2` gives that one module NumPy 1's reading of
``np.zeros(None)`` and nothing else; the rest of pure-LDP runs unchanged. multi-freq-ldpy runs on
NumPy 2 as it is (its clients are numba-compiled: the first call, the compilation, is made before
the clock starts).

**Frequency oracles** (the default). What is timed, for every library, at the same n, d and eps:
every user's report (client side), the aggregation of the reports and the estimate of all d
frequencies (server side) — the whole per-user simulation. ldpbench runs it as ``ldpbench run``
does with ``simulation: per-user`` (:func:`ldpbench.engine.simulate.simulate`, vectorized over
chunks of users); pure-LDP's clients and servers take one user at a time (``privatise`` then
``aggregate`` in a Python loop, as its README and its own simulations do), then ``estimate_all``
over the domain; multi-freq-ldpy's ``*_Client`` is called once per user and its ``*_Aggregator_MI``
once on the list of reports (as its README does). The peers are therefore timed on a small n
(``--n``, 2,000 users by default); ldpbench on the same n (the ratio compares like with like), and
once more on ``--big-n`` users to show its throughput when fixed costs no longer dominate. Each
figure is the best of ``--rounds`` runs (users/s = n / seconds).

Names (ldpbench -> pure-LDP; multi-freq-ldpy): grr -> DE; GRR, olh -> LH(use_olh=True);
LH(optimal=True), blh -> LH(g=2); LH(optimal=False), oue -> UE(use_oue=True); UE(optimal=True),
sue -> UE; UE(optimal=False), she -> HE; HE(use_thresh=False), the -> HE(use_the=True);
HE(use_thresh=True), hr -> HadamardResponse (the same high-privacy HR only for eps <= 1: above it
pure-LDP switches to a different, blocked HR); —, cms -> CMS; —, hcms -> CMS(is_hadamard=True); —
(Apple's fixed family of k hash functions on both sides: our ``estimator: apple``, with our k and
m), ss -> —; SS, adp -> —; ADP. ldpbench oracles without a counterpart in either (pgr) are listed
as such.

**Heavy hitters** (``--heavy-hitters``). ldpbench's protocols (``pem``, ``treehist``;
plugins/protocols/) beside pure-LDP's (``pure_ldp.heavy_hitters``: PEM, TreeHist, SFP) on the same
users: ``zipf-bits`` (Zipf(1.1) over ``--support`` random items of ``{0,1}^bits``), the same eps
and k. Timed: every user's report and the server's search for the heavy hitters. ldpbench runs
``Protocol.run(..., simulation="per-user")``; pure-LDP ``privatise`` / ``aggregate`` per user, then
``find_heavy_hitters(k=k)``. pure-LDP's default frequency oracle (OLH) aggregates a report by
hashing every item of the round's domain (2^bits items at the last rounds), so its cost per user
grows as 2^bits: it is timed on a small domain (16 bits by default) and a small n.
:data:`HEAVY_HITTERS` lists the protocols by ldpbench name; a protocol ldpbench does not register
yet (``sfp``, being written on another branch) is shown with pure-LDP's figure only.

**Longitudinal** (``--longitudinal``). ldpbench's memoized protocols (``l-grr``, ``l-oue``,
``l-osue``, ``l-sue``, ``l-soue``; plugins/protocols/l_memo.py) beside multi-freq-ldpy's
(``multi_freq_ldpy.long_freq_est``: ``L_GRR``, ``L_OUE``, ``L_OSUE``, ``L_SUE``, ``L_SOUE``) at the
same n, d, T, eps_inf and eps_1 = eps_inf / 2: ``n`` users over ``T`` rounds (Zipf(1.1) over d in
round 0, each user re-draws with probability 0.1 per round). Timed: every report of every round
and the T per-round estimates; throughput in user-reports per second (n T / s). ldpbench runs
``Protocol.run`` per user (``simulation="per-user"``: every PRR and IRR drawn) and on its exact
aggregate path; multi-freq-ldpy calls its ``*_Client(value, k, eps_perm, eps_1)`` once per user and
round and its ``*_Aggregator_MI`` once per round, as its tutorials do. Its client draws the permanent
layer afresh on every call (it keeps no memo between calls), so it does the same work per report
as a memoizing client and less state-keeping. The script also checks multi-freq-ldpy's results
against ours: its ``VAR_Long_Pure`` beside ``Chain.variance`` at f = 0 and f = 0.2, and the support
rates its clients produce (5,000 reports of one value at d = 8) beside our ``p*`` and ``q*``.

**Multidimensional solutions** (``--multidimensional``). ldpbench's ``spl``, ``smp`` and ``rs-fd``
(plugins/protocols/; docs/multidimensional.md) beside multi-freq-ldpy's ``mdim_freq_est``
(``SPL_*``, ``SMP_*``, ``RSpFD_*``: one ``*_Client`` call per user on the user's tuple, one
``*_Aggregator`` call on the list of reports, as its tutorials do) on the same users:
``correlated-attributes`` (``--attributes`` attributes over ``[d]`` each, ``--d`` 16 by default,
Zipf(1) marginals, copula correlation 0.5), the same n and eps. ldpbench is timed on its per-user
path (``Protocol.run(..., simulation="per-user")``) at n and at big n, and on its exact aggregate
path at big n (the last column). ``--agreement R`` also runs both libraries R times on a small
domain at a large budget (d = 4, eps = 4, where multi-freq-ldpy's clipping at 0 never acts and
its renormalization leaves a GRR estimate unchanged) and prints, per solution, the mean and the
variance of each library's estimates beside the formula's (our ``variance`` functions).
"""

from __future__ import annotations

import argparse
import math
import os
import random
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

INSTALL = 'pip install pure-ldp multi-freq-ldpy scikit-learn statsmodels "xxhash<4"   (see this script\'s docstring)'

#: The peers, in the tables' column order: of the frequency oracles, of the heavy hitters.
PEERS = ("pure-LDP", "multi-freq-ldpy")
HEAVY_HITTER_PEERS = ("pure-LDP",)

#: ldpbench's heavy-hitter protocols compared, by registered name, with the parameters that make
#: them the peers' protocol (k comes from --k). A name ldpbench does not register yet is listed
#: with the peers' figures only: adding ldpbench's SFP, once its branch lands, is its line here.
HEAVY_HITTERS: dict[str, dict] = {
    "pem": {},
    "treehist": {},
    "sfp": {},  # ldpbench's SFP (Apple's sequence fragment puzzle): being written on another branch
}


def _identity(x: int) -> int:
    return x


@dataclass(frozen=True)
class Peer:
    """How to build a peer's client and server for one of our oracles (pure-LDP's classes)."""

    label: str
    make: Callable[[float, int, object], tuple[object, object]]
    caveat: str = ""
    #: parameters of our oracle that make it the same protocol as the peer's
    ours_params: dict = field(default_factory=dict)


@dataclass(frozen=True)
class PeerFunctions:
    """A peer whose protocol is a pair of functions (multi-freq-ldpy): one call per user for the
    report, one call on the list of reports for the estimate of all d frequencies."""

    label: str
    client: Callable[[int, int, float], object]
    aggregate: Callable[[list, int, float], object]
    caveat: str = ""
    ours_params: dict = field(default_factory=dict)


class _ZerosNoneAsScalar:
    """NumPy with NumPy 1's ``np.zeros(None)`` (a 0-d array, as ``np.zeros(())``); every other
    attribute is NumPy's own."""

    def __init__(self, numpy: object) -> None:
        self._numpy = numpy

    def __getattr__(self, name: str) -> object:
        return getattr(self._numpy, name)

    def zeros(self, shape, *args, **kwargs):  # noqa: ANN001, ANN202 - numpy's signature
        return self._numpy.zeros(() if shape is None else shape, *args, **kwargs)


def pure_ldp_numpy2() -> None:
    """Let pure-LDP's servers built with ``d = None`` (CMS; TreeHist's and SFP's LH) start on
    NumPy 2 (module docstring): its ``FreqOracleServer`` module alone sees ``np.zeros(None)`` as
    NumPy 1 did. Idempotent; ImportError when pure-LDP is missing."""
    import pure_ldp.core._freq_oracle_server as server_module

    if not isinstance(server_module.np, _ZerosNoneAsScalar):
        server_module.np = _ZerosNoneAsScalar(server_module.np)


def pure_ldp_oracles() -> dict[str, Peer]:
    """ldpbench name -> pure-LDP constructor; imports pure-LDP (ImportError when it is missing)."""
    pure_ldp_numpy2()
    from pure_ldp.frequency_oracles.apple_cms import CMSClient, CMSServer
    from pure_ldp.frequency_oracles.direct_encoding import DEClient, DEServer
    from pure_ldp.frequency_oracles.hadamard_response import HadamardResponseClient, HadamardResponseServer
    from pure_ldp.frequency_oracles.histogram_encoding import HEClient, HEServer
    from pure_ldp.frequency_oracles.local_hashing import LHClient, LHServer
    from pure_ldp.frequency_oracles.unary_encoding import UEClient, UEServer

    def hr(eps: float, d: int, ours: object) -> tuple[object, object]:
        server = HadamardResponseServer(eps, d, index_mapper=_identity)
        return HadamardResponseClient(eps, d, server.get_hash_funcs(), index_mapper=_identity), server

    def cms(hadamard: bool) -> Callable[[float, int, object], tuple[object, object]]:
        def make(eps: float, d: int, ours: object) -> tuple[object, object]:
            k, m = sketch_shape(ours)
            server = CMSServer(eps, k, m, is_hadamard=hadamard)
            return CMSClient(eps, server.get_hash_funcs(), m, is_hadamard=hadamard), server

        return make

    return {
        "grr": Peer("DE", lambda e, d, o: (DEClient(e, d, _identity), DEServer(e, d, _identity))),
        "olh": Peer(
            "LH(use_olh=True)",
            lambda e, d, o: (
                LHClient(e, d, use_olh=True, index_mapper=_identity),
                LHServer(e, d, use_olh=True, index_mapper=_identity),
            ),
        ),
        "blh": Peer(
            "LH(g=2)",
            lambda e, d, o: (LHClient(e, d, g=2, index_mapper=_identity), LHServer(e, d, g=2, index_mapper=_identity)),
        ),
        "oue": Peer(
            "UE(use_oue=True)",
            lambda e, d, o: (
                UEClient(e, d, use_oue=True, index_mapper=_identity),
                UEServer(e, d, use_oue=True, index_mapper=_identity),
            ),
        ),
        "sue": Peer(
            "UE", lambda e, d, o: (UEClient(e, d, index_mapper=_identity), UEServer(e, d, index_mapper=_identity))
        ),
        "she": Peer(
            "HE", lambda e, d, o: (HEClient(e, d, index_mapper=_identity), HEServer(e, d, index_mapper=_identity))
        ),
        "the": Peer(
            "HE(use_the=True)",
            lambda e, d, o: (
                HEClient(e, d, index_mapper=_identity),
                HEServer(e, d, use_the=True, index_mapper=_identity),
            ),
        ),
        "hr": Peer("HadamardResponse", hr, caveat="pure-LDP's HR is another protocol (blocked HR) for eps > 1"),
        # pure-LDP implements Apple's fixed family of k hash functions: our estimator=apple
        "cms": Peer("CMS", cms(False), ours_params={"estimator": "apple"}),
        "hcms": Peer("CMS(is_hadamard=True)", cms(True), ours_params={"estimator": "apple"}),
    }


def multi_freq_ldpy_oracles() -> dict[str, PeerFunctions]:
    """ldpbench name -> multi-freq-ldpy's client and aggregator (``*_Aggregator_MI``: the unbiased
    estimator, clipped at 0 and normalized); imports multi-freq-ldpy (ImportError when missing)."""
    from multi_freq_ldpy.pure_frequency_oracles.ADP import ADP_Aggregator_MI, ADP_Client
    from multi_freq_ldpy.pure_frequency_oracles.GRR import GRR_Aggregator_MI, GRR_Client
    from multi_freq_ldpy.pure_frequency_oracles.HE import HE_Aggregator_MI, HE_Client
    from multi_freq_ldpy.pure_frequency_oracles.LH import LH_Aggregator_MI, LH_Client
    from multi_freq_ldpy.pure_frequency_oracles.SS import SS_Aggregator_MI, SS_Client
    from multi_freq_ldpy.pure_frequency_oracles.UE import UE_Aggregator_MI, UE_Client

    return {
        "grr": PeerFunctions("GRR", GRR_Client, GRR_Aggregator_MI),
        "olh": PeerFunctions(
            "LH(optimal=True)",
            lambda v, d, e: LH_Client(v, d, e, True),
            lambda r, d, e: LH_Aggregator_MI(r, d, e, True),
        ),
        "blh": PeerFunctions(
            "LH(optimal=False)",
            lambda v, d, e: LH_Client(v, d, e, False),
            lambda r, d, e: LH_Aggregator_MI(r, d, e, False),
        ),
        "oue": PeerFunctions(
            "UE(optimal=True)", lambda v, d, e: UE_Client(v, d, e, True), lambda r, d, e: UE_Aggregator_MI(r, e, True)
        ),
        "sue": PeerFunctions(
            "UE(optimal=False)",
            lambda v, d, e: UE_Client(v, d, e, False),
            lambda r, d, e: UE_Aggregator_MI(r, e, False),
        ),
        "ss": PeerFunctions("SS", SS_Client, SS_Aggregator_MI),
        "she": PeerFunctions(
            "HE(use_thresh=False)", HE_Client, lambda r, d, e: HE_Aggregator_MI(r, d, e, use_thresh=False)
        ),
        "the": PeerFunctions(
            "HE(use_thresh=True)",
            HE_Client,
            lambda r, d, e: HE_Aggregator_MI(r, d, e, use_thresh=True),
            caveat="its THE threshold is its numerical optimum",
        ),
        "adp": PeerFunctions(
            "ADP", lambda v, d, e: ADP_Client(v, d, e, True), lambda r, d, e: ADP_Aggregator_MI(r, d, e, True)
        ),
    }


@dataclass(frozen=True)
class PeerHeavyHitter:
    """How to build pure-LDP's client and server for one of our heavy-hitter protocols."""

    label: str
    make: Callable[[float, int, object], tuple[object, object]]
    caveat: str = ""


def pure_ldp_heavy_hitters() -> dict[str, PeerHeavyHitter]:
    """ldpbench protocol name -> pure-LDP's heavy hitter; imports pure-LDP (ImportError when missing).

    ``make(eps, bits, ours)`` (``ours``: our protocol instance, or None where ldpbench has none)."""
    pure_ldp_numpy2()
    from pure_ldp.frequency_oracles.apple_cms import CMSClient, CMSServer
    from pure_ldp.heavy_hitters.apple_sfp import SFPClient, SFPServer
    from pure_ldp.heavy_hitters.prefix_extending import PEMClient, PEMServer
    from pure_ldp.heavy_hitters.treehistogram import TreeHistClient, TreeHistServer

    def pem(eps: float, bits: int, ours: object) -> tuple[object, object]:
        # pure-LDP's first group reports start_length + fragment_length bits: ours reports l_0
        step = ours.step_bits  # type: ignore[attr-defined]
        start = max(0, ours.first_bits - step)  # type: ignore[attr-defined]
        return PEMClient(eps, start, bits, step), PEMServer(eps, start, bits, step)

    def treehist(eps: float, bits: int, ours: object) -> tuple[object, object]:
        return TreeHistClient(eps, 1, bits), TreeHistServer(eps, bits, 1)

    def sfp(eps: float, bits: int, ours: object) -> tuple[object, object]:
        # pure-LDP's SFP needs a frequency oracle passed in (CMS, Apple's) and its alphabet as a set
        # (its server adds the padding character to it)
        fragment, alphabet = 4, {"0", "1"}
        server = CMSServer(eps, 64, 1024)
        client = CMSClient(eps, server.get_hash_funcs(), 1024)
        return (
            SFPClient(eps, fragment, bits, alphabet=alphabet, fo_client=client),
            SFPServer(eps, fragment, bits, alphabet=alphabet, fo_server=server),
        )

    return {
        "pem": PeerHeavyHitter("PEM", pem, caveat="OLH server hashes all 2^l_i prefixes per report"),
        "treehist": PeerHeavyHitter(
            "TreeHist",
            treehist,
            caveat="2 OLH reports at eps/2 per user; both servers hash all 2^bits items per report",
        ),
        "sfp": PeerHeavyHitter("SFP (CMS k=64, m=1024, 4-bit fragments)", sfp),
    }


def sketch_shape(ours: object) -> tuple[int, int]:
    """(k hash functions, m buckets) of our CMS/HCMS instance, from its declared parameters."""
    values = ours.get_params()  # type: ignore[attr-defined]
    return int(values["k"]), int(values["m"])


def zipf_values(d: int, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """n users' items (Zipf s = 1.1 over d items, shuffled) and their counts."""
    weights = np.arange(1, d + 1, dtype=float) ** -1.1
    values = rng.choice(d, size=n, p=weights / weights.sum())
    return values, np.bincount(values, minlength=d)


def best_of(rounds: int, run: Callable[[int], float]) -> float:
    """The smallest of ``run(r)`` (seconds) over ``rounds`` runs."""
    return min(run(r) for r in range(rounds))


def time_ours(oracle: object, counts: np.ndarray, rounds: int) -> float:
    from ldpbench.engine.simulate import simulate  # ldpbench is imported once the peers are found

    def once(r: int) -> float:
        rng = np.random.default_rng(r)
        start = time.perf_counter()
        simulate(oracle, counts, rng, "per-user")
        return time.perf_counter() - start

    return best_of(rounds, once)


def _seed_peers(r: int) -> None:
    random.seed(r)  # the peers draw from the global generators
    np.random.seed(r)


def time_pure(entry: Peer, eps: float, d: int, ours: object, values: np.ndarray, rounds: int) -> float:
    items = [int(v) for v in values]

    def once(r: int) -> float:
        _seed_peers(r)
        client, server = entry.make(eps, d, ours)
        start = time.perf_counter()
        for v in items:
            server.aggregate(client.privatise(v))
        server.estimate_all(range(d), suppress_warnings=True)
        return time.perf_counter() - start

    return best_of(rounds, once)


def time_functions(entry: PeerFunctions, eps: float, d: int, values: np.ndarray, rounds: int) -> float:
    items = [int(v) for v in values]
    entry.aggregate([entry.client(items[0], d, eps)], d, eps)  # numba compiles on the first call

    def once(r: int) -> float:
        _seed_peers(r)
        start = time.perf_counter()
        entry.aggregate([entry.client(v, d, eps) for v in items], d, eps)
        return time.perf_counter() - start

    return best_of(rounds, once)


def num(x: float) -> str:
    return "—" if math.isnan(x) else f"{x:,.0f}"


def ratio(ours: float, theirs: float) -> str:
    if math.isnan(ours) or math.isnan(theirs):
        return "—"
    return f"{ours / theirs:,.0f}×" if ours >= 10 * theirs else f"{ours / theirs:.2g}×"


def markdown(header: list[str], align: str, rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---:" if a == "r" else "---" for a in align) + "|"]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


def plain(header: list[str], align: str, rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return "\n".join(
        "  ".join(c.rjust(w) if a == "r" else c.ljust(w) for c, w, a in zip(r, widths, align)).rstrip()
        for r in [header, *rows]
    )


@dataclass
class Row:
    """One line of a table: our throughput at the peers' n and at big n, each peer's, notes."""

    name: str
    small: float
    big: float
    peers: dict[str, tuple[str, float]] = field(default_factory=dict)  # peer -> (its name, users/s)
    notes: list[str] = field(default_factory=list)

    def fastest(self) -> tuple[str, float]:
        timed = [(peer, rate) for peer, (_, rate) in self.peers.items() if not math.isnan(rate)]
        return max(timed, key=lambda t: t[1]) if timed else ("—", math.nan)


def render(
    rows: list[Row], n: int, big_n: int, as_markdown: bool, *, what: str = "oracle", peers: tuple[str, ...] = PEERS
) -> str:
    """ldpbench's users/s at n and big n, each peer's (its name), the fastest peer and the ratio."""
    header = [
        f"ldpbench {what}",
        f"ldpbench n={n:,}",
        f"ldpbench n={big_n:,}",
        *[f"{peer} n={n:,}" for peer in peers],
        "fastest peer",
        "ratio (same n)",
        "note",
    ]
    body = []
    for row in rows:
        cells = [f"`{row.name}`", num(row.small), num(row.big)]
        for peer in peers:
            label, rate = row.peers.get(peer, ("", math.nan))
            cells.append(f"{num(rate)} ({label})" if label and not math.isnan(rate) else (label or "—"))
        best, best_rate = row.fastest()
        cells += [best, ratio(row.small, best_rate), "; ".join(row.notes)]
        body.append(cells)
    align = "lrr" + "r" * len(peers) + "lrl"
    return (markdown if as_markdown else plain)(header, align, body)


def load_peers(heavy_hitters: bool) -> dict[str, dict]:
    """Each peer's table by ldpbench name (ImportError when a peer is missing)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if heavy_hitters:
            return {"pure-LDP": pure_ldp_heavy_hitters()}
        return {"pure-LDP": pure_ldp_oracles(), "multi-freq-ldpy": multi_freq_ldpy_oracles()}


def peer_failure(peer: str, exc: Exception) -> tuple[str, float]:
    # a peer's own failure: shown in the table, never hidden
    return (f"raised {type(exc).__name__}: {str(exc)[:80]}", math.nan)


def oracle_rows(args: argparse.Namespace, peers: dict[str, dict]) -> list[Row]:
    from ldpbench import build_plugins

    plugins = build_plugins()
    names = args.only or plugins.registry("oracle").names()
    unknown = sorted(set(names) - set(plugins.registry("oracle").names()))
    if unknown:
        raise SystemExit(f"compare_pure_ldp: no ldpbench oracle named {', '.join(unknown)}")
    rng = np.random.default_rng(20170816)
    values, counts = zipf_values(args.d, args.n, rng)
    _, big_counts = zipf_values(args.d, args.big_n, rng)
    rows = []
    for name in names:
        entries = {peer: table[name] for peer, table in peers.items() if name in table}
        params = next((e.ours_params for e in entries.values() if e.ours_params), {})
        ours = plugins.create("oracle", name, params, d=args.d, epsilon=args.epsilon)
        row = Row(
            name, args.n / time_ours(ours, counts, args.rounds), args.big_n / time_ours(ours, big_counts, args.rounds)
        )
        if params:
            row.notes.append("ours with " + ", ".join(f"{k}: {v}" for k, v in params.items()))
        if not peers:
            row.notes.append("peers not run (--ours-only)")
        elif not entries:
            row.notes.append("no peer implements it")
        for peer, entry in entries.items():
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    if isinstance(entry, Peer):
                        seconds = time_pure(entry, args.epsilon, args.d, ours, values, args.rounds)
                    else:
                        seconds = time_functions(entry, args.epsilon, args.d, values, args.rounds)
                row.peers[peer] = (entry.label, args.n / seconds)
            except Exception as exc:
                row.peers[peer] = peer_failure(peer, exc)
            if entry.caveat and (name != "hr" or args.epsilon > 1):
                row.notes.append(f"{peer}: {entry.caveat}")
        rows.append(row)
    return rows


def _users(population: object, rng: np.random.Generator) -> np.ndarray:
    """Every user's item (uint64), shuffled."""
    users = np.repeat(population.values, population.counts)  # type: ignore[attr-defined]
    rng.shuffle(users)
    return users


def heavy_hitter_rows(args: argparse.Namespace, peers: dict[str, dict]) -> list[Row]:
    from ldpbench import build_plugins

    plugins = build_plugins()
    names = args.only or list(HEAVY_HITTERS)
    registered = set(plugins.registry("protocol").names())
    data = {"bits": args.bits, "s": 1.1, "support": args.support}
    population = plugins.create("dataset", "zipf-bits", {**data, "n": args.n}).load(np.random.default_rng(2019))
    big_population = plugins.create("dataset", "zipf-bits", {**data, "n": args.big_n}).load(np.random.default_rng(2019))
    strings = [format(int(v), f"0{args.bits}b") for v in _users(population, np.random.default_rng(1))]

    def time_protocol(protocol: object, pop: object) -> float:
        def once(r: int) -> float:
            rng = np.random.default_rng(r)
            start = time.perf_counter()
            protocol.run(pop, args.epsilon, rng, simulation="per-user")  # type: ignore[attr-defined]
            return time.perf_counter() - start

        return best_of(args.rounds, once)

    rows = []
    for name in names:
        ours = None
        if name in registered:
            ours = plugins.create("protocol", name, {"k": args.k, **HEAVY_HITTERS.get(name, {})})
            row = Row(name, args.n / time_protocol(ours, population), args.big_n / time_protocol(ours, big_population))
        else:
            row = Row(name, math.nan, math.nan, notes=["not in ldpbench yet"])
        if not peers:
            row.notes.append("peers not run (--ours-only)")
        for peer, table in peers.items():
            entry = table.get(name)
            if entry is None:
                continue
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")

                    def once(r: int, entry: PeerHeavyHitter = entry, ours: object = ours) -> float:
                        _seed_peers(r)
                        client, server = entry.make(args.epsilon, args.bits, ours)
                        start = time.perf_counter()
                        for s in strings:
                            server.aggregate(client.privatise(s))
                        server.find_heavy_hitters(k=args.k)
                        return time.perf_counter() - start

                    row.peers[peer] = (entry.label, args.n / best_of(args.rounds, once))
            except Exception as exc:
                row.peers[peer] = peer_failure(peer, exc)
            if entry.caveat:
                row.notes.append(f"{peer}: {entry.caveat}")
        rows.append(row)
    return rows


#: ldpbench's longitudinal protocols and multi-freq-ldpy's module of each.
LONGITUDINAL = {"l-grr": "L_GRR", "l-oue": "L_OUE", "l-osue": "L_OSUE", "l-sue": "L_SUE", "l-soue": "L_SOUE"}


def multi_freq_ldpy_longitudinal() -> dict[str, PeerFunctions]:
    """ldpbench name -> multi-freq-ldpy's longitudinal client and aggregator (ImportError when missing)."""
    import importlib

    out = {}
    for ours, theirs in LONGITUDINAL.items():
        module = importlib.import_module(f"multi_freq_ldpy.long_freq_est.{theirs}")
        agg = getattr(module, f"{theirs}_Aggregator_MI")  # L_GRR's takes k, the unary ones do not
        if theirs == "L_GRR":
            aggregate = agg
        else:
            aggregate = lambda reports, k, eps_perm, eps_1, agg=agg: agg(reports, eps_perm, eps_1)  # noqa: E731
        out[ours] = PeerFunctions(theirs, getattr(module, f"{theirs}_Client"), aggregate)
    return out


def rounds_population(d: int, n: int, T: int, rng: np.random.Generator) -> object:  # noqa: N803
    """``n`` users over ``T`` rounds: Zipf(1.1) over ``[d]`` in round 0, a re-draw w.p. 0.1 per round."""
    from ldpbench.types import Population
    from ldpbench.types.rounds import Rounds

    shares = 1.0 / np.arange(1, d + 1) ** 1.1
    shares /= shares.sum()
    items = np.empty((T, n), dtype=np.int64)
    items[0] = rng.choice(d, size=n, p=shares)
    for t in range(1, T):
        redraw = rng.random(n) < 0.1
        items[t] = np.where(redraw, rng.choice(d, size=n, p=shares), items[t - 1])
    return Population(np.bincount(items[0], minlength=d), record="sequence", rounds=Rounds(items))


def time_rounds_ours(protocol: object, population: object, eps: float, simulation: str, rounds: int) -> float:
    protocol.run(population, eps, np.random.default_rng(99), simulation=simulation)  # imports, caches: untimed

    def once(r: int) -> float:
        rng = np.random.default_rng(r)
        start = time.perf_counter()
        protocol.run(population, eps, rng, simulation=simulation)
        return time.perf_counter() - start

    return best_of(rounds, once)


def time_rounds_peer(entry: PeerFunctions, population: object, eps: float, rounds: int) -> float:
    items = population.rounds.items
    d = population.d
    eps_1 = eps / 2
    entry.aggregate([entry.client(int(items[0, 0]), d, eps, eps_1)] * 2, d, eps, eps_1)  # numba, if any, compiles

    def once(r: int) -> float:
        _seed_peers(r)
        start = time.perf_counter()
        for t in range(items.shape[0]):
            entry.aggregate([entry.client(int(v), d, eps, eps_1) for v in items[t]], d, eps, eps_1)
        return time.perf_counter() - start

    return best_of(rounds, once)


def longitudinal_rows(args: argparse.Namespace, peers: dict[str, dict]) -> list[Row]:
    from ldpbench import build_plugins

    plugins = build_plugins()
    rng = np.random.default_rng(0)
    small = rounds_population(args.d, args.n, args.T, rng)
    big = rounds_population(args.d, args.big_n, args.T, rng)
    reports_small, reports_big = args.n * args.T, args.big_n * args.T
    rows = []
    for name in args.only or LONGITUDINAL:
        proto = plugins.create("protocol", name, {"alpha": 0.5})
        row = Row(name, reports_small / time_rounds_ours(proto, small, args.epsilon, "per-user", args.rounds), 0.0)
        row.big = reports_big / time_rounds_ours(proto, big, args.epsilon, "per-user", args.rounds)
        agg = reports_big / time_rounds_ours(proto, big, args.epsilon, "aggregate", args.rounds)
        row.notes.append(f"aggregate path n={args.big_n:,}: {num(agg)}")
        for peer, table in peers.items():
            entry = table.get(name)
            if entry is None:
                row.peers[peer] = ("none", math.nan)
                continue
            try:
                row.peers[peer] = (
                    entry.label,
                    reports_small / time_rounds_peer(entry, small, args.epsilon, args.rounds),
                )
            except Exception as exc:  # noqa: BLE001
                row.peers[peer] = peer_failure(peer, exc)
        rows.append(row)
    return rows


#: ldpbench's multidimensional solutions (name, parameters) and multi-freq-ldpy's functions.
MULTIDIM: tuple[tuple[str, dict, str], ...] = (
    ("spl", {"oracle": "grr"}, "SPL_GRR"),
    ("spl", {"oracle": "oue"}, "SPL_UE"),
    ("smp", {"oracle": "grr"}, "SMP_GRR"),
    ("smp", {"oracle": "oue"}, "SMP_UE"),
    ("rs-fd", {"oracle": "grr"}, "RSpFD_GRR"),
    ("rs-fd", {"oracle": "oue-z"}, "RSpFD_UE_zero"),
    ("rs-fd", {"oracle": "oue-r"}, "RSpFD_UE_rnd"),
)


def multi_freq_ldpy_multidim() -> dict[str, tuple[Callable, Callable]]:
    """multi-freq-ldpy's label -> (client(tuple, sizes, a, eps), aggregator(reports, sizes, a, eps)),
    OUE for the unary ones (``optimal=True``); imports multi-freq-ldpy (ImportError when missing)."""
    from multi_freq_ldpy.mdim_freq_est import RSpFD_solution as rs
    from multi_freq_ldpy.mdim_freq_est import SMP_solution as smp
    from multi_freq_ldpy.mdim_freq_est import SPL_solution as spl

    return {
        "SPL_GRR": (spl.SPL_GRR_Client, spl.SPL_GRR_Aggregator_MI),
        "SPL_UE": (
            lambda x, k, a, e: spl.SPL_UE_Client(x, k, a, e, True),
            lambda r, k, a, e: spl.SPL_UE_Aggregator_MI(r, a, e, True),
        ),
        "SMP_GRR": (smp.SMP_GRR_Client, smp.SMP_GRR_Aggregator_MI),
        "SMP_UE": (
            lambda x, k, a, e: smp.SMP_UE_Client(x, k, a, e, True),
            lambda r, k, a, e: smp.SMP_UE_Aggregator_MI(r, a, e, True),
        ),
        "RSpFD_GRR": (rs.RSpFD_GRR_Client, rs.RSpFD_GRR_Aggregator_MI),
        "RSpFD_UE_zero": (
            lambda x, k, a, e: rs.RSpFD_UE_zero_Client(x, k, a, e, True),
            lambda r, k, a, e: rs.RSpFD_UE_zero_Aggregator_MI(r, k, a, e, True),
        ),
        "RSpFD_UE_rnd": (
            lambda x, k, a, e: rs.RSpFD_UE_rnd_Client(x, k, a, e, True),
            lambda r, k, a, e: rs.RSpFD_UE_rnd_Aggregator_MI(r, k, a, e, True),
        ),
    }


def _label(name: str, params: dict) -> str:
    return f"{name}[{params['oracle']}]"


def multidim_rows(args: argparse.Namespace, peers: dict[str, dict]) -> list[Row]:
    from ldpbench import build_plugins

    plugins = build_plugins()
    data = {"a": args.attributes, "d": args.d, "s": 1.0, "rho": 0.5, "seed": 1}
    pop = plugins.create("dataset", "correlated-attributes", {**data, "n": args.n}).load(None)
    big = plugins.create("dataset", "correlated-attributes", {**data, "n": args.big_n}).load(None)
    tuples = [list(map(int, row)) for row in pop.attributes.rows]
    sizes = list(pop.attributes.sizes)
    wanted = set(args.only or [])

    def time_protocol(protocol: object, population: object, path: str) -> float:
        def once(r: int) -> float:
            rng = np.random.default_rng(r)
            start = time.perf_counter()
            protocol.run(population, args.epsilon, rng, simulation=path)  # type: ignore[attr-defined]
            return time.perf_counter() - start

        return best_of(args.rounds, once)

    rows = []
    for name, params, theirs in MULTIDIM:
        if wanted and name not in wanted and _label(name, params) not in wanted:
            continue
        ours = plugins.create("protocol", name, params)
        row = Row(
            _label(name, params),
            args.n / time_protocol(ours, pop, "per-user"),
            args.big_n / time_protocol(ours, big, "per-user"),
        )
        row.notes.append(
            f"aggregate path n={args.big_n:,}: {num(args.big_n / time_protocol(ours, big, 'aggregate'))} users/s"
        )
        if not peers:
            row.notes.append("peers not run (--ours-only)")
        for peer, table in peers.items():
            client, aggregate = table[theirs]
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    # numba compiles on the first calls; 200 users so that SMP's every attribute has reports
                    warm = [client(x, sizes, len(sizes), args.epsilon) for x in tuples[:200]]
                    aggregate(warm, sizes, len(sizes), args.epsilon)

                    def once(r: int, client: Callable = client, aggregate: Callable = aggregate) -> float:
                        _seed_peers(r)
                        start = time.perf_counter()
                        reports = [client(x, sizes, len(sizes), args.epsilon) for x in tuples]
                        aggregate(reports, sizes, len(sizes), args.epsilon)
                        return time.perf_counter() - start

                    row.peers[peer] = (theirs, args.n / best_of(args.rounds, once))
            except Exception as exc:
                row.peers[peer] = peer_failure(peer, exc)
        rows.append(row)
    return rows


def longitudinal_agreement(eps: float) -> list[list[str]]:
    """multi-freq-ldpy's variance function and clients beside ours (module docstring)."""
    import importlib

    from ldpbench import build_plugins

    var_long = importlib.import_module("multi_freq_ldpy.long_freq_est.Variance_LONG_PURE").VAR_Long_Pure
    peers = multi_freq_ldpy_longitudinal()
    plugins = build_plugins()
    out = []
    d, m = 8, 5_000
    for name, entry in peers.items():
        chain = plugins.create("protocol", name, {"alpha": 0.5}).chain(d, eps)
        layers = (chain.p1, chain.q1, chain.p2, chain.q2)
        ours0, ours2 = float(chain.variance(1, 0.0)), float(chain.variance(1, 0.2))
        theirs0, theirs2 = var_long(*layers, n=1, f=0.0), var_long(*layers, n=1, f=0.2)
        _seed_peers(0)
        reports = [entry.client(0, d, eps, eps / 2) for _ in range(m)]
        if np.ndim(reports[0]) == 0:  # GRR: the reported item
            support = np.bincount(np.asarray(reports, dtype=np.int64), minlength=d) / m
        else:
            support = np.asarray(reports, dtype=float).sum(axis=0) / m
        sd_p = math.sqrt(chain.p_star * (1 - chain.p_star) / m)
        sd_q = math.sqrt(chain.q_star * (1 - chain.q_star) / m)
        z_p = (support[0] - chain.p_star) / sd_p
        z_q = (support[1:].mean() - chain.q_star) / (sd_q / math.sqrt(d - 1))
        out.append(
            [
                f"`{name}`",
                f"{ours0:.4g} / {theirs0:.4g}",
                f"{ours2:.4g} / {theirs2:.4g}",
                f"{chain.p_star:.4f} / {support[0]:.4f} ({z_p:+.1f} sd)",
                f"{chain.q_star:.4f} / {support[1:].mean():.4f} ({z_q:+.1f} sd)",
            ]
        )
    return out


def multidim_agreement(args: argparse.Namespace, peers: dict[str, dict]) -> str:
    """Per solution, the mean absolute deviation of each library's mean estimate from the truth (in
    standard errors) and the ratio of each one's summed variance to the formula's, over
    ``args.agreement`` runs on d = 4 at eps = 4 (module docstring)."""
    from ldpbench import build_plugins
    from ldpbench_plugins.oracles.grr import GRR
    from ldpbench_plugins.oracles.oue import OUE
    from ldpbench_plugins.protocols.rsfd import rsfd_variance

    plugins = build_plugins()
    R, eps, d, a = args.agreement, 4.0, 4, args.attributes  # noqa: N806
    data = {"a": a, "d": d, "s": 1.0, "rho": 0.5, "seed": 1, "n": args.n}
    pop = plugins.create("dataset", "correlated-attributes", data).load(None)
    attrs = pop.attributes
    tuples = [list(map(int, row)) for row in attrs.rows]
    sizes, n = list(attrs.sizes), attrs.n
    truth = [attrs.marginal_counts(j) / n for j in range(a)]

    def formula(name: str, oracle: str, j: int) -> np.ndarray:
        f = truth[j]
        if name == "rs-fd":
            return rsfd_variance(oracle, d, a, eps, n, f)
        fo = (GRR if oracle == "grr" else OUE)(d, eps / a if name == "spl" else eps)
        if name == "spl":
            return fo.variance(n, f)
        m = n / a  # SMP: the oracle over about n / a users, plus the sampled users' spread about f
        return fo.variance(int(m), f) + f * (1 - f) * (n - m) / (m * (n - 1))

    lines = [
        f"Agreement: {R} runs each, n = {n:,}, {a} attributes over [4], eps = 4 (correlated-attributes): "
        "max |mean - truth| in standard errors of the mean, and summed variance / the formula's",
        "",
        "| solution | ldpbench bias (max z) | ldpbench var / formula |"
        + "".join(f" {p} bias (max z) | {p} var / formula |" for p in peers),
        "|---|---:|---:|" + "---:|---:|" * len(peers),
    ]
    rng = np.random.default_rng(7)
    for name, params, theirs in MULTIDIM:
        ours = plugins.create("protocol", name, params)
        runs = {"ldpbench": [ours.run(pop, eps, rng, simulation="per-user") for _ in range(R)]}
        estimates = {
            "ldpbench": [[np.asarray(r[f"a{j}"].frequencies, dtype=float) for j in range(a)] for r in runs["ldpbench"]]
        }
        for peer, table in peers.items():
            client, aggregate = table[theirs]
            got = []
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for r in range(R):
                    _seed_peers(1000 + r)
                    out = aggregate([client(x, sizes, a, eps) for x in tuples], sizes, a, eps)
                    got.append([np.asarray(out[j], dtype=float) for j in range(a)])
            estimates[peer] = got
        cells = []
        for lib in ["ldpbench", *peers]:
            z, ratio_ = 0.0, []
            for j in range(a):
                est = np.stack([e[j] for e in estimates[lib]])
                var = est.var(axis=0, ddof=1)
                z = max(z, float(np.max(np.abs(est.mean(axis=0) - truth[j]) / np.sqrt(np.maximum(var, 1e-18) / R))))
                ratio_.append(var.sum() / formula(name, params["oracle"], j).sum())
            cells += [f"{z:.1f}", f"{np.mean(ratio_):.2f}"]
        lines.append(f"| `{_label(name, params)}` | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--heavy-hitters", action="store_true", help="heavy-hitter protocols instead of oracles")
    parser.add_argument(
        "--longitudinal", action="store_true", help="memoized longitudinal protocols (multi-freq-ldpy's) instead"
    )
    parser.add_argument("--T", type=int, default=10, help="longitudinal: rounds (default 10)")
    parser.add_argument(
        "--multidimensional",
        action="store_true",
        help="multidimensional solutions (SPL, SMP, RS+FD) instead of oracles",
    )
    parser.add_argument("--attributes", type=int, default=5, help="multidimensional: attributes per user (default 5)")
    parser.add_argument(
        "--agreement", type=int, default=0, help="multidimensional: also compare estimates over this many runs"
    )
    parser.add_argument("--n", type=int, help="users for every library (default 2,000; 200 with --heavy-hitters)")
    parser.add_argument(
        "--big-n", type=int, help="users for ldpbench alone (default 200,000; 1,000,000 with --heavy-hitters)"
    )
    parser.add_argument(
        "--d", type=int, help="oracles: domain size (default 1,024); multidimensional: each attribute's (default 16)"
    )
    parser.add_argument("--bits", type=int, default=16, help="heavy hitters: item width in bits (default 16)")
    parser.add_argument("--support", type=int, default=1_000, help="heavy hitters: distinct items held (default 1,000)")
    parser.add_argument("--k", type=int, default=8, help="heavy hitters: items to identify (default 8)")
    parser.add_argument("--epsilon", type=float, help="privacy budget (default 1; 4 with --heavy-hitters)")
    parser.add_argument("--rounds", type=int, default=3, help="best of this many runs (default 3)")
    parser.add_argument("--only", "--oracles", nargs="*", dest="only", help="only these ldpbench oracles / protocols")
    parser.add_argument("--ours-only", action="store_true", help="time ldpbench alone (no peer is imported)")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = parser.parse_args(argv)
    hh, md = args.heavy_hitters, args.multidimensional
    args.d = args.d or (16 if md else 1_024)
    if args.longitudinal:
        return longitudinal_main(args)
    args.n = args.n or (200 if hh else 2_000)
    args.big_n = args.big_n or (1_000_000 if hh else 200_000)
    args.epsilon = args.epsilon if args.epsilon is not None else (4.0 if hh else 1.0)
    peers: dict[str, dict] = {}
    if not args.ours_only:
        try:
            peers = {"multi-freq-ldpy": multi_freq_ldpy_multidim()} if md else load_peers(hh)
        except ImportError as exc:
            print(
                f"compare_pure_ldp: a peer is not installed ({exc}).\nInstall the peers beside ldpbench with:\n"
                f"    {INSTALL}\nor time ldpbench alone with --ours-only.",
                file=sys.stderr,
            )
            return 2
    load = os.getloadavg()[0]
    if md:
        rows = multidim_rows(args, peers)
        load = f"load average {max(load, os.getloadavg()[0]):.1f} on {os.cpu_count()} cores"
        print(
            f"Per-user multidimensional solutions, correlated-attributes ({args.attributes} attributes over "
            f"[{args.d}], Zipf(1), rho 0.5), ε = {args.epsilon:g}; users/s (every user's whole report and all "
            f"attributes' estimates), best of {args.rounds}; {load}:"
        )
        print()
        print(
            render(rows, args.n, args.big_n, args.markdown, what="solution", peers=tuple(peers) or ("multi-freq-ldpy",))
        )
        if args.agreement:
            print()
            print(multidim_agreement(args, peers))
        return 0
    rows = heavy_hitter_rows(args, peers) if hh else oracle_rows(args, peers)
    load = f"load average {max(load, os.getloadavg()[0]):.1f} on {os.cpu_count()} cores"
    if hh:
        print(
            f"Per-user heavy hitters, zipf-bits (bits = {args.bits}, Zipf(1.1) over {args.support:,} items), "
            f"k = {args.k}, ε = {args.epsilon:g}; users/s (reports and the server's search), best of {args.rounds}; "
            f"{load}:"
        )
    else:
        print(
            f"Per-user simulation, d = {args.d:,}, ε = {args.epsilon:g}, Zipf(1.1) users; users/s "
            f"(reports, aggregation, all d estimates), best of {args.rounds}; {load}:"
        )
    print()
    if hh:
        print(render(rows, args.n, args.big_n, args.markdown, what="protocol", peers=HEAVY_HITTER_PEERS))
    else:
        print(render(rows, args.n, args.big_n, args.markdown))
    return 0


def longitudinal_main(args: argparse.Namespace) -> int:
    args.n = args.n or 2_000
    args.big_n = args.big_n or 200_000
    args.epsilon = args.epsilon if args.epsilon is not None else 2.0
    if args.d == 1_024:  # the oracles' default: longitudinal runs d = 64 unless told
        args.d = 64
    peers: dict[str, dict] = {}
    if not args.ours_only:
        try:
            peers = {"multi-freq-ldpy": multi_freq_ldpy_longitudinal()}
        except ImportError as exc:
            print(f"compare_pure_ldp: multi-freq-ldpy is not installed ({exc}); {INSTALL}", file=sys.stderr)
            return 2
    load = os.getloadavg()[0]
    rows = longitudinal_rows(args, peers)
    load = f"load average {max(load, os.getloadavg()[0]):.1f} on {os.cpu_count()} cores"
    print(
        f"Longitudinal, d = {args.d:,}, T = {args.T} rounds, eps_inf = {args.epsilon:g}, eps_1 = eps_inf / 2; "
        f"user-reports/s (every report and the T estimates), best of {args.rounds}; {load}:"
    )
    print()
    print(render(rows, args.n, args.big_n, args.markdown, what="protocol", peers=("multi-freq-ldpy",)))
    if peers:
        print()
        print(f"multi-freq-ldpy's results beside ours (eps_inf = {args.epsilon:g}, eps_1 = eps_inf / 2, d = 8):")
        print()
        header = ["protocol", "Var, f = 0 (n = 1): ours / theirs", "Var, f = 0.2", "p* / their rate", "q* / their rate"]
        print((markdown if args.markdown else plain)(header, "lllll", longitudinal_agreement(args.epsilon)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
