"""What every check of a spec shares: the document, the plugins, and the problems found so far.

A check records a problem as ``FILE:LINE: message`` at the path in the spec it is about and goes
on, so that all problems of a spec are reported together (:meth:`Context.raise_problems`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ldpbench.errors import SpecError
from ldpbench.loading.manager import Plugins
from ldpbench.spec.load import Document
from ldpbench.spec.model import Budget, DatasetEntry, Entry, Pipeline


class Context:
    """The spec being validated, the plugins it is checked against, and its problems."""

    def __init__(
        self,
        doc: Document,
        plugins: Plugins,
        path: Path,
        *,
        trust_user_only: bool = False,
        cell_timeout: float | None = None,
    ):
        self.doc = doc
        self.plugins = plugins
        self.path = path
        self.trust_user_only = trust_user_only
        #: the command line's --cell-timeout, which beats the spec's (bounds loading datasets here too)
        self.cell_timeout = cell_timeout
        self.problems: list[str] = []
        #: where each dataset entry sits in the spec (for the dataset-facts checks)
        self.dataset_paths: dict[int, tuple[Any, ...]] = {}
        #: the oracle entries with their paths (checked at each dataset's size)
        self.oracle_paths: list[tuple[tuple[Any, ...], Entry]] = []
        #: where each group of a personalized budget sits, by id of the Budget
        self.group_paths: dict[int, list[tuple[Any, ...]]] = {}

    def problem(self, path: tuple[Any, ...], message: str) -> None:
        """Record ``message`` at the line of ``path`` in the spec."""
        self.problems.append(f"{self.doc.where(path)}: {message}")

    def raise_problems(self) -> None:
        """Raise :class:`SpecError` listing every problem recorded, if there is any."""
        if self.problems:
            raise SpecError(self.problems)


@dataclass
class Found:
    """The values of a spec as validated, each its default where the spec's was refused."""

    name: str
    description: str
    seed: int
    repeats: int
    alpha: float
    simulation: str
    datasets: list[DatasetEntry]
    budgets: list[Budget]
    mechanisms: list[Entry]
    pipelines: list[Pipeline]
    metrics: list[Entry]
    executor: Entry | None
    requires: list[str]
    cell_timeout: Any  #: seconds as the spec gives them, None for no limit (or when refused)
    #: the poisoning settings (docs/poisoning.md); empty without ``attacks``
    poisons: list[Any] = field(default_factory=list)
