"""Every command's --help reads as intended: no doubled percent signs leaking from argparse."""

from __future__ import annotations

import pytest

from ldpbench.cli import main


def _subcommands() -> list[str]:
    import argparse

    from ldpbench.cli import build_parser

    # argparse has no public accessor for its subcommands.
    action = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sorted(action.choices)


@pytest.mark.parametrize("command", _subcommands())
def test_help_has_no_doubled_percent(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    assert "%%" not in text, f"`ldpbench {command} --help` prints a doubled percent sign:\n{text}"


def test_report_help_says_95_percent(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["report", "--help"])
    assert "95% CI" in capsys.readouterr().out
