"""Every table row in the docs belongs to a table: a row right after a paragraph renders as text
(docs/ci.md once had two threshold rows stranded after the paragraph below their table)."""

from __future__ import annotations

from support import ROOT

PAGES = sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md", ROOT / "CONTRIBUTING.md"]


def stranded_rows(text: str) -> list[int]:
    """Line numbers of table rows (``| ... |``) whose previous line is neither blank nor a row."""
    found, in_code = [], False
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("```"):
            in_code = not in_code
        is_row = line.startswith("|") and line.rstrip().endswith("|")
        if in_code or not is_row or i == 0:
            continue
        previous = lines[i - 1]
        if previous.strip() and not previous.startswith("|"):
            found.append(i + 1)
    return found


def test_no_table_row_is_stranded_after_a_paragraph():
    found = [f"{page.relative_to(ROOT)}:{line}" for page in PAGES for line in stranded_rows(page.read_text("utf-8"))]
    assert found == [], found


def test_the_check_sees_a_stranded_row():
    assert stranded_rows("| a | b |\n|---|---|\n| 1 | 2 |\n\nSome prose.\n| 3 | 4 |\n") == [6]
