"""Exceptions that end a command cleanly, and the exit codes they map to.

A user mistake (a malformed spec, an unknown plugin name, a missing file) is a
:class:`LdpbenchError`: the CLI prints its message, never a traceback, and exits with its
``exit_code``. Anything else reaching the CLI is a bug in ldpbench or in a plugin.
"""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    """Process exit codes of the ``ldpbench`` command (documented in the README)."""

    OK = 0
    REGRESSION = 1  #: ``compare`` found a metric that got worse beyond its noise
    USAGE = 2  #: a malformed spec, a bad flag, a missing file
    PLUGIN = 3  #: a plugin failed to load, or cells failed because a plugin raised
    INTERNAL = 4  #: a bug: please report it
    IO = 5  #: the results could not be written (disk full, read-only, --out not a directory)


class LdpbenchError(Exception):
    """Base class of every error that is reported to the user without a traceback."""

    exit_code: ExitCode = ExitCode.USAGE


class UsageError(LdpbenchError):
    """Bad command-line usage or a missing input file."""


class SpecError(LdpbenchError):
    """A spec that does not validate.

    ``problems`` holds one ``FILE:LINE: message`` string per problem found, so that a user sees
    every mistake in a spec at once rather than one per run.
    """

    def __init__(self, problems: list[str] | str):
        if isinstance(problems, str):
            problems = [problems]
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


class ParamError(LdpbenchError):
    """A plugin parameter with a wrong type, an out-of-range value or an unknown name.

    ``key`` is the offending parameter name (the spec validator turns it into a ``FILE:LINE``).
    """

    def __init__(self, message: str, key: str | None = None):
        self.key = key
        super().__init__(message)


class PluginError(LdpbenchError):
    """A plugin that cannot be loaded or registered (name clash, missing method, bad signature)."""

    exit_code = ExitCode.PLUGIN


class NotApplicable(LdpbenchError):
    """A plugin declining an input it does not handle: EM given an estimate without a report
    histogram, a threshold that needs the oracle's noise when the oracle gives none, a domain too
    large for a method's d x d matrices.

    Part of the plugin contract (also importable from :mod:`ldpbench.types`): raise it with the
    reason. In a run it fails only the rows of the cell, pipeline or metric that depends on the
    plugin, recorded with that reason (``NotApplicable: ...`` in the rows' ``error``), and the run
    goes on; the conformance kit counts it as a decline, not a failure. It is not a usage error:
    nothing the user typed is wrong.
    """

    exit_code = ExitCode.PLUGIN


class IOFault(LdpbenchError):
    """Results that cannot be written: a full disk, a read-only folder, an ``--out`` that is a file
    or a device, a ``results.jsonl`` that is a directory. Rows already written stay valid, and a
    rerun resumes once the cause is gone."""

    exit_code = ExitCode.IO


class UnknownPluginError(LdpbenchError):
    """A plugin name that no installed plugin registered; carries a did-you-mean suggestion."""

    def __init__(self, kind: str, name: str, suggestion: str | None, known: list[str]):
        self.kind, self.name, self.suggestion, self.known = kind, name, suggestion, known
        hint = f" — did you mean '{suggestion}'?" if suggestion else _known_text(kind, known)
        super().__init__(f"unknown {kind} '{name}'{hint}")


#: Installed names an unknown-plugin error lists (when nothing is close) before it counts the rest.
_LISTED_KNOWN = 12


def _known_text(kind: str, known: list[str]) -> str:
    """`` (installed: a, b, c)``: what a name with no close match could have been."""
    names = sorted(dict.fromkeys(str(k) for k in known))
    if not names:
        return ""
    shown = ", ".join(names[:_LISTED_KNOWN])
    if len(names) <= _LISTED_KNOWN:
        return f" (installed: {shown})"
    single = " " not in kind and kind != "plugin"
    where = f"`ldpbench plugins --kind {kind}`" if single else "`ldpbench plugins`"
    return f" (installed: {shown} and {len(names) - _LISTED_KNOWN} more; {where} lists them)"
