"""Where this ldpbench comes from, as a generated plugin repository must install it.

ldpbench is on no package index, so a generated repository names the very source this ldpbench
was installed from: pip records it in the distribution's ``direct_url.json`` (PEP 610) for every
install that did not come from an index — a git URL and the commit it resolved to, a local folder
(editable or not), a wheel or sdist file or URL. Run from a source checkout that is not installed
(``PYTHONPATH``), the checkout's folder is the source. Nothing else is guessed: a tag named after
the version need not exist (``v0.1.0`` did not), so without a recorded source there is none, and
``ldpbench new-plugin`` asks for ``--ldpbench-source``.
"""

from __future__ import annotations

import importlib.metadata as md
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def project_url() -> str | None:
    """ldpbench's repository address, from the installed distribution's ``Project-URL`` metadata."""
    try:
        urls = md.metadata("ldpbench").get_all("Project-URL") or []
    except md.PackageNotFoundError:
        return None
    for entry in urls:
        label, _, url = entry.partition(",")
        if label.strip().lower() in ("repository", "source", "homepage") and url.strip():
            return url.strip()
    return None


def requirement_from_direct_url(info: Mapping[str, Any]) -> str | None:
    """The pip requirement that reinstalls what a PEP 610 ``direct_url.json`` describes.

    A VCS install is pinned to the commit it resolved to (``ldpbench @ git+URL@COMMIT``), so the
    generated repository gets the code its baseline was computed with, not a moving branch; a
    folder or an archive is named by its URL. None for anything else.
    """
    url = info.get("url")
    if not isinstance(url, str) or not url:
        return None
    subdirectory = info.get("subdirectory")
    fragment = f"#subdirectory={subdirectory}" if subdirectory else ""
    vcs = info.get("vcs_info")
    if isinstance(vcs, Mapping) and vcs.get("vcs") and vcs.get("commit_id"):
        return f"ldpbench @ {vcs['vcs']}+{url}@{vcs['commit_id']}{fragment}"
    if isinstance(info.get("dir_info"), Mapping) or isinstance(info.get("archive_info"), Mapping):
        return f"ldpbench @ {url}{fragment}"
    return None


def _installed_direct_url() -> Mapping[str, Any] | None:
    """The parsed ``direct_url.json`` of the installed ldpbench (None without one)."""
    try:
        text = md.distribution("ldpbench").read_text("direct_url.json")
    except md.PackageNotFoundError:
        return None
    if not text:
        return None
    try:
        info = json.loads(text)
    except ValueError:
        return None
    return info if isinstance(info, Mapping) else None


def _checkout_root() -> Path | None:
    """The source checkout this ldpbench is imported from, if it is one (a pyproject naming it)."""
    import ldpbench

    root = Path(ldpbench.__file__).resolve().parents[1]
    pyproject = root / "pyproject.toml"
    try:
        named = 'name = "ldpbench"' in pyproject.read_text(encoding="utf-8")
    except OSError:
        return None
    return root if named else None


def default_ldpbench_source() -> str | None:
    """The pip requirement that installs this very ldpbench: where it was installed from (PEP 610
    ``direct_url.json``), else the source checkout it runs from; None when neither is known."""
    info = _installed_direct_url()
    requirement = requirement_from_direct_url(info) if info else None
    if requirement:
        return requirement
    root = _checkout_root()
    return f"ldpbench @ {root.as_uri()}" if root else None


def is_local(requirement: str) -> bool:
    """Whether ``requirement`` names a file on this machine (a CI runner cannot reach it)."""
    return "@ file:" in requirement or "+file:" in requirement
