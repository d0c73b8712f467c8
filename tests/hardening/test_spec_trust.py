"""A spec is data: it cannot make ``ldpbench`` connect anywhere, read a device or block on a FIFO.

Reproductions (issue 10): ``executor: {dask: {scheduler: ...}}`` in a spec made ``ldpbench run``
connect to that address and unpickle what came back (a scheduler with a malicious worker preload
wrote a file on the client); ``ldpbench run /dev/zero`` read 2.35 GB; a FIFO as a spec blocked
for ever; a 638-byte spec of nested merge keys took 13.8 s and 2.6 GB before it was refused.
"""

from __future__ import annotations

import os
import re
import resource
import socket
import subprocess
import sys
import textwrap
import time

import pytest

from ldpbench.cli import main

SPEC = """\
name: trust
datasets:
  - zipf: {d: 16, n: 1000}
epsilons: [1]
oracles: [grr]
"""
SCHEDULER_SPEC = SPEC + 'executor: {dask: {scheduler: "tcp://127.0.0.1:8786"}}\n'


@pytest.fixture
def no_connections(monkeypatch):
    """Fail the test on any attempt to open a network connection."""

    def refuse(self, *args, **kwargs):
        raise AssertionError(f"a connection was attempted: {args}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.delenv("LDPBENCH_DASK_SCHEDULER", raising=False)


@pytest.mark.parametrize("command", ["run", "validate"])
@pytest.mark.parametrize("key", ["scheduler", "scheduler_file"])
def test_a_spec_cannot_name_a_scheduler(tmp_path, capsys, no_connections, command, key):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC + f'executor:\n  dask: {{{key}: "tcp://127.0.0.1:8786"}}\n')
    extra = ["--out", str(tmp_path / "out"), "--no-progress"] if command == "run" else []
    assert main([command, str(spec), *extra]) == 2
    err = capsys.readouterr().err
    assert re.match(rf"^{re.escape(str(spec))}:7: '{key}' of executor 'dask' may come only from you", err), err
    assert "--trust-spec-params" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_the_trust_flag_lets_a_spec_name_a_scheduler(tmp_path, capsys, no_connections):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SCHEDULER_SPEC)
    assert main(["validate", str(spec), "--trust-spec-params"]) == 0


def test_the_command_line_names_the_scheduler(tmp_path, plugins, no_connections):
    from ldpbench.cli.run_cmd import apply_executor_params
    from ldpbench.spec.validate import load_spec

    spec_path = tmp_path / "spec.yaml"
    spec_path.write_text(SPEC)
    import argparse

    def args(**kw):
        base = {"executor": None, "executor_param": [], "scheduler": None}
        return argparse.Namespace(**{**base, **kw})

    spec = load_spec(spec_path, plugins)
    assert apply_executor_params(plugins, spec, args(scheduler="tcp://10.0.0.1:8786")) is None
    assert spec.executor.name == "dask" and dict(spec.executor.params) == {"scheduler": "tcp://10.0.0.1:8786"}

    spec = load_spec(spec_path, plugins)
    apply_executor_params(
        plugins, spec, args(executor="dask", executor_param=["scheduler_file=/tmp/s.json", "workers=3"])
    )
    assert dict(spec.executor.params) == {"scheduler_file": "/tmp/s.json", "workers": 3}

    from ldpbench.errors import UsageError

    for bad in (
        args(executor_param=["workers=2"]),
        args(executor="dask", executor_param=["nope"]),
        args(executor="dask", executor_param=["workers=-1"]),
        args(executor="dask", executor_param=["sheduler=x"]),
    ):
        with pytest.raises(UsageError):
            apply_executor_params(plugins, load_spec(spec_path, plugins), bad)


def test_user_only_is_declared_not_special_cased(tmp_path, capsys, no_connections):
    """A third-party plugin's parameter declared user_only gets the same protection."""
    plugs = tmp_path / "plugs"
    plugs.mkdir()
    (plugs / "remote.py").write_text(
        textwrap.dedent("""
        from ldpbench import hookimpl
        from ldpbench.params import Param
        from ldpbench_plugins.executors.local import InProcess


        class Remote(InProcess):
            name = "remote-thing"
            params = InProcess.params + (Param("endpoint", str, "", "where to send cells", user_only=True),)


        @hookimpl
        def ldpbench_register_executors(registry):
            registry.register(Remote)
    """)
    )
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC + "executor: {remote-thing: {endpoint: 'evil.example.org:1'}}\n")
    assert main(["validate", str(spec), "--plugins-dir", str(plugs)]) == 2
    assert "'endpoint' of executor 'remote-thing' may come only from you" in capsys.readouterr().err


def _validate_in_subprocess(tmp_path, spec: str, timeout: float = 60) -> tuple[int, str, float, float]:
    """``ldpbench validate SPEC`` in a child: exit code, stderr, seconds, peak RSS (MB) of the child."""
    # The peak of this process image (VmHWM, in kB), not getrusage's ru_maxrss: that one survives
    # the exec and so counts the forking pytest worker's own size (300+ MB late in a run).
    code = (
        "import re, sys\n"
        "from ldpbench.cli import main\n"
        "rc = main(['validate', sys.argv[1]])\n"
        "hwm = re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1)\n"
        "sys.stderr.write('\\nMAXRSS %s\\n' % hwm)\n"
        "sys.exit(rc)\n"
    )
    started = time.perf_counter()

    def limit_memory() -> None:  # a loader that builds a bomb fails here, not the machine
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    res = subprocess.run(
        [sys.executable, "-c", code, spec],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=limit_memory,
    )
    seconds = time.perf_counter() - started
    found = re.search(r"MAXRSS (\d+)", res.stderr)
    assert found, res.stderr[-2000:]
    rss = int(found[1]) / 1024
    return res.returncode, res.stderr, seconds, rss


def test_a_device_or_fifo_as_the_spec_is_refused_at_once(tmp_path):
    fifo = tmp_path / "spec.yaml"
    os.mkfifo(fifo)
    for path in ("/dev/zero", str(fifo)):
        rc, err, seconds, rss = _validate_in_subprocess(tmp_path, path, timeout=30)
        assert rc == 2 and "Traceback" not in err, err
        assert re.match(rf"^{re.escape(path)}:1: is (a device|a FIFO)", err), err
        assert rss < 300, rss


def test_nested_merge_keys_are_refused_bounded(tmp_path):
    # Seven levels of eight merged references: 8**7 = 2 million merged copies of a pair (the old
    # loader flattened them in place: minutes and gigabytes).
    levels = ["a0: &a0 {" + ", ".join(f"k{i}: {i}" for i in range(8)) + "}"]
    levels += [f"a{i}: &a{i} {{<<: [" + ", ".join([f"*a{i - 1}"] * 8) + "]}" for i in range(1, 8)]
    (tmp_path / "bomb.yaml").write_text(SPEC + "\n".join(levels) + "\n")
    rc, err, seconds, rss = _validate_in_subprocess(tmp_path, "bomb.yaml")
    assert rc == 2 and "too large once its aliases and merge keys (<<) are expanded" in err, err
    assert err.startswith("bomb.yaml:")
    assert seconds < 30 and rss < 300, (seconds, rss)
