"""Exit codes of ldpbench's own failures: a bug is exit 4 (never 1, which means "regression")."""

from __future__ import annotations

import pytest

from ldpbench import cli
from ldpbench.errors import ExitCode


def test_an_internal_bug_exits_4_and_says_it_is_ours(monkeypatch, capsys):
    from ldpbench.cli import plugins_cmd

    def broken(args):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(plugins_cmd, "run", broken)
    assert cli.main(["plugins"]) == ExitCode.INTERNAL == 4
    err = capsys.readouterr().err
    assert "ZeroDivisionError: boom" in err
    assert "internal error" in err and "not in your input" in err


@pytest.mark.parametrize("argv", [[], ["no-such-command"]])
def test_usage_mistakes_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv or ["--no-such-flag"])
    assert exc.value.code == 2
