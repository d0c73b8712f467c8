"""Options and loading steps shared by subcommands."""

from __future__ import annotations

import argparse
import sys
from typing import Any

import yaml

from ldpbench.errors import UsageError
from ldpbench.loading.manager import Plugins, build_plugins
from ldpbench.spec.load import read_document
from ldpbench.spec.model import Spec
from ldpbench.spec.validate import load_spec, plugin_dirs_for


def add_plugin_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--plugins-dir",
        action="append",
        default=[],
        metavar="DIR",
        help="also load every *.py file in DIR as a plugin (repeatable)",
    )
    parser.add_argument(
        "--disable-plugin",
        action="append",
        default=[],
        metavar="NAME",
        help="do not load the installed plugin NAME (an entry-point or distribution name; repeatable; "
        "also LDPBENCH_DISABLE_PLUGINS=name,name)",
    )


def plugins_from_args(args: argparse.Namespace, dirs: list[str] | None = None, *, warn: bool = True) -> Plugins:
    """The plugins a command loads: built-ins, installed ones not disabled, ``--plugins-dir``.

    An installed plugin that fails to load is skipped with a warning on stderr (``ldpbench
    plugins`` lists it), so that one broken distribution does not make every command fail.
    """
    plugins = build_plugins(
        args.plugins_dir if dirs is None else dirs, disabled=getattr(args, "disable_plugin", None) or ()
    )
    if warn:
        for broken in plugins.broken:
            print(
                f"ldpbench: warning: {broken} (skipped; --disable-plugin {broken.name} silences this)", file=sys.stderr
            )
    return plugins


def add_spec_plugin_options(parser: argparse.ArgumentParser) -> None:
    add_plugin_options(parser)
    parser.add_argument(
        "--trust-spec-plugins",
        action="store_true",
        help="load the plugins folder named by the spec's 'plugins_dir' (specs cannot load code by themselves)",
    )
    parser.add_argument(
        "--trust-spec-params",
        action="store_true",
        help="let the spec give parameters that say where to connect (a Dask scheduler address); "
        "without it only the command line and the environment may",
    )


def load_plugins_and_spec(spec_path: str, args: argparse.Namespace) -> tuple[Plugins, Spec, list[str]]:
    """Read the spec file once; build the plugins it needs (its trusted ``plugins_dir``); validate it."""
    doc = read_document(spec_path)
    dirs = plugin_dirs_for(
        spec_path, args.plugins_dir, trust_spec_plugins=getattr(args, "trust_spec_plugins", False), doc=doc
    )
    plugins = plugins_from_args(args, dirs)
    trusted = getattr(args, "trust_spec_params", False)
    timeout = getattr(args, "cell_timeout", None)  # only `run` has --cell-timeout
    spec = load_spec(spec_path, plugins, trust_user_only=trusted, cell_timeout=timeout, document=doc)
    return plugins, spec, dirs


def add_param_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a plugin parameter (VALUE read as YAML: 2, 0.5, code); repeatable",
    )


def param_values(pairs: list[str]) -> dict[str, Any]:
    """``--param KEY=VALUE`` pairs as a mapping, each VALUE read as YAML (``2``, ``0.5``, ``code``)."""
    params: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"--param takes KEY=VALUE, got {pair!r}")
        try:
            params[key] = yaml.safe_load(value)
        except yaml.YAMLError:
            params[key] = value
    return params
