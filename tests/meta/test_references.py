"""Every document the code and docs cite is in the repository.

A clone must be able to follow every citation. What counts as a reference:

- a Markdown link ``[text](target)`` with a relative target, resolved against the Markdown file's
  folder; its anchor (``page.md#section``), if any, must be a heading of that page
  (:func:`find_bad_anchors`);
- in prose (Markdown outside fenced code blocks, including inline code), in Python comments and
  docstrings, and in ``#`` comments of YAML, TOML and shell files: a path whose first folder is a
  top-level folder of this repository (``docs/ci.md``, ``plugins/oracles/olh.py``,
  ``specs/ci.yaml``), and a bare ``NAME.md``. Both are resolved against the citing file's folder,
  then the repository root;
- a section of docs/algorithms.md cited as ``docs/algorithms.md §2.4``: the section must exist.

Not references: string literals in code (a test writes ``specs/thirdparty.yaml`` into a temporary
folder), fenced code blocks (examples of a plugin repository's layout), paths with placeholders
(``specs/<paper>.yaml``, ``specs/ci*.yaml``), URLs, and the names of files ldpbench writes
(:data:`WRITTEN_FILES`). ``docs/fragments/*.md`` are sections waiting to be inserted into
docs/algorithms.md, so their relative links are resolved from ``docs/`` as well.

A failure lists every bad reference as ``FILE:LINE: cites 'TARGET' ...``.
"""

from __future__ import annotations

import io
import re
import subprocess
import tokenize
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: Files ldpbench (or a CI job) writes into a results folder: naming them is not citing them.
WRITTEN_FILES = frozenset({"report.md", "compare.md", "leaderboard.md", "summary.md", "bias.md", "history.md"})

#: Folders never scanned: environments, caches, build output.
SKIPPED_DIRS = frozenset(
    {
        ".git",
        ".venv",
        "venv",
        "build",
        "dist",
        "results",
        ".benchmarks",
        "__pycache__",
        ".pytest_cache",
        ".hypothesis",
        ".ruff_cache",
        "node_modules",
    }
)

_EXT = r"(?:md|py|ya?ml|toml|sh|json|jsonl|csv|tsv|txt|png|html|gz)"
#: A path-like token: folders separated by "/", ending in a known extension.
_PATH = re.compile(r"(?<![\w./:-])((?:\.\.?/)*[\w.-]+(?:/[\w.<>*{}-]+)*\." + _EXT + r")(?![\w/-])")
_LINK = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_SECTION = re.compile(r"docs/algorithms\.md\s*((?:§\s*\d+(?:\.\d+)*(?:\s*(?:,|and|–|-)\s*)?)+)")
_SECTION_NUMBER = re.compile(r"§\s*(\d+(?:\.\d+)*)")
#: Internal documents of the team that are not in the repository, cited without a path.
_OUTSIDE = re.compile(r"\bacceptance(?:\.md)?\s*(?:§|[A-F]\d+|[A-F]\b|\(|preamble)|\baesthetics\b|\.\./" + "shared")


@dataclass(frozen=True)
class BadReference:
    file: str
    line: int
    target: str
    why: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: cites {self.target!r} {self.why}"


def repository_files(root: Path) -> list[str]:
    """Tracked and untracked-but-not-ignored files (POSIX paths relative to ``root``)."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        ).stdout.splitlines()
        if out:
            return [f for f in out if (root / f).is_file()]
    except (OSError, subprocess.CalledProcessError, subprocess.TimeoutExpired):
        pass
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and not SKIPPED_DIRS.intersection(p.relative_to(root).parts)
    )


def _python_text(source: str) -> list[tuple[int, str]]:
    """Comments and docstrings of a Python file, with their first line numbers."""
    out: list[tuple[int, str]] = []
    previous = tokenize.NEWLINE
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                out.append((tok.start[0], tok.string))
            elif tok.type == tokenize.STRING and previous in (
                tokenize.NEWLINE,
                tokenize.NL,
                tokenize.INDENT,
                tokenize.DEDENT,
                tokenize.ENCODING,
            ):
                # A string standing alone as a statement: a docstring (or an attribute docstring).
                for offset, line in enumerate(tok.string.splitlines()):
                    out.append((tok.start[0] + offset, line))
            if tok.type not in (tokenize.COMMENT, tokenize.NL):
                previous = tok.type
    except (tokenize.TokenError, SyntaxError):
        return [(n, line) for n, line in enumerate(source.splitlines(), 1)]
    return out


def _markdown_text(source: str) -> list[tuple[int, str]]:
    """Lines of a Markdown file outside fenced code blocks."""
    out, fenced = [], False
    for n, line in enumerate(source.splitlines(), 1):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if not fenced:
            out.append((n, line))
    return out


def _comment_text(source: str) -> list[tuple[int, str]]:
    """``#`` comments of YAML, TOML and shell files."""
    out = []
    for n, line in enumerate(source.splitlines(), 1):
        at = line.find("#")
        if at >= 0:
            out.append((n, line[at:]))
    return out


