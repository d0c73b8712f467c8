"""Per-user speed of ldpbench's oracles beside pure-LDP's implementation of the same oracle.

pure-LDP (Cormode, Maddock, Maple, PVLDB 2021; github Samuel-Maddock/pure-LDP) is NOT a dependency
of ldpbench; install it beside ldpbench only to run this script. Its package imports scikit-learn
and statsmodels (for RAPPOR) without declaring them, and its local hashing hashes ``str`` values,
which xxhash 4 refuses ("Strings must be encoded before hashing"), so::

    python3 -m venv /tmp/pure-ldp-venv
    /tmp/pure-ldp-venv/bin/pip install -e . pure-ldp scikit-learn statsmodels "xxhash<4"
    /tmp/pure-ldp-venv/bin/python scripts/compare_pure_ldp.py [--n 2000] [--big-n 200000] [--d 1024] [--epsilon 1]

What is timed, for both libraries, at the same n, d and eps: every user's report (client side),
the aggregation of the reports and the estimate of all d frequencies (server side) — the whole
per-user simulation. ldpbench runs it as ``ldpbench run`` does with ``simulation: per-user``
(:func:`ldpbench.engine.simulate.simulate`, vectorized over chunks of users); pure-LDP's clients and
servers take one user at a time (``privatise`` then ``aggregate`` in a Python loop, as its README
and its own simulations do), then ``estimate_all`` over the domain. pure-LDP is therefore timed on
a small n (``--n``, 2,000 users by default); ldpbench on the same n, and once more on ``--big-n``
users to show its throughput when fixed costs no longer dominate. Each figure is the best of
``--rounds`` runs (users/s = n / seconds).

Names (ldpbench -> pure-LDP): grr -> DE (direct encoding), olh -> LH(use_olh=True), blh ->
LH(g=2), oue -> UE(use_oue=True), sue -> UE, she -> HE, the -> HE(use_the=True), hr ->
HadamardResponse (the same high-privacy HR only for eps <= 1: above it pure-LDP switches to a
different, blocked HR), cms -> CMS, hcms -> CMS(is_hadamard=True) (Apple's fixed family of k hash
functions on both sides: our ``estimator: apple``, with our k and m). ldpbench oracles without a pure-LDP counterpart (ss, adp, pgr) are listed as such.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ldpbench import build_plugins
from ldpbench.engine.simulate import simulate

INSTALL = 'pip install pure-ldp scikit-learn statsmodels "xxhash<4"   (see this script\'s docstring)'


def _identity(x: int) -> int:
    return x


@dataclass(frozen=True)
class PureLDP:
    """How to build pure-LDP's client and server for one of our oracles."""

    label: str
    make: Callable[[float, int, object], tuple[object, object]]
    caveat: str = ""
    #: parameters of our oracle that make it the same protocol as pure-LDP's
    ours_params: dict = field(default_factory=dict)


def pure_ldp_oracles() -> dict[str, PureLDP]:
    """ldpbench name -> pure-LDP constructor; imports pure-LDP (ImportError when it is missing)."""
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
        "grr": PureLDP("DE", lambda e, d, o: (DEClient(e, d, _identity), DEServer(e, d, _identity))),
        "olh": PureLDP(
            "LH(use_olh=True)",
            lambda e, d, o: (
                LHClient(e, d, use_olh=True, index_mapper=_identity),
                LHServer(e, d, use_olh=True, index_mapper=_identity),
            ),
        ),
        "blh": PureLDP(
            "LH(g=2)",
            lambda e, d, o: (LHClient(e, d, g=2, index_mapper=_identity), LHServer(e, d, g=2, index_mapper=_identity)),
        ),
        "oue": PureLDP(
            "UE(use_oue=True)",
            lambda e, d, o: (
                UEClient(e, d, use_oue=True, index_mapper=_identity),
                UEServer(e, d, use_oue=True, index_mapper=_identity),
            ),
        ),
        "sue": PureLDP(
            "UE", lambda e, d, o: (UEClient(e, d, index_mapper=_identity), UEServer(e, d, index_mapper=_identity))
        ),
        "she": PureLDP(
            "HE", lambda e, d, o: (HEClient(e, d, index_mapper=_identity), HEServer(e, d, index_mapper=_identity))
        ),
        "the": PureLDP(
            "HE(use_the=True)",
            lambda e, d, o: (
                HEClient(e, d, index_mapper=_identity),
                HEServer(e, d, use_the=True, index_mapper=_identity),
            ),
        ),
        "hr": PureLDP("HadamardResponse", hr, caveat="pure-LDP's HR is another protocol (blocked HR) for eps > 1"),
        # pure-LDP implements Apple's fixed family of k hash functions: our estimator=apple
        "cms": PureLDP("CMS", cms(False), ours_params={"estimator": "apple"}),
        "hcms": PureLDP("CMS(is_hadamard=True)", cms(True), ours_params={"estimator": "apple"}),
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


