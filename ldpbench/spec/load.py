"""Read YAML safely, keeping the line of every key and list item for error messages.

The composed node tree of PyYAML's SafeLoader is walked by hand: scalars are built by
``SafeConstructor`` (so no tag can construct an arbitrary object), and every path into the document
gets its 1-based line number. A node budget stops alias bombs ("billion laughs") early.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
import yaml.reader
from yaml.constructor import ConstructorError, SafeConstructor

from ..errors import SpecError

Path_ = tuple[Any, ...]

#: Refuse spec files larger than this before parsing them (a spec is a page of YAML).
MAX_SPEC_BYTES = 1_000_000
#: Refuse documents that expand to more nodes than this (alias bombs).
MAX_NODES = 50_000
#: Refuse values nested deeper than this (a spec needs about 5 levels; a recursive alias is infinite).
MAX_DEPTH = 50


class Document:
    """Parsed YAML data plus the line of each path (``("pipelines", 2, "calibrate")`` -> 14)."""

    def __init__(self, data: Any, lines: dict[Path_, int], filename: str):
        self.data = data
        self.lines = lines
        self.filename = filename

    def line(self, path: Path_) -> int:
        """The line of ``path``, or of its nearest ancestor that has one."""
        path = tuple(path)
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return self.lines.get((), 1)

    def where(self, path: Path_) -> str:
        return f"{self.filename}:{self.line(path)}"


def read_document(path: str | Path) -> Document:
    """Load a spec file; YAML syntax errors become a :class:`SpecError` with ``FILE:LINE``."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise SpecError(f"{path}: no such spec file") from None
    except OSError as exc:
        raise SpecError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if len(raw) > MAX_SPEC_BYTES:
        raise SpecError(f"{path}:1: spec is {len(raw):,} bytes; a spec must be under {MAX_SPEC_BYTES:,}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError(f"{path}:1: spec is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return parse_document(text, str(path))


#: Flow brackets outside quoted strings and comments (a cheap look before PyYAML parses).
_FLOW_TOKENS = re.compile(r"""'(?:[^']|'')*'|"(?:[^"\\]|\\.)*"|#[^\n]*|[\[\]{}]""")


def _check_flow_depth(text: str, filename: str) -> None:
    """Refuse deeply nested flow collections before PyYAML sees them.

    PyYAML's scanner needs seconds for ``[[[[...]]]]`` a thousand deep (before it fails with a
    RecursionError), so a 2 kB file would hold the validator up; a spec needs a few levels.
    """
    depth = 0
    for match in _FLOW_TOKENS.finditer(text):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
            if depth > MAX_DEPTH:
                line = text.count("\n", 0, match.start()) + 1
                raise SpecError(f"{filename}:{line}: the spec is nested too deeply (at most {MAX_DEPTH} levels)")
        elif token in ("]", "}"):
            depth = max(0, depth - 1)


#: PyYAML problems that a misindented line (or one indented with a tab) usually causes.
_INDENTATION_PROBLEMS = (
    "mapping values are not allowed here",
    "expected <block end>",
    "did not find expected key",
    "did not find expected '-' indicator",
    "could not find expected ':'",
)
_INDENTATION_HINT = " — check the indentation (spaces, not tabs)"


def _indentation_hint(problem: str, text: str, line: int) -> str:
    """A hint for PyYAML's indentation errors, whose wording names the symptom, not the cause."""
    lines = text.splitlines()
    current = lines[line - 1] if 0 < line <= len(lines) else ""
    indent = current[: len(current) - len(current.lstrip())]
    if "'\\t'" in problem or "\t" in indent:
        return " — check the indentation: YAML indents with spaces, not tabs"
    if "mapping values are not allowed here" in problem:
        # Also what an unquoted ': ' inside a value gives (name: a: b).
        return f"{_INDENTATION_HINT}, or quote a value that contains ': '"
    if any(p in problem for p in _INDENTATION_PROBLEMS):
        return _INDENTATION_HINT
    return ""


def parse_document(text: str, filename: str = "<spec>") -> Document:
    _check_flow_depth(text, filename)
    try:
        # The reader checks for unprintable characters as soon as it is built.
        loader = yaml.SafeLoader(text)
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, max(0, exc.position)) + 1
        raise SpecError(
            f"{filename}:{line}: invalid YAML: character U+{exc.character:04X} is not allowed in YAML text"
            if isinstance(exc.character, int)
            else f"{filename}:{line}: invalid YAML: {exc.reason}"
        ) from None
    try:
        node = loader.get_single_node()
    except RecursionError:
        # PyYAML's parser and composer recurse once per nesting level.
        raise SpecError(f"{filename}:1: the spec is nested too deeply (at most {MAX_DEPTH} levels)") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        problem = exc.problem or str(exc)
        hint = _indentation_hint(problem, text, line)
        if exc.context:
            problem = f"{exc.context}: {problem}"
        raise SpecError(f"{filename}:{line}: invalid YAML: {problem}{hint}") from None
    except yaml.YAMLError as exc:
        raise SpecError(f"{filename}:1: invalid YAML: {exc}") from None
    finally:
        loader.dispose()
    if node is None:
        raise SpecError(f"{filename}:1: the spec is empty")
    walker = _Walker(filename)
    data = walker.build(node, ())
    return Document(data, walker.lines, filename)


class _Walker:
    def __init__(self, filename: str):
        self.filename = filename
        self.lines: dict[Path_, int] = {}
        self.constructor = SafeConstructor()
        self.count = 0

    def build(self, node: yaml.Node, path: Path_) -> Any:
        self.count += 1
        if self.count > MAX_NODES:
            raise SpecError(f"{self.filename}:{node.start_mark.line + 1}: the spec is too large (over {MAX_NODES:,} values; aliases?)")
        if len(path) > MAX_DEPTH:  # also ends a recursive alias (&a [*a]), which nests forever
            raise SpecError(
                f"{self.filename}:{node.start_mark.line + 1}: the spec is nested too deeply "
                f"(at most {MAX_DEPTH} levels; a recursive alias?)"
            )
        self.lines.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            try:
                self.constructor.flatten_mapping(node)
            except ConstructorError as exc:
                raise SpecError(f"{self.filename}:{node.start_mark.line + 1}: {exc.problem}") from None
            out: dict[Any, Any] = {}
            for key_node, value_node in node.value:
                key = self.build(key_node, path + ("<key>",))
                if isinstance(key, (list, dict)):
                    raise SpecError(f"{self.filename}:{key_node.start_mark.line + 1}: a key must be a plain value")
                if key in out:
                    raise SpecError(f"{self.filename}:{key_node.start_mark.line + 1}: duplicate key '{key}'")
                self.lines[path + (key,)] = key_node.start_mark.line + 1
                out[key] = self.build(value_node, path + (key,))
            self.lines.pop(path + ("<key>",), None)
            return out
        if isinstance(node, yaml.SequenceNode):
            items = []
            for i, item in enumerate(node.value):
                self.lines[path + (i,)] = item.start_mark.line + 1
                items.append(self.build(item, path + (i,)))
            return items
        try:
            return self.constructor.construct_object(node, deep=True)
        except (ConstructorError, ValueError) as exc:
            problem = getattr(exc, "problem", None) or str(exc)
            raise SpecError(f"{self.filename}:{node.start_mark.line + 1}: {problem}") from None
