"""The plugin folders to load for a spec: the user's, plus the spec's own only if the user trusts it.

This runs before validation, since the plugins are what a spec is validated against.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ldpbench.errors import SpecError
from ldpbench.spec.load import Document, read_document


def spec_plugins_dir(doc: Document, path: str | Path) -> str | None:
    """The plugins folder a spec names (``plugins_dir:``), resolved against the spec's folder, or
    None (also when it is not a path: validation reports that)."""
    named = doc.data.get("plugins_dir") if isinstance(doc.data, dict) else None
    return str((Path(path).parent / named).resolve()) if isinstance(named, str) else None


def plugin_dirs_for(
    path: str | Path, plugins_dirs: Sequence[str], *, trust_spec_plugins: bool = False, doc: Document | None = None
) -> list[str]:
    """The plugin folders to load for a spec: the user's (``--plugins-dir``), plus the spec's own
    ``plugins_dir`` if the user trusts it (``--trust-spec-plugins``).

    A spec is data: naming a ``plugins_dir`` in it makes no code load unless the user says so.
    ``doc``: the spec file as already read (else it is read here).
    """
    dirs = [str(Path(d).resolve()) for d in plugins_dirs]
    doc = doc if doc is not None else read_document(path)
    wanted = spec_plugins_dir(doc, path)
    if wanted is not None and wanted not in dirs:
        if not trust_spec_plugins:
            raise SpecError(
                f"{doc.where(('plugins_dir',))}: the spec asks to load plugin code from {wanted}; "
                f"a spec cannot load code by itself — pass --plugins-dir {doc.data['plugins_dir']} "
                f"(or --trust-spec-plugins)"
            )
        dirs.append(wanted)
    return dirs
