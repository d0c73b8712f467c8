"""``ldpbench audit NAME``: is an oracle as private as the epsilon it claims?

Two audits (``docs/audit.md``). **Exact**, where the oracle has an output table: every likelihood
ratio at d = 2..8 and over sampled values of its declared parameters, against e^eps — a proof or a
counterexample. **Empirical**, at any size: distinguishing attacks on the reports of pairs of
inputs (LDP-Auditor, Arcolezi & Gambs, PETS 2024) give a lower confidence bound on the epsilon the
oracle really spends; with the default alpha = 0.05 split over every attack, a correct oracle is
flagged with probability at most 5%.

Before the exact audit's proof counts, the reports ``perturb`` returns, encoded as a client sends
them, are tested against the output table at every point it enumerated ("reports:").

Exit 0 when every part ran and all are consistent with the claim; 3 when the lower bound exceeds the
claimed epsilon, the exact audit finds a ratio above e^eps, the reports do not follow the table, the
plugin raises, or a part could not run (no output table at the default parameters, no empirical
attack, reports not tied to the table): "could not audit" is not "passed" unless --allow-partial.

A **longitudinal protocol** (record ``sequence``, e.g. ``l-osue``) gets the averaging attack across
rounds instead (``ldpbench.audit.averaging``, docs/longitudinal.md): users keep one value for T
reports (``--rounds``, default 1, 4, 16, 64; ``--trials`` users per point, ``--domain`` values);
the adversary guesses the most supported item, and the success rate gives a lower bound on the
loss of the T reports together, compared with what is claimed for them, ``min(eps_inf, T eps_1)``.
Exit 3 when a bound exceeds it; a declared ``eps_inf`` beyond what the attack can show at these
sizes is "cannot reach" (partial), not a pass; the naive protocol (no ``eps_inf``) shows its loss
growing with T.

A **multidimensional protocol** (record ``tuple``, e.g. ``rs-fd``) gets the whole-record audit
(``ldpbench.audit.records``, docs/multidimensional.md): at small attribute sizes (``--sizes``,
default 2,2 / 2,3 / 2,2,2) and every ``--epsilon``, the exact epsilon of ``report_table`` over any
two records and over records differing in one attribute against ``record_accounting``'s bounds,
and Pearson's chi-square of ``perturb_records`` (``--trials`` reports per record) against the
table. Exit 3 on a ratio above a declared bound, reports that do not follow the table, or a
raising plugin; a part the protocol does not declare is "could not check" (partial), never a pass.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

from ldpbench.cli._common import add_param_option, add_plugin_options, param_values
from ldpbench.errors import ExitCode, UnknownPluginError, UsageError
from ldpbench.util.suggest import closest


def add_audit_options(parser: argparse.ArgumentParser, *, trials: int) -> None:
    """The audit's options, shared by ``audit`` and ``check-plugin`` (which uses fewer trials)."""
    from ldpbench.audit import verdict as audit

    parser.add_argument(
        "--domain",
        type=int,
        default=audit.DOMAIN,
        metavar="D",
        help=f"domain size of the empirical audit (default {audit.DOMAIN})",
    )
    parser.add_argument(
        "--epsilon",
        type=float,
        action="append",
        default=None,
        metavar="E",
        help="claimed budget to audit; repeatable (default " + ", ".join(map(str, audit.EPSILONS)) + ")",
    )
    parser.add_argument(
        "--trials",
        type=int,
        default=trials,
        metavar="N",
        help=f"reports drawn per input of each attacked pair (default {trials})",
    )
    parser.add_argument(
        "--alpha",
        type=float,
        default=audit.ALPHA,
        metavar="A",
        help=f"false-alarm probability of the whole audit (default {audit.ALPHA})",
    )
    parser.add_argument(
        "--allow-partial",
        action="store_true",
        help="exit 0 even when part of the audit could not run (the output says which parts ran)",
    )


#: The shuffling section's defaults: FMT21's published example (docs/shuffling.md).
SHUFFLE_N = 100_000
SHUFFLE_DELTA = 1e-6


def shuffle_statement(epsilons: tuple[float, ...], n: int, delta: float) -> dict:
    """Which shuffle bounds apply to an oracle (one report per user of a pure eps-LDP randomizer),
    under which assumptions, and the central epsilon each gives for ``n`` reports at ``delta``."""
    from ldpbench.privacy.shuffle import ASSUMPTIONS, BOUNDS, central_epsilon

    return {
        "applies": "an oracle: each user sends one report of a pure eps-LDP randomizer",
        "holds_if": "the audit's verdict is consistent (the claimed eps0 holds)",
        "assumptions": list(ASSUMPTIONS),
        "not_covered": "protocols (several reports, rounds or mechanisms per user; longitudinal "
        "collection) and personalized budgets: no bound here applies to them",
        "n": n,
        "delta": delta,
        "central_epsilon": [{"epsilon": e, **{b: central_epsilon(b, e, n, delta) for b in BOUNDS}} for e in epsilons],
        "docs": "docs/shuffling.md",
    }


