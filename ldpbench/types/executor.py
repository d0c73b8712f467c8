"""The executor contract: :class:`Executor`, and :class:`TaskLost`, what it yields for a task
whose process died."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ldpbench.types.plugin import Plugin
from ldpbench.types.tags import ExecutorTags


@dataclass(frozen=True)
class TaskLost:
    """What an executor yields instead of a task's result when the process running it died.

    A worker killed by a segfault, ``os._exit`` or the OOM killer returns no rows; the runner
    stores the cell as failed (``reason`` in every row's ``error``), so the run completes with
    exit 3 and a rerun retries the cell, as for a plugin that raised.
    """

    task: Any
    reason: str


class Executor(Plugin):
    """Runs cell tasks: in-process, on a local process pool, on a cluster."""

    @abstractmethod
    def map_unordered(self, fn: Callable[[Any], Any], tasks: Iterable[Any]) -> Iterator[Any]:
        """Apply the picklable ``fn`` to every task; yield results as they finish, or a
        :class:`TaskLost` for a task whose process died."""

    @classmethod
    def contract_problems(kind, cls: type) -> list[str]:
        """The executor's registration rule: its class-level :meth:`tags` declare ``default_for``
        as None, ``"serial"`` or ``"parallel"``."""
        problems = super().contract_problems(cls)
        tags = cls.tags() if issubclass(cls, Executor) else None
        if not isinstance(tags, ExecutorTags) or tags.default_for not in (None, "serial", "parallel"):
            problems.append(
                f"tags() must return ExecutorTags with default_for None, 'serial' or 'parallel', got {tags!r}"
            )
        return problems

    @classmethod
    def tags(cls) -> ExecutorTags:
        """Override to set ``default_for`` (``"serial"`` / ``"parallel"``): the executor a run uses
        when neither the command line nor the spec names one. A class method: the runner chooses
        an executor before building it."""
        return ExecutorTags()

    def close(self) -> None:
        """Release workers."""