def time_ours(oracle: object, counts: np.ndarray, rounds: int) -> float:
    best = math.inf
    for r in range(rounds):
        rng = np.random.default_rng(r)
        start = time.perf_counter()
        simulate(oracle, counts, rng, "per-user")
        best = min(best, time.perf_counter() - start)
    return best


def time_pure(entry: PureLDP, eps: float, d: int, ours: object, values: np.ndarray, rounds: int) -> float:
    best = math.inf
    items = [int(v) for v in values]
    for r in range(rounds):
        random.seed(r)  # pure-LDP draws from the global generators
        np.random.seed(r)
        client, server = entry.make(eps, d, ours)
        start = time.perf_counter()
        for v in items:
            server.aggregate(client.privatise(v))
        server.estimate_all(range(d), suppress_warnings=True)
        best = min(best, time.perf_counter() - start)
    return best


def render(rows: list[tuple], n: int, big_n: int, markdown: bool) -> str:
    """The table: ldpbench and pure-LDP users/s at n, their ratio, ldpbench at big_n."""

    def num(x: float) -> str:
        return "—" if math.isnan(x) else f"{x:,.0f}"

    header = (
        "ldpbench",
        "pure-LDP",
        f"ldpbench n={n:,}",
        f"pure-LDP n={n:,}",
        "ratio",
        f"ldpbench n={big_n:,}",
        "note",
    )
    body = [
        (name, label, num(small), num(pure), "—" if math.isnan(pure) else f"{small / pure:,.0f}x", num(big), note)
        for name, label, small, pure, big, note in rows
    ]
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|---|---|---:|---:|---:|---:|---|"]
        return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in body])
    widths = [max(len(str(r[i])) for r in [header, *body]) for i in range(len(header))]
    return "\n".join(
        "  ".join(
            str(c).ljust(w) if i in (0, 1, 6) else str(c).rjust(w) for i, (c, w) in enumerate(zip(r, widths))
        ).rstrip()
        for r in [header, *body]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=2_000, help="users for both libraries (default 2,000)")
    parser.add_argument("--big-n", type=int, default=200_000, help="users for ldpbench alone (default 200,000)")
    parser.add_argument("--d", type=int, default=1_024, help="domain size (default 1,024)")
    parser.add_argument("--epsilon", type=float, default=1.0, help="privacy budget (default 1)")
    parser.add_argument("--rounds", type=int, default=3, help="best of this many runs (default 3)")
    parser.add_argument("--oracles", nargs="*", help="only these ldpbench oracles")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = pure_ldp_oracles()
    except ImportError as exc:
        print(
            f"compare_pure_ldp: pure-LDP is not installed ({exc}).\nInstall it beside ldpbench with:\n    {INSTALL}",
            file=sys.stderr,
        )
        return 2
    plugins = build_plugins()
    names = args.oracles or plugins.registry("oracle").names()
    unknown = sorted(set(names) - set(plugins.registry("oracle").names()))
    if unknown:
        print(f"compare_pure_ldp: no ldpbench oracle named {', '.join(unknown)}", file=sys.stderr)
        return 2
    rng = np.random.default_rng(20170816)
    values, counts = zipf_values(args.d, args.n, rng)
    _, big_counts = zipf_values(args.d, args.big_n, rng)
    rows = []
    for name in names:
        entry = theirs.get(name)
        ours = plugins.create("oracle", name, entry.ours_params if entry else {}, d=args.d, epsilon=args.epsilon)
        big = args.big_n / time_ours(ours, big_counts, args.rounds)
        small = args.n / time_ours(ours, counts, args.rounds)
        if entry is None:
            rows.append((name, "—", small, math.nan, big, "no pure-LDP counterpart"))
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                pure = args.n / time_pure(entry, args.epsilon, args.d, ours, values, args.rounds)
        except Exception as exc:  # pure-LDP's own failure: shown in the table, never hidden
            rows.append((name, entry.label, small, math.nan, big, f"pure-LDP raised {type(exc).__name__}: {exc}"))
            continue
        caveat = entry.caveat if (name != "hr" or args.epsilon > 1) else ""
        rows.append((name, entry.label, small, pure, big, caveat))
    print(f"per-user simulation, d = {args.d}, eps = {args.epsilon:g}, Zipf(1.1) users; users/s, best of {args.rounds}")
    print(render(rows, args.n, args.big_n, args.markdown))
    return 0


if __name__ == "__main__":
    sys.exit(main())
