"""Shipped tables are what their command writes today (scripts/generated_reports.py, reports/generated.json).

A table written by an older ldpbench (the consistency write-up's leaderboard before tie marks) is
caught by the format fingerprint; the CI baseline's Markdown is rewritten from its JSON and compared.
"""

from __future__ import annotations

import importlib.util
import json

from support import ROOT

_spec = importlib.util.spec_from_file_location("generated_reports", ROOT / "scripts" / "generated_reports.py")
generated = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(generated)


def test_every_shipped_generated_table_is_what_its_command_writes_today():
    assert generated.problems() == []


def test_every_leaderboard_table_under_reports_is_listed():
    """A Markdown leaderboard added to reports/ without an entry would escape the check."""
    listed = {entry["path"] for entry in generated.load_manifest()}
    footer = "mean ± standard error over repeats"
    found = {
        str(p.relative_to(ROOT)) for p in (ROOT / "reports").rglob("*.md") if footer in p.read_text(encoding="utf-8")
    }
    assert found <= listed, f"leaderboard tables not in reports/generated.json: {sorted(found - listed)}"


def test_the_fingerprint_sees_the_marks_a_table_carries(monkeypatch):
    """Rendering without the tie marks (what the consistency table predated) changes the fingerprint."""
    from ldpbench.leaderboard import render as render_module

    today = generated.leaderboard_markdown_fingerprint()
    text = render_module.render(generated.aggregate_fixture(), "markdown")
    assert "≈" in text and "**" in text and "(1 failed)" in text  # the fixture exercises every mark
    original = render_module._cell
    monkeypatch.setattr(render_module, "_cell", lambda row, fmt: original({**row, "tied_best": False}, fmt))
    assert generated.leaderboard_markdown_fingerprint() != today


def test_a_stale_or_edited_table_is_named_with_the_command_that_rewrites_it(tmp_path, monkeypatch):
    table = tmp_path / "reports" / "t.md"
    table.parent.mkdir()
    table.write_text("old table\n", encoding="utf-8")
    manifest = tmp_path / "reports" / "generated.json"
    entry = {"path": "reports/t.md", "command": "make-t", "format": "leaderboard-markdown"}
    manifest.write_text(json.dumps({"files": [entry]}), encoding="utf-8")
    monkeypatch.setattr(generated, "ROOT", tmp_path)
    monkeypatch.setattr(generated, "MANIFEST", manifest)
    found = generated.problems()
    assert len(found) == 2 and all("make-t" in p for p in found)  # never stamped: changed, and an older format
    generated.stamp("reports/t.md")
    assert generated.problems() == []
    table.write_text("edited\n", encoding="utf-8")
    (only,) = generated.problems()
    assert "changed since it was stamped" in only
