"""Where this ldpbench comes from, as a generated plugin repository must install it: the repository
address from the installed distribution's metadata (``[project.urls]`` of ldpbench's pyproject) and
the pip requirement that pins this very version."""

from __future__ import annotations

import importlib.metadata as md

from ldpbench.util.version import VERSION


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


def default_ldpbench_source() -> str | None:
    """The pip requirement that installs this very ldpbench from its repository (git tag v<version>)."""
    url = project_url()
    return f"ldpbench @ git+{url}@v{VERSION}" if url else None
