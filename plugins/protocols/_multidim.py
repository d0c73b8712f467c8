"""What the multidimensional solutions share (docs/multidimensional.md): the users' rows, the
per-attribute oracles, and the exact law of a user's whole report for the audit.

Every solution takes a tuple population (``record = "tuple"``: user i holds ``rows[i, j]`` of
attribute j over ``[d_j]``) and returns one ``frequencies`` estimate per attribute, labelled by its
name. Each attribute's report comes from a built-in oracle's own code (its ``perturb`` and
``support_counts`` on the per-user path, its exact aggregate draw otherwise).

The audit view (:func:`whole_report_table`): a user's report is the report of the whole record,
``P[x, y]`` over every record ``x`` of ``[d_1] x ... x [d_a]`` (row-major) and every whole report
``y``, enumerated for small domains; :func:`max_log_ratio` is the exact epsilon of that law over
any two records, :func:`attribute_log_ratio` over records that differ in one attribute.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

from ldpbench.types import Estimate, Oracle, Population, Protocol, ProtocolTags
from ldpbench.types.attributes import Attributes
from ldpbench.types.domain import FREQUENCIES
from ldpbench_plugins.oracles.grr import GRR
from ldpbench_plugins.oracles.olh import OLH
from ldpbench_plugins.oracles.oue import OUE
from ldpbench_plugins.oracles.sue import SUE

#: The oracles SPL and SMP run per attribute (any built-in with an exact aggregate path would do;
#: these are the ones multi-freq-ldpy and the RS+FD paper use).
ORACLES: dict[str, type[Oracle]] = {"grr": GRR, "oue": OUE, "sue": SUE, "olh": OLH}


def attributes_of(population: Population) -> Attributes:
    """The users' rows; a population that is not a tuple is refused (``validate`` refuses it
    first: the solutions' tags take ``tuple`` records only)."""
    if population.attributes is None:
        raise ValueError(f"a multidimensional solution needs a population of tuples, not of '{population.record}'")
    return population.attributes


def relabelled(estimate: Estimate, mechanism: str, epsilon: float) -> Estimate:
    """An attribute's estimate named after the solution, at the user's whole budget."""
    return estimate.replace(mechanism=mechanism, epsilon=float(epsilon))


class MultidimProtocol(Protocol):
    """A solution for users with several attributes: one ``frequencies`` output per attribute."""

    def tags(self) -> ProtocolTags:
        return ProtocolTags(
            result=FREQUENCIES, enumerates_domain=True, records=("tuple",), aggregate=True, **self.output_capabilities()
        )

    def output_capabilities(self) -> dict[str, bool]:
        """What each attribute's estimate offers post-processors (``ProtocolTags.output_*``), read
        from the ``oracle:`` the solution runs: GRR's estimates carry the report histogram and its
        randomized-response channel; unary and hashed ones (OUE, SUE, OLH, RS+FD's OUE variants)
        only Bernoulli support counts with ``p*``, ``q*`` (IBU, no EM-family step); an oracle this
        table does not know declares nothing (no check)."""
        oracle = getattr(self, "oracle", None)
        if oracle == "grr":
            return {"output_channel": True, "output_randomized_response": True, "output_likelihood": True}
        if oracle in ("oue", "sue", "olh", "oue-z", "oue-r"):
            return {"output_channel": False, "output_randomized_response": False, "output_likelihood": True}
        return {}

    def privacy_accounting(self, epsilon: float) -> list[dict[str, object]]:
        """One report of the whole record per user, epsilon-LDP in total."""
        return [{"group": "all users", "model": "local", "epsilon": float(epsilon), "per_round": [float(epsilon)]}]

    def record_accounting(self, epsilon: float, sizes: tuple[int, ...]) -> dict[str, object]:
        """What the conformance kit audits ``report_table`` against (``ldpbench.testing.checks.
        multidim``): ``per_attribute``, the budget each attribute's report is randomized at;
        ``any_records``, the bound of the whole report over any two records; ``one_attribute``,
        over records that differ in one attribute. Default: each attribute at ``epsilon``, one
        of them reported (SMP's)."""
        return {
            "per_attribute": [float(epsilon)] * len(sizes),
            "any_records": float(epsilon),
            "one_attribute": float(epsilon),
        }

    def report_widths(self, sizes: tuple[int, ...], epsilon: float) -> list[int]:
        """How many reports each attribute's column of ``perturb_records`` takes (its oracle's)."""
        raise NotImplementedError

    def report_columns(self, reports: np.ndarray, sizes: tuple[int, ...], epsilon: float) -> np.ndarray:
        """The ``report_table`` column of each whole report ``perturb_records`` drew (one column
        per attribute, row-major over :meth:`report_widths`)."""
        reports = np.asarray(reports, dtype=np.int64)
        return np.ravel_multi_index(tuple(reports.T), tuple(self.report_widths(sizes, epsilon)))


def oracle_matrix(oracle: Oracle) -> np.ndarray:
    """``M[x, y] = P(y | x)`` of a built-in oracle at a small ``d`` (its own ``output_table``)."""
    P, _ = oracle.output_table()
    return np.asarray(P, dtype=float).T


def kron_all(blocks: Sequence[np.ndarray]) -> np.ndarray:
    """``blocks[0] (x) blocks[1] (x) ...``: records and reports both in row-major order."""
    out = np.ones((1, 1))
    for b in blocks:
        out = np.kron(out, b)
    return out


def records_of(sizes: Sequence[int]) -> list[tuple[int, ...]]:
    """Every record of ``[d_1] x ... x [d_a]``, in row-major order (the rows of an audit table)."""
    return list(itertools.product(*(range(d) for d in sizes)))


def max_log_ratio(P: np.ndarray) -> float:
    """``max_y max_{x, x'} ln P[x, y] / P[x', y]``: the exact epsilon of the law (inf if some
    report is possible for one record and impossible for another)."""
    hi, lo = P.max(axis=0), P.min(axis=0)
    used = hi > 0
    if np.any(lo[used] <= 0):
        return math.inf
    return float(np.max(np.log(hi[used] / lo[used])))


def attribute_log_ratio(P: np.ndarray, sizes: Sequence[int]) -> float:
    """As :func:`max_log_ratio`, over pairs of records that differ in exactly one attribute."""
    a = len(sizes)
    T = P.reshape(tuple(sizes) + (P.shape[1],))
    worst = 0.0
    for j in range(a):
        hi, lo = T.max(axis=j), T.min(axis=j)  # over attribute j, the others fixed
        used = hi > 0
        if np.any(lo[used] <= 0):
            return math.inf
        worst = max(worst, float(np.max(np.log(hi[used] / lo[used]))))
    return worst
