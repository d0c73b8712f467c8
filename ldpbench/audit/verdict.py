"""Both audits of one installed oracle, their verdict, and how to print it (for the CLI).

``ldpbench audit`` runs :func:`audit_plugin` with the full defaults; ``ldpbench check-plugin`` with
:data:`QUICK` trials. A plugin that raises while being audited fails the audit with the exception
and its ``file:line`` (never a traceback).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ldpbench.audit.empirical import EmpiricalAudit, empirical_audit
from ldpbench.audit.exact import ExactAudit, exact_audit
from ldpbench.boundary.failures import describe_exception
from ldpbench.errors import LdpbenchError, UsageError
from ldpbench.types.oracle import MIN_DOMAIN

#: Defaults of ``ldpbench audit``: a domain where a report's joint structure is cheap to learn, the
#: budgets of the kit, and enough reports that a doubled epsilon is caught at every budget.
DOMAIN = 16
EPSILONS = (0.5, 1.0, 4.0)
TRIALS = 20_000
ALPHA = 0.05
#: Reports per input of ``check-plugin``'s quick form (about 4x less work, still catches 2 eps).
QUICK = 5_000
#: Upper limit on ``--trials`` (the audit draws trials x pairs x budgets x 2 reports).
MAX_TRIALS = 10_000_000
#: Upper limit on ``--domain`` (an oracle may hold O(d) state; each report row is d cells).
MAX_DOMAIN = 1 << 20


@dataclass
class PluginAudit:
    """The outcome of both audits of one plugin."""

    name: str
    params: Mapping[str, Any]
    exact: ExactAudit | None = None
    empirical: EmpiricalAudit | None = None
    errors: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return bool(
            self.errors
            or (self.exact is not None and not self.exact.passed)
            or self.law_failed
            or (self.empirical is not None and self.empirical.leak)
        )

    @property
    def law_failed(self) -> bool:
        law = self.exact.law if self.exact is not None else None
        return law is not None and law.available and not law.passed

    def parts(self) -> dict[str, str]:
        """Each part of the audit: ``"ran"`` or why it did not (what ``partial`` is made of)."""
        out: dict[str, str] = {}
        if self.exact is not None:
            if not self.exact.available:
                out["exact"] = "no output table (output_table() not implemented)"
            elif not self.exact.findings:
                out["exact"] = "no output table could be enumerated"
            elif not self.exact.at_defaults:
                out["exact"] = "no output table could be enumerated at the given (default) parameters"
            else:
                out["exact"] = "ran"
            law = self.exact.law
            if law is not None:
                out["reports"] = "ran" if law.available else law.summary().removeprefix("not run: ")
        if self.empirical is not None:
            out["empirical"] = "ran" if self.empirical.available else (self.empirical.reason or "not run")
        return out

    @property
    def partial(self) -> bool:
        """Whether some part of the audit could not run: "could not audit" is never "passed"."""
        return any(v != "ran" for v in self.parts().values())

    @property
    def audited(self) -> bool:
        """Whether either audit could look at the plugin at all (an output table or per-user supports)."""
        proven = self.exact is not None and self.exact.available and bool(self.exact.findings)
        tested = self.empirical is not None and self.empirical.available
        return proven or tested

    @property
    def verdict(self) -> str:
        if self.errors:
            return "FAILED: the plugin raised while being audited"
        if self.exact is not None and not self.exact.passed:
            return "LEAK: the exact output law breaks the epsilon it claims"
        if self.law_failed:
            return "LEAK: the reports perturb returns do not follow the output table the exact audit proved"
        if self.empirical is not None and self.empirical.leak:
            return "LEAK: an attack shows more than the claimed epsilon"
        if not self.audited:
            return "not audited: no output table, no support_matrix and no report density"
        if self.partial:
            missing = ", ".join(k for k, v in self.parts().items() if v != "ran")
            return f"partial: no evidence of more privacy loss than claimed, but {missing} did not run"
        return "consistent: no evidence of more privacy loss than claimed"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "plugin": self.name,
            "params": dict(self.params),
            "verdict": self.verdict,
            "failed": self.failed,
            "partial": self.partial,
            "parts": self.parts(),
            "errors": list(self.errors),
        }
        if self.exact is not None:
            out["exact"] = {
                "available": self.exact.available,
                "passed": self.exact.passed,
                "summary": self.exact.summary(),
                "domains": list(self.exact.domains),
                "tables": len(self.exact.findings),
                "skipped": list(self.exact.skipped),
            }
            if self.exact.law is not None:
                out["reports"] = {"available": self.exact.law.available, "summary": self.exact.law.summary()}
        emp = self.empirical
        if emp is not None:
            out["empirical"] = {
                "d": emp.d,
                "trials": emp.trials,
                "alpha": emp.alpha,
                "tests": emp.tests,
                "reason": emp.reason,
                "budgets": [_budget_json(b) for b in emp.budgets],
            }
        return out

    def lines(self) -> list[str]:
        label = self.name + "".join(f" {k}={v}" for k, v in self.params.items())
        out = [f"audit of {label}"]
        emp = self.empirical
        if emp is not None and emp.available:
            density = any(b.declared_loss > -math.inf for b in emp.budgets)
            attacks = "likelihood-ratio on the declared density" if density else "item, absent, pair, joint"
            out.append(
                f"empirical: d={emp.d}, {emp.trials} reports per input, alpha={emp.alpha:g} split over "
                f"{emp.tests} attacks ({attacks})"
            )
            if density:
                out.append(
                    "  continuous reports: no output table (the exact audit does not apply); the declared "
                    "density's worst privacy loss over the drawn reports:"
                )
                for b in emp.budgets:
                    flag = "  LEAK" if b.density_leak else ""
                    out.append(f"  {b.epsilon:>8g}  {_fmt(b.declared_loss):>11}{flag}")
            out.append(f"  {'claimed':>8}  {'lower bound':>11}  {'interval':>16}  attack")
            for b in emp.budgets:
                best = b.best
                if best is None:
                    continue
                interval = f"[{_fmt(best.eps_lb)}, {_fmt(best.eps_ub)}]"
                flag = "  LEAK" if b.leak else ""
                out.append(f"  {b.epsilon:>8g}  {_fmt(b.eps_lb):>11}  {interval:>16}  {best.describe()}{flag}")
        elif emp is not None:
            out.append(f"empirical: {emp.reason}")
        if self.exact is not None:
            out.append(f"exact: {self.exact.summary()}")
            if self.exact.law is not None:
                out.append(f"reports: {self.exact.law.summary()}")
        for err in self.errors:
            out.append(f"error: {err}")
        out.append(f"verdict: {self.verdict}")
        return out


def _fmt(x: float) -> str:
    return "inf" if x == math.inf else "-inf" if x == -math.inf else f"{x:.3f}"


def _budget_json(b: Any) -> dict[str, Any]:
    best = b.best
    return {
        "epsilon": b.epsilon,
        "eps_lb": b.eps_lb,
        "declared_loss": None if b.declared_loss == -math.inf else b.declared_loss,
        "leak": b.leak,
        "best": None
        if best is None
        else {
            "attack": best.attack,
            "pair": [best.v1, best.v2],
            "fired1": best.fired1,
            "n1": best.n1,
            "fired2": best.fired2,
            "n2": best.n2,
            "eps_lb": best.eps_lb,
            "eps_ub": best.eps_ub,
        },
    }


def check_options(domain: int, epsilons: Sequence[float], trials: int, alpha: float) -> None:
    """Refuse impossible or unbounded settings as a usage error (exit 2)."""
    if not MIN_DOMAIN <= domain <= MAX_DOMAIN:
        raise UsageError(f"--domain must lie in [{MIN_DOMAIN}, {MAX_DOMAIN}], got {domain}")
    if not 2 <= trials <= MAX_TRIALS:
        raise UsageError(f"--trials must lie in [2, {MAX_TRIALS}], got {trials}")
    if not 0 < alpha < 1:
        raise UsageError(f"--alpha must lie in (0, 1), got {alpha}")
    for eps in epsilons:
        if not (math.isfinite(eps) and eps > 0):
            raise UsageError(f"--epsilon must be a positive finite number, got {eps}")


def audit_plugin(
    plugins: Any,
    name: str,
    params: Mapping[str, Any],
    *,
    domain: int = DOMAIN,
    epsilons: Sequence[float] = EPSILONS,
    trials: int = TRIALS,
    alpha: float = ALPHA,
    seed: int = 0,
    exact: bool = True,
) -> PluginAudit:
    """Run the exact audit (where a table exists) and the empirical one on oracle ``name``."""
    check_options(domain, epsilons, trials, alpha)
    info = plugins.get("oracle", name)
    values = info.resolve_params(params).values
    for p in info.params:
        if p.plugin_kind and isinstance(values.get(p.name), str):
            values[p.name] = plugins.create(p.plugin_kind, values[p.name])
    result = PluginAudit(name, dict(params))
    if exact:
        try:
            result.exact = exact_audit(
                info.cls, epsilons, values=values, fixed=tuple(params), seed=seed, law=True, alpha=alpha
            )
        except LdpbenchError:
            raise
        except Exception as exc:  # noqa: BLE001 - the plugin's failure is the audit's finding
            result.errors.append("exact audit: " + describe_exception(exc))
    try:
        result.empirical = empirical_audit(
            lambda eps: info.cls(d=domain, epsilon=eps, **values),
            epsilons,
            trials=trials,
            alpha=alpha,
            seed=seed,
        )
    except LdpbenchError:
        raise
    except Exception as exc:  # noqa: BLE001
        result.errors.append("empirical audit: " + describe_exception(exc))
    return result
