"""``ldpbench check-plugin NAME``: the conformance kit on an installed oracle, post-processor, metric
or dataset.

The command-line face of :mod:`ldpbench.testing` (scikit-learn's ``check_estimator``; compare
``asv check``): every check runs, and a table says which passed, which failed and why. Exit 0 when
all applicable checks pass, 3 when one fails (the plugin breaks the contract). A plugin that raises
inside a check fails that check (the exception and the plugin's file:line are shown); the other
checks still run.

For an oracle, a quick empirical privacy audit (``ldpbench audit`` with fewer reports) runs after
the checks as ``empirical_privacy_audit``; the exact audit is ``check_output_table_ldp``. It takes
the options of ``ldpbench audit``; ``--no-audit`` leaves it out. ``check_reports_follow_table`` tests
that what ``perturb`` sends (``encode_reports``) follows the table at every point the exact audit
enumerated.

"Could not audit" is not "passed": when a privacy part of an oracle's checks is not applicable (no
output table, reports not tied to it, no empirical attack), the command says which and exits 3
unless ``--allow-partial`` is given.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from ldpbench.audit.verdict import QUICK
from ldpbench.boundary.failures import describe_exception
from ldpbench.cli._common import add_param_option, add_plugin_options, param_values
from ldpbench.cli.audit_cmd import add_audit_options
from ldpbench.errors import ExitCode, UnknownPluginError
from ldpbench.types.kinds import CHECKED_KINDS, KINDS
from ldpbench.util.suggest import closest

#: The checks of an oracle's privacy: each must run, or the check is partial (exit 3 without
#: ``--allow-partial``).
PRIVACY_CHECKS = ("check_output_table_ldp", "check_reports_follow_table", "empirical_privacy_audit")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "check-plugin",
        help="run the conformance checks on an oracle, post-processor, metric or dataset",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("name", help="plugin name, e.g. olh or norm-sub")
    p.add_argument(
        "--kind",
        choices=CHECKED_KINDS,
        help="the plugin's kind, when the name has several (uniform is a post-processor and a dataset)",
    )
    add_param_option(p)
    add_audit_options(p, trials=QUICK)
    p.add_argument("--no-audit", action="store_true", help="skip the quick empirical privacy audit of an oracle")
    p.add_argument("--seed", type=int, default=0, help="seed of every check's random stream (default 0)")
    p.add_argument("--json", action="store_true", help="print the outcomes as JSON")
    add_plugin_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    from ldpbench.cli._common import plugins_from_args
    from ldpbench.testing import CheckSkipped, plugin_checks

    plugins = plugins_from_args(args)
    searched = (args.kind,) if args.kind else CHECKED_KINDS
    kinds = [k for k in searched if args.name in plugins.registry(k)]
    if not kinds:
        names = sorted({i.name for k in searched for i in plugins.registry(k)})
        nouns = [KINDS[k].noun.split(" ", 1)[1] for k in CHECKED_KINDS]
        what = args.kind or ", ".join(nouns[:-1]) + " or " + nouns[-1]
        raise UnknownPluginError(what, args.name, closest(args.name, names), names)
    kind = kinds[0]
    params = param_values(args.param)
    # Unknown or ill-typed parameters are a usage error here, not a failed check.
    plugins.get(kind, args.name).resolve_params(params)
    outcomes: list[dict[str, Any]] = []
    for check_name, check in plugin_checks(kind, args.name, plugins=plugins, params=params, seed=args.seed):
        started = time.perf_counter()
        try:
            note = check()
            outcome, detail = "passed", note if isinstance(note, str) else ""
        except CheckSkipped as exc:
            outcome, detail = "not applicable", str(exc)
        except AssertionError as exc:
            outcome, detail = "FAILED", str(exc) or "assertion failed"
        except Exception as exc:  # noqa: BLE001 - the plugin raised: its check fails, the others run
            outcome, detail = "FAILED", describe_exception(exc)
        outcomes.append(
            {
                "check": check_name,
                "outcome": outcome,
                "seconds": round(time.perf_counter() - started, 3),
                "detail": detail,
            }
        )
    if kind == "oracle" and not args.no_audit:
        outcomes.append(_audit_outcome(plugins, args, params))
    failed = [o for o in outcomes if o["outcome"] == "FAILED"]
    unaudited = [
        o["check"]
        for o in outcomes
        if kind == "oracle" and o["check"] in PRIVACY_CHECKS and o["outcome"] == "not applicable"
    ]
    if args.json:
        report = {"plugin": args.name, "kind": kind, "params": params, "checks": outcomes, "unaudited": unaudited}
        print(json.dumps(report, indent=2))
    else:
        label = args.name + (f" {params}" if params else "")
        tally = {k: sum(o["outcome"] == k for o in outcomes) for k in ("passed", "FAILED", "not applicable")}
        print(f"{label} ({kind}): " + ", ".join(f"{v} {k.lower()}" for k, v in tally.items() if v) + "\n")
        rows = [[o["check"], o["outcome"], f"{o['seconds']:.2f}", _cut(o["detail"])] for o in outcomes]
        print(tabulate(rows, headers=["check", "outcome", "s", "detail"]))
        # Every detail the table cut, in full: a failure's and a pass's or a skip's alike.
        for o in outcomes:
            if o["outcome"] == "FAILED" or _cut(o["detail"]) != o["detail"]:
                print(f"\n{o['check']} ({o['outcome']}):\n{o['detail']}")
    if failed:
        return int(ExitCode.PLUGIN)
    if unaudited:
        print(
            f"\nldpbench: the privacy audit of '{args.name}' is partial: {', '.join(unaudited)} could not run"
            + ("; accepted (--allow-partial)" if args.allow_partial else "; pass --allow-partial to accept it"),
            file=sys.stderr,
        )
        return int(ExitCode.OK) if args.allow_partial else int(ExitCode.PLUGIN)
    return int(ExitCode.OK)


def _audit_outcome(plugins: Any, args: argparse.Namespace, params: dict[str, Any]) -> dict[str, Any]:
    """The quick empirical audit as one more row of the table (the exact one is a kit check)."""
    from ldpbench.audit import audit_plugin
    from ldpbench.audit.verdict import EPSILONS

    started = time.perf_counter()
    result = audit_plugin(
        plugins,
        args.name,
        params,
        domain=args.domain,
        epsilons=tuple(args.epsilon or EPSILONS),
        trials=args.trials,
        alpha=args.alpha,
        seed=args.seed,
        exact=False,
    )
    emp = result.empirical
    if result.failed:
        outcome = "FAILED"
    elif emp is None or not emp.available:  # "could not audit": the command exits 3 unless --allow-partial
        outcome = "not applicable"
    else:
        outcome = "passed"
    lines = [line for line in result.lines()[1:] if not line.startswith("verdict:")]
    if outcome == "FAILED":
        lines.insert(0, result.verdict)
    elif emp is not None and emp.available:
        lines.insert(0, "lower bounds " + ", ".join(f"{_num(b.eps_lb)} <= {b.epsilon:g}" for b in emp.budgets))
    return {
        "check": "empirical_privacy_audit",
        "outcome": outcome,
        "seconds": round(time.perf_counter() - started, 3),
        "detail": "\n".join(lines),
    }


#: Characters of a detail in the table; a longer or multi-line one is printed whole below it.
DETAIL_WIDTH = 100


def _cut(detail: str) -> str:
    """The table's cell for a detail: its first line, cut at :data:`DETAIL_WIDTH` with an ellipsis."""
    first = detail.splitlines()[0] if detail else ""
    return first if len(first) <= DETAIL_WIDTH else first[: DETAIL_WIDTH - 1] + "…"


def _num(x: float) -> str:
    return f"{x:.3f}" if abs(x) != float("inf") else str(x)
