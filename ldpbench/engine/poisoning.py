"""A poisoned cell's plan: its target items and its number of fake users (docs/poisoning.md).

:func:`poisoning_plan` fixes both from the cell and the genuine population, before the mechanism
runs: the targets of ``select: random`` come from a stream keyed by (dataset, repeat) only, so
every oracle, budget and attack of a repeat promotes the same items (paired comparisons); ``m``
from ``beta`` is ``round(beta n / (1 - beta))`` for the cell's ``n`` genuine users.
The plan is handed to the attack (through :func:`~ldpbench.engine.mechanism.mechanism_outputs`)
and to the metrics (as :attr:`Population.poisoning <ldpbench.types.Population.poisoning>` of the
truth); never to a post-processor.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ldpbench.engine.simulate import report_order
from ldpbench.errors import LdpbenchError
from ldpbench.spec.expand import Cell
from ldpbench.spec.seeding import rng_for
from ldpbench.types import Poisoning, Population

#: The identity of the stream that orders kept reports (:func:`report_order_rng`).
REPORT_ORDER = "report-order"


class PoisoningError(LdpbenchError):
    """A poisoning setting that the cell's population cannot satisfy (a given target outside
    ``[0, d)``, more targets than items)."""


def select_targets(cell: Cell, population: Population) -> np.ndarray:
    """The cell's target items, sorted (see the module docstring)."""
    poison = cell.poison
    assert poison is not None
    t, d = poison.targets, population.d
    if t.select == "given":
        items = np.asarray(t.items, dtype=np.int64)
        if items.size and (items.min() < 0 or items.max() >= d):
            raise PoisoningError(f"a given target lies outside the domain [0, {d}): {list(t.items)}")
        return np.unique(items)
    if t.count > d:
        raise PoisoningError(f"{t.count} targets asked of a domain of {d} items")
    if t.select == "least-frequent":
        # The genuine population's rarest items, ties broken by the smaller item (a stable sort).
        return np.sort(np.argsort(population.counts, kind="stable")[: t.count]).astype(np.int64)
    rng = rng_for(cell.seed, "targets", cell.dataset.label, cell.repeat)
    return np.sort(rng.choice(d, size=t.count, replace=False)).astype(np.int64)


def poisoning_plan(cell: Cell, population: Population, n: int) -> Poisoning:
    """The targets and the fake users of an attacked cell whose genuine users number ``n``."""
    poison = cell.poison
    assert poison is not None
    # The validator refuses these first; this is the engine's own guard for direct callers.
    if cell.budget.groups:
        raise PoisoningError("an attack needs one budget (no 'users' groups)")
    if population.record != "item" or not population.item_domain.is_enumerable:
        raise PoisoningError("an attack needs a population of one item per user over an enumerable domain")
    m = poison.fake_count(n)
    beta = m / (n + m) if poison.beta is None or poison.attack is None else float(poison.beta)
    return Poisoning(attack=poison.attack_label, targets=select_targets(cell, population), fake_users=m, beta=beta)


def report_order_rng(cell: Cell) -> np.random.Generator:
    """The stream that shuffles a cell's kept reports (genuine and fake together) before a defense
    sees them: keyed by the cell's identity, apart from every other draw of the cell."""
    poison = cell.poison.label if cell.poison is not None else ""
    return rng_for(
        cell.seed, REPORT_ORDER, cell.dataset.label, cell.budget.label, cell.mechanism.label, poison, cell.repeat
    )


def fake_report_labels(cell: Cell, n: int, m: int) -> np.ndarray:
    """Which kept reports are fake, in the order the defense saw them: the same permutation of the
    ``n`` genuine then ``m`` fake reports (:func:`ldpbench.engine.simulate.report_order`), drawn
    again from :func:`report_order_rng`."""
    return report_order(report_order_rng(cell), n + m) >= n


def with_fake_labels(plan: Poisoning, cell: Cell, n: int) -> Poisoning:
    """``plan`` with :attr:`Poisoning.fake_reports` for a cell whose reports were kept."""
    return dataclasses.replace(plan, fake_reports=fake_report_labels(cell, n, plan.fake_users))
