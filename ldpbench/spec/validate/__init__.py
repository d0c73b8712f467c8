"""Validate a spec document against the format and the installed plugins.

Every problem is reported as ``FILE:LINE: message``, with a did-you-mean for unknown keys and names,
and all problems of a spec are reported together. The steps, in order (:func:`.steps.run`):

- :mod:`.settings`: the top-level keys and their plain values (name, seed, repeats, ...);
- :mod:`.plugin_lists` and :mod:`.pipelines`: the plugins a spec names, each entry checked by
  :mod:`.entry` and its parameters by :mod:`.parameters`;
- :mod:`.privacy_budgets`: ``epsilons``, or personalized ``users`` groups;
- :mod:`.requirements`: the plugin distributions a spec needs;
- :mod:`.combinations`: choices valid alone that cannot go together;
- :mod:`.dataset_facts`: what depends on each dataset's size, found by loading it.

:mod:`.context` collects the problems; :mod:`.limits` holds the largest values a spec may give;
:mod:`.plugin_dirs` says which plugin code a spec may load, before it is validated.
"""

from __future__ import annotations

from pathlib import Path

from ldpbench.loading.manager import Plugins
from ldpbench.spec.load import Document, parse_document, read_document
from ldpbench.spec.model import Spec
from ldpbench.spec.validate.context import Context
from ldpbench.spec.validate.plugin_dirs import plugin_dirs_for, spec_plugins_dir
from ldpbench.spec.validate.steps import run

__all__ = ["load_spec", "load_spec_text", "plugin_dirs_for", "spec_plugins_dir"]


def load_spec(
    path: str | Path,
    plugins: Plugins,
    *,
    trust_user_only: bool = False,
    cell_timeout: float | None = None,
    document: Document | None = None,
) -> Spec:
    """Read, validate and resolve a spec file; raise :class:`SpecError` listing every problem.

    :param trust_user_only: let the spec give parameters declared ``user_only`` (a scheduler
        address): ``--trust-spec-params`` on the command line.
    :param document: the file as already read by :func:`~ldpbench.spec.load.read_document` (the
        command line reads a spec once, for its ``plugins_dir`` and then to validate it).
    """
    doc = document if document is not None else read_document(path)
    return run(Context(doc, plugins, Path(path), trust_user_only=trust_user_only, cell_timeout=cell_timeout))


def load_spec_text(text: str, plugins: Plugins, filename: str = "<spec>", *, trust_user_only: bool = False) -> Spec:
    """Validate a spec given as YAML text (the notebook API); relative paths are from the cwd."""
    return run(Context(parse_document(text, filename), plugins, Path.cwd() / filename, trust_user_only=trust_user_only))
