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
"""

from __future__ import annotations

import argparse
import json
import sys

from ldpbench.cli._common import add_param_option, add_plugin_options, param_values
from ldpbench.errors import ExitCode, UnknownPluginError
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


def register(sub: argparse._SubParsersAction) -> None:
    from ldpbench.audit.verdict import TRIALS

    p = sub.add_parser(
        "audit",
        help="audit an oracle's privacy: exact likelihood ratios and an empirical lower bound on epsilon",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("name", help="oracle name, e.g. olh")
    add_param_option(p)
    add_audit_options(p, trials=TRIALS)
    p.add_argument("--seed", type=int, default=0, help="seed of the audit's random stream (default 0)")
    p.add_argument("--json", action="store_true", help="print the outcome as JSON")
    add_plugin_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ldpbench.audit import audit_plugin
    from ldpbench.audit.verdict import EPSILONS
    from ldpbench.cli._common import plugins_from_args

    plugins = plugins_from_args(args)  # --plugins-dir and --disable-plugin, like every command
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
    if args.json:
        print(json.dumps(result.to_json(), indent=2, default=str))
    else:
        print("\n".join(result.lines()))
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
