"""Every shipped spec validates (the rest of the surface: tests/meta/test_surface.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ldpbench.spec.validate import load_spec

ROOT = Path(__file__).resolve().parents[2]


SPECS = sorted((ROOT / "specs").glob("*.yaml"))


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.name)
def test_every_shipped_spec_validates(spec, plugins):
    # results go to results/<name>/ by default, so a spec's name matches its file's
    assert load_spec(spec, plugins).name == spec.stem