def _algorithms_sections(root: Path) -> set[str]:
    path = root / "docs" / "algorithms.md"
    if not path.is_file():
        return set()
    return set(re.findall(r"^#{2,4}\s+(\d+(?:\.\d+)*)[.\s]", path.read_text(encoding="utf-8"), re.M))


def find_bad_references(root: Path) -> list[BadReference]:
    files = repository_files(root)
    known = set(files) | {str(Path(f).parent.as_posix()) for f in files}
    for f in files:  # every ancestor folder
        parts = f.split("/")[:-1]
        known.update("/".join(parts[:i]) for i in range(1, len(parts)))
    top = {f.split("/")[0] for f in files if "/" in f}
    sections = _algorithms_sections(root)
    bad: list[BadReference] = []

    def exists(target: str, bases: list[Path]) -> bool:
        for base in bases:
            resolved = (root / base / target).resolve()
            try:
                rel = resolved.relative_to(root.resolve()).as_posix()
            except ValueError:
                continue  # outside the repository
            if rel in known:
                return True
        return False

    for rel in files:
        suffix = Path(rel).suffix
        if suffix not in (".py", ".md", ".yaml", ".yml", ".toml", ".sh") and not rel.startswith(".ci/"):
            continue
        if (root / rel).resolve() == Path(__file__).resolve():
            continue  # this file names the patterns it looks for
        source = (root / rel).read_text(encoding="utf-8", errors="replace")
        here = Path(rel).parent
        bases = [here, Path(".")]
        if rel.startswith("docs/fragments/"):
            bases.insert(0, Path("docs"))  # a fragment is read where it will be inserted
        if suffix == ".py":
            chunks = _python_text(source)
        elif suffix == ".md":
            chunks = _markdown_text(source)
            for n, line in enumerate(source.splitlines(), 1):
                for m in _LINK.finditer(line):
                    target = m.group(1).split("#", 1)[0]
                    if not target or re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("/"):
                        continue
                    if not exists(target, bases[:-1] or bases):
                        bad.append(BadReference(rel, n, target, "(a Markdown link to a file not in the repository)"))
        else:
            chunks = _comment_text(source)
        for n, text in chunks:
            for m in _OUTSIDE.finditer(text):
                bad.append(BadReference(rel, n, m.group(0).strip(), "(a team document that is not in the repository)"))
            for m in _PATH.finditer(text):
                target = m.group(1)
                if re.search(r"[<>*{}]", target):
                    continue  # a placeholder or a glob, not one file
                first = target.split("/")[0]
                if "/" in target and first not in top and first not in ("..", "."):
                    continue  # a path in some other repository or a results folder
                if "/" not in target and (not target.endswith(".md") or target in WRITTEN_FILES):
                    continue
                if _is_url_part(text, m.start()):
                    continue
                if not exists(target, bases):
                    bad.append(BadReference(rel, n, target, "(no such file in the repository)"))
            for m in _SECTION.finditer(text):
                for number in _SECTION_NUMBER.findall(m.group(1)):
                    if number not in sections:
                        bad.append(BadReference(rel, n, f"docs/algorithms.md §{number}", "(no such section)"))
    return bad


def _is_url_part(text: str, start: int) -> bool:
    """Whether the token at ``start`` is inside a URL (``https://host/path/file.md``)."""
    word_start = max(text.rfind(" ", 0, start), text.rfind("(", 0, start), text.rfind("<", 0, start)) + 1
    return "://" in text[word_start:start]


def test_every_cited_file_is_in_the_repository() -> None:
    bad = find_bad_references(ROOT)
    assert not bad, "references to files or sections not in the repository:\n" + "\n".join(map(str, bad))


