"""Plugin code outside a cell (ldpbench/boundary/contain.py): contained as a cell's is (issue 28)."""

from __future__ import annotations

import os
import time

import pytest

from ldpbench.boundary.contain import PluginCodeFailed, collecting_failures, contained_call, hard_limit
from ldpbench.errors import ExitCode, ParamError


class Weird(BaseException):
    pass


class BadStr(Exception):
    def __str__(self):
        raise RuntimeError("no")


def _raise(exc):
    def fn():
        raise exc

    return fn


@pytest.mark.parametrize(
    ("exc", "text"),
    [
        (SystemExit(0), "SystemExit: 0"),
        (KeyboardInterrupt(), "KeyboardInterrupt"),
        (GeneratorExit(), "GeneratorExit"),
        (Weird("odd"), "Weird: odd"),
        (BadStr(), "could not be printed"),
        (MemoryError(), "MemoryError"),
        (RecursionError("deep"), "RecursionError: deep"),
        (ValueError("plain"), "ValueError: plain"),
    ],
)
def test_anything_plugin_code_raises_is_a_plugin_failure_naming_it(exc, text):
    with pytest.raises(PluginCodeFailed) as info:
        contained_call("postprocessor 'x'", "its constructor", _raise(exc))
    message = str(info.value)
    assert message.startswith("postprocessor 'x' failed (its constructor)") and text in message
    assert "test_contain.py" in message  # where it raised
    assert info.value.exit_code == ExitCode.PLUGIN


def test_os_exit_is_contained():
    with pytest.raises(PluginCodeFailed, match=r"os._exit\(0\)"):
        contained_call("oracle 'x'", "tags()", lambda: os._exit(0))


def test_a_refused_parameter_goes_through_for_the_spec_to_report():
    with pytest.raises(ParamError):
        contained_call("oracle 'x'", "its constructor", _raise(ParamError("bad k", key="k")))


def test_the_time_limit_applies_and_a_failure_is_recorded_once():
    calls = []

    def sleeper():
        calls.append(1)
        time.sleep(30)

    with collecting_failures(0.2) as failures:
        with pytest.raises(PluginCodeFailed, match="did not finish within 0.2 s"):
            contained_call("metric 'slow'", "its constructor", sleeper)
        with pytest.raises(PluginCodeFailed):  # not run again: a sleeping constructor costs its limit once
            contained_call("metric 'slow'", "its constructor", sleeper)
    assert calls == [1] and list(failures) == [("metric 'slow'", "its constructor")]


def test_a_result_comes_back_unchanged():
    assert contained_call("metric 'm'", "its constructor", lambda: 42, seconds=5) == 42


def test_the_backstop_allows_the_pool_s_grace_period():
    assert hard_limit(1) == pytest.approx(3.25) and hard_limit(100) > 100


# The process backstop's watchdog: one process per process, not a fork per call. That it stops
# a process stuck in compiled code: tests/hardening/test_validation_faults.py (a subprocess).

import signal  # noqa: E402

from ldpbench.boundary import contain  # noqa: E402

linux_only = pytest.mark.skipif(contain._exit_on_sigquit() is None, reason="the backstop is Linux-only")


@linux_only
def test_one_watchdog_serves_every_call_and_sigquit_is_restored():
    before = signal.getsignal(signal.SIGQUIT)
    for _ in range(5):
        contained_call("metric 'm'", "its constructor", lambda: None, seconds=5)
    first = contain._WATCHDOG.child
    assert first and contain._WATCHDOG.owner == os.getpid()
    for _ in range(5):
        contained_call("metric 'm'", "its constructor", lambda: None, seconds=5)
    assert contain._WATCHDOG.child == first  # the same process, still alive
    os.kill(first, 0)
    assert signal.getsignal(signal.SIGQUIT) == before


@linux_only
def test_a_forked_child_gets_its_own_watchdog_and_the_parent_s_stops_cleanly():
    contained_call("metric 'm'", "its constructor", lambda: None, seconds=5)
    parent_dog = contain._WATCHDOG.child
    pid = os.fork()
    if pid == 0:  # the child: its inherited state is forgotten, its own watchdog serves it
        code = 1
        try:
            if contain._WATCHDOG.owner is None:
                contained_call("metric 'm'", "its constructor", lambda: None, seconds=5)
                code = 0 if contain._WATCHDOG.child not in (0, parent_dog) else 2
                contain._WATCHDOG.stop()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert contain._WATCHDOG.child == parent_dog
    contain._WATCHDOG.stop()  # killed and reaped: no zombie left
    with pytest.raises(ProcessLookupError):
        os.kill(parent_dog, 0)
    contained_call("metric 'm'", "its constructor", lambda: None, seconds=5)  # a new one starts
    assert contain._WATCHDOG.child not in (0, parent_dog)