def shuffle_lines(statement: dict) -> list[str]:
    """The shuffling section of the audit's text output."""
    names = [k for k in statement["central_epsilon"][0] if k != "epsilon"] if statement["central_epsilon"] else []
    out = [
        f"shuffling ({statement['docs']}): {statement['applies']}; if {statement['holds_if']}, and under "
        + "; ".join(statement["assumptions"])
        + f", {statement['n']:,} shuffled reports are (central eps, delta={statement['delta']:g})-DP with:",
        f"  {'claimed':>8}  " + "  ".join(f"{b:>17}" for b in names),
    ]
    for row in statement["central_epsilon"]:
        out.append(f"  {row['epsilon']:>8g}  " + "  ".join(f"{row[b]:>17.4f}" for b in names))
    out.append(f"  not covered: {statement['not_covered']}")
    return out


def register(sub: argparse._SubParsersAction) -> None:
    from ldpbench.audit.verdict import TRIALS

    p = sub.add_parser(
        "audit",
        help="audit an oracle's privacy (exact likelihood ratios, an empirical lower bound on epsilon) or a "
        "longitudinal protocol's loss over rounds (the averaging attack)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("name", help="oracle name, e.g. olh, or longitudinal protocol name, e.g. l-osue")
    add_param_option(p)
    add_audit_options(p, trials=TRIALS)
    p.add_argument("--seed", type=int, default=0, help="seed of the audit's random stream (default 0)")
    p.add_argument(
        "--rounds",
        type=int,
        action="append",
        metavar="T",
        help="a longitudinal protocol: number of reports of one value the averaging attack sees; repeatable "
        "(default 1, 4, 16, 64)",
    )
    p.add_argument(
        "--sizes",
        action="append",
        metavar="D1,D2,...",
        help="a multidimensional protocol: attribute domain sizes of the whole-record audit; repeatable "
        "(default 2,2 and 2,3 and 2,2,2)",
    )
    p.add_argument("--json", action="store_true", help="print the outcome as JSON")
    p.add_argument(
        "--shuffle-n",
        type=int,
        default=SHUFFLE_N,
        metavar="N",
        help=f"reports shuffled, for the central epsilon the shuffling section states (default {SHUFFLE_N:,})",
    )
    p.add_argument(
        "--shuffle-delta",
        type=float,
        default=SHUFFLE_DELTA,
        metavar="D",
        help=f"central delta of the shuffling section (default {SHUFFLE_DELTA:g})",
    )
    add_plugin_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ldpbench.audit import audit_plugin
    from ldpbench.audit.verdict import EPSILONS
    from ldpbench.cli._common import plugins_from_args

    if not 0 < args.shuffle_delta < 1:
        raise UsageError(f"--shuffle-delta must lie in (0, 1), got {args.shuffle_delta}")
    if args.shuffle_n < 1:
        raise UsageError(f"--shuffle-n must be at least 1, got {args.shuffle_n}")
    plugins = plugins_from_args(args)  # --plugins-dir and --disable-plugin, like every command
    if args.name not in plugins.registry("oracle") and args.name in plugins.registry("protocol"):
        if "tuple" in plugins.create("protocol", args.name, param_values(args.param)).tags().records:
            return _run_records(args, plugins)
        return _run_rounds(args, plugins)
    if args.name not in plugins.registry("oracle"):
        names = sorted(i.name for i in plugins.registry("oracle"))
        raise UnknownPluginError("oracle", args.name, closest(args.name, names), names)
    result = audit_plugin(
        plugins,
        args.name,
        param_values(args.param),
        domain=args.domain,
        epsilons=tuple(args.epsilon or EPSILONS),
        trials=args.trials,
        alpha=args.alpha,
        seed=args.seed,
    )
    positive = tuple(e for e in (args.epsilon or EPSILONS) if 0 < e < float("inf"))
    statement = shuffle_statement(positive, args.shuffle_n, args.shuffle_delta)
    if args.json:
        print(json.dumps({**result.to_json(), "shuffle": statement}, indent=2, default=str))
    else:
        print("\n".join([*result.lines(), *shuffle_lines(statement)]))
    if not result.failed and result.audited and result.partial:
        missing = "; ".join(f"{k}: {v}" for k, v in result.parts().items() if v != "ran")
        print(
            f"ldpbench: the audit of '{args.name}' is partial ({missing})"
            + ("; accepted (--allow-partial)" if args.allow_partial else "; pass --allow-partial to accept it"),
            file=sys.stderr,
        )
        return int(ExitCode.OK) if args.allow_partial else int(ExitCode.PLUGIN)
    if not result.failed and not result.audited:
        # An audit that looked at nothing must not read as a pass (exit 0) in a script or CI job.
        print(
            f"ldpbench: nothing was audited: oracle '{args.name}' declares neither an output table, "
            "nor support_matrix, nor a report density (see docs/audit.md)",
            file=sys.stderr,
        )
        return int(ExitCode.PLUGIN)
    return int(ExitCode.PLUGIN) if result.failed else int(ExitCode.OK)


def _run_rounds(args: argparse.Namespace, plugins: Any) -> int:
    """The averaging attack across rounds on a longitudinal protocol (docs/longitudinal.md)."""
    from ldpbench.audit.averaging import ROUNDS, rounds_audit
    from ldpbench.audit.verdict import EPSILONS, check_options

    check_options(args.domain, args.epsilon or EPSILONS, args.trials, args.alpha)
    if any(t < 1 or t > 1_000_000 for t in args.rounds or ()):
        raise UsageError("--rounds must lie in [1, 1000000]")
    protocol = plugins.create("protocol", args.name, param_values(args.param))
    if "sequence" not in protocol.tags().records:
        raise UsageError(
            f"protocol '{args.name}' does not collect over rounds (record 'sequence'): `ldpbench audit` audits "
            "oracles and longitudinal protocols"
        )
    result = rounds_audit(
        protocol,
        name=args.name,
        params=param_values(args.param),
        d=args.domain,
        epsilons=tuple(args.epsilon or EPSILONS),
        rounds=tuple(args.rounds or ROUNDS),
        users=args.trials,
        alpha=args.alpha,
        seed=args.seed,
    )
    print(json.dumps(result.to_json(), indent=2, default=str) if args.json else "\n".join(result.lines()))
    if not result.failed and result.audited and result.partial:
        print(
            f"ldpbench: the averaging audit of '{args.name}' is partial (an eps_inf beyond the attack's reach)"
            + ("; accepted (--allow-partial)" if args.allow_partial else "; pass --allow-partial to accept it"),
            file=sys.stderr,
        )
        return int(ExitCode.OK) if args.allow_partial else int(ExitCode.PLUGIN)
    if not result.failed and not result.audited:
        print(f"ldpbench: nothing was audited: {result.reason}", file=sys.stderr)
        return int(ExitCode.PLUGIN)
    return int(ExitCode.PLUGIN) if result.failed else int(ExitCode.OK)


def _parse_sizes(raw: list[str] | None) -> tuple[tuple[int, ...], ...] | None:
    if not raw:
        return None
    out = []
    for item in raw:
        try:
            sizes = tuple(int(v) for v in item.replace("x", ",").split(","))
        except ValueError:
            raise UsageError(f"--sizes takes domain sizes like 2,3, got {item!r}") from None
        if len(sizes) < 2 or any(d < 2 for d in sizes) or math.prod(sizes) > 64:
            raise UsageError(f"--sizes needs at least two attributes of size >= 2 and at most 64 records, got {item!r}")
        out.append(sizes)
    return tuple(out)


def _run_records(args: argparse.Namespace, plugins: Any) -> int:
    """The whole-record audit of a multidimensional protocol (docs/multidimensional.md)."""
    from ldpbench.audit.records import SIZES, records_audit
    from ldpbench.audit.verdict import EPSILONS, check_options

    check_options(args.domain, args.epsilon or EPSILONS, args.trials, args.alpha)
    protocol = plugins.create("protocol", args.name, param_values(args.param))
    result = records_audit(
        protocol,
        name=args.name,
        params=param_values(args.param),
        epsilons=tuple(args.epsilon or EPSILONS),
        sizes=_parse_sizes(args.sizes) or SIZES,
        trials=args.trials,
        alpha=args.alpha,
        seed=args.seed,
    )
    print(json.dumps(result.to_json(), indent=2, default=str) if args.json else "\n".join(result.lines()))
    if not result.failed and result.audited and result.partial:
        print(
            f"ldpbench: the whole-record audit of '{args.name}' is partial (some part could not be checked)"
            + ("; accepted (--allow-partial)" if args.allow_partial else "; pass --allow-partial to accept it"),
            file=sys.stderr,
        )
        return int(ExitCode.OK) if args.allow_partial else int(ExitCode.PLUGIN)
    if not result.failed and not result.audited:
        print(f"ldpbench: nothing was audited: {result.verdict}", file=sys.stderr)
        return int(ExitCode.PLUGIN)
    return int(ExitCode.PLUGIN) if result.failed else int(ExitCode.OK)