def heading_anchors(markdown: str) -> set[str]:
    """The anchors GitHub gives a Markdown file's headings: lowercased, punctuation dropped, spaces
    turned into hyphens, a repeated heading suffixed ``-1``, ``-2``, ... (fenced code is skipped)."""
    anchors: set[str] = set()
    seen: dict[str, int] = {}
    for _, line in _markdown_text(markdown):
        match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not match:
            continue
        slug = re.sub(r"[^\w\- ]", "", re.sub(r"<[^>]+>", "", match.group(1)).strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def find_bad_anchors(root: Path) -> list[BadReference]:
    """Markdown links ``[text](page.md#anchor)`` (or ``(#anchor)``) whose anchor is no heading of
    the linked page in the repository. Pages moved or sections renamed break these silently."""
    bad: list[BadReference] = []
    for rel in repository_files(root):
        if not rel.endswith(".md"):
            continue
        for n, line in _markdown_text((root / rel).read_text(encoding="utf-8", errors="replace")):
            for m in _LINK.finditer(line):
                target = m.group(1)
                if "#" not in target or re.match(r"^[a-z][a-z0-9+.-]*:", target):
                    continue
                path, anchor = target.split("#", 1)
                page = (root / rel).parent / path if path else root / rel
                if page.suffix != ".md" or not page.is_file():
                    continue  # a missing file is find_bad_references' to report
                if anchor not in heading_anchors(page.read_text(encoding="utf-8", errors="replace")):
                    bad.append(BadReference(rel, n, target, "(no such heading in the linked page)"))
    return bad


def test_every_linked_section_exists() -> None:
    bad = find_bad_anchors(ROOT)
    assert not bad, "links to sections that do not exist:\n" + "\n".join(map(str, bad))


def test_a_link_to_a_missing_section_is_reported(tmp_path: Path) -> None:
    _mini_repo(tmp_path)
    assert find_bad_anchors(tmp_path) == []  # algorithms.md#12-table exists
    (tmp_path / "docs" / "more.md").write_text(
        "## The `ibu` likelihood: `bernoulli_support`\n\nSee [it](#the-ibu-likelihood-bernoulli_support), "
        "[gone](algorithms.md#2-consistency) and [there](guide.md).\n"
    )
    assert [str(b) for b in find_bad_anchors(tmp_path)] == [
        "docs/more.md:3: cites 'algorithms.md#2-consistency' (no such heading in the linked page)"
    ]


# -- the test can fail ---------------------------------------------------------------------------


def _mini_repo(root: Path) -> None:
    (root / "docs").mkdir()
    (root / "pkg").mkdir()
    (root / "docs" / "algorithms.md").write_text("# Algorithms\n\n## 1. Oracles\n\n### 1.2 Table\n")
    (root / "docs" / "guide.md").write_text(
        "See [the table](algorithms.md#12-table) and `docs/algorithms.md`.\n\n"
        "```\nspecs/my-plugin.yaml  # an example of another repository\n```\n"
    )
    (root / "pkg" / "mod.py").write_text(
        '"""A module (docs/algorithms.md §1.2)."""\n\nPATH = "docs/not-here.md"  # a string literal\n'
    )


def test_a_clean_tree_passes(tmp_path: Path) -> None:
    _mini_repo(tmp_path)
    assert find_bad_references(tmp_path) == []


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        ("pkg/bad.py", '"""Derived in DESIGN.md, step 4."""\n', "pkg/bad.py:1: cites 'DESIGN.md'"),
        ("pkg/bad.py", "x = 1  # see docs/gone.md\n", "pkg/bad.py:1: cites 'docs/gone.md'"),
        ("pkg/bad.py", '"""As in algorithms.md §1.2."""\n', "pkg/bad.py:1: cites 'algorithms.md'"),
        ("pkg/bad.py", '"""Table (docs/algorithms.md §9.1)."""\n', "pkg/bad.py:1: cites 'docs/algorithms.md §9.1'"),
        ("docs/bad.md", "Read [this](missing.md).\n", "docs/bad.md:1: cites 'missing.md'"),
        ("docs/bad.md", "\nThe threshold of acceptance A9.\n", "docs/bad.md:2: cites 'acceptance A9'"),
        ("docs/fragments/new.md", "See [there](nowhere.md).\n", "docs/fragments/new.md:1: cites 'nowhere.md'"),
        ("specs/bad.yaml", "# the benchmark of docs/speed.md\nname: x\n", "specs/bad.yaml:1: cites 'docs/speed.md'"),
    ],
)
def test_a_planted_bad_reference_is_reported_with_file_and_line(
    tmp_path: Path, path: str, text: str, expected: str
) -> None:
    _mini_repo(tmp_path)
    (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / path).write_text(text)
    bad = [str(b) for b in find_bad_references(tmp_path)]
    assert any(b.startswith(expected) for b in bad), bad


def test_a_fragment_may_link_as_if_it_were_in_docs(tmp_path: Path) -> None:
    _mini_repo(tmp_path)
    (tmp_path / "docs" / "fragments").mkdir()
    (tmp_path / "docs" / "fragments" / "oracle-x.md").write_text("### X\n\nSee [the guide](guide.md).\n")
    assert find_bad_references(tmp_path) == []
