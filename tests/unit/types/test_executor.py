"""The executor contract (ldpbench/types/executor.py): ``default_for`` declared by class-level tags,
and what a lost task is."""

from __future__ import annotations

import dataclasses

import pytest

from ldpbench.types import Executor, ExecutorTags, TaskLost


class Serial(Executor):
    name = "serial-test"

    def map_unordered(self, fn, tasks):
        return map(fn, tasks)

    @classmethod
    def tags(cls):
        return ExecutorTags(default_for="serial")


class Everywhere(Serial):
    name = "everywhere"

    @classmethod
    def tags(cls):
        return ExecutorTags(default_for="always")


class Untagged(Serial):
    name = "untagged"

    @classmethod
    def tags(cls):
        return {"default_for": "serial"}


def test_default_for_is_none_serial_or_parallel():
    assert Executor.contract_problems(Serial) == []
    assert ExecutorTags() == Executor.tags() and Executor.tags().default_for is None
    (problem,) = Executor.contract_problems(Everywhere)
    assert "default_for None, 'serial' or 'parallel'" in problem and "'always'" in problem
    (problem,) = Executor.contract_problems(Untagged)
    assert "tags() must return ExecutorTags" in problem


def test_an_executor_maps_and_closes():
    executor = Serial()
    assert sorted(executor.map_unordered(lambda x: 2 * x, [1, 2, 3])) == [2, 4, 6]
    assert executor.close() is None


def test_a_lost_task_is_a_frozen_record_of_the_task_and_why():
    lost = TaskLost(task="cell-3", reason="worker died (SIGKILL)")
    with pytest.raises(dataclasses.FrozenInstanceError):
        lost.reason = "other"
    assert lost == TaskLost("cell-3", "worker died (SIGKILL)")
