"""Read YAML safely, keeping the line of every key and list item for error messages.

The composed node tree of PyYAML's SafeLoader is walked by hand: scalars are built by
``SafeConstructor`` (so no tag can construct an arbitrary object), and every path into the document
gets its 1-based line number. A node budget stops alias bombs ("billion laughs") early.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
import yaml.reader
from yaml.constructor import ConstructorError, SafeConstructor

from ldpbench.errors import SpecError, UsageError
from ldpbench.util.safeio import MAX_SPEC_BYTES, read_bounded

Path_ = tuple[Any, ...]

#: Spec files larger than this (1 MiB, :data:`ldpbench.util.safeio.MAX_SPEC_BYTES`) are refused unread.
__all__ = ["MAX_DEPTH", "MAX_NODES", "MAX_SPEC_BYTES", "Document", "parse_document", "read_document"]
#: Refuse documents that expand to more values than this, counted after every alias and merge key
#: (``<<:``) is expanded: alias bombs ("billion laughs") and merge-key bombs. The largest shipped
#: spec has about 100 values; 10,000 keeps the worst case (see MAX_TOKENS) within seconds.
MAX_NODES = 10_000
#: Refuse documents of more YAML tokens than this while scanning, so that a large file is refused
#: after a bounded scan (PyYAML's pure-Python scanner manages 10,000 to 50,000 tokens a second). A value
#: is about two tokens (a separator or key, and the scalar): a flat list of MAX_NODES items fits.
MAX_TOKENS = 2 * MAX_NODES + 1_000
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
    """Load a spec file; YAML syntax errors become a :class:`SpecError` with ``FILE:LINE``.

    The file is read with :func:`~ldpbench.util.safeio.read_text_bounded`: a FIFO, a device
    (``/dev/zero``), a directory or a file over :data:`MAX_SPEC_BYTES` is refused at once, never
    read until memory runs out or blocked on.
    """
    try:
        raw = read_bounded(path, limit=MAX_SPEC_BYTES, what="spec")
    except UsageError as exc:
        # safeio words it "spec PATH: reason"; a spec problem reads "PATH:1: reason".
        reason = str(exc).removeprefix(f"spec {Path(path)}: ")
        raise SpecError(f"{path}:1: {reason}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError(f"{path}:1: spec is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return parse_document(text, str(path))


class _DepthLimitedLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing nesting deeper than :data:`MAX_DEPTH` as it scans.

    PyYAML needs seconds for ``[[[[...]]]]`` a thousand deep (and its parser and composer recurse
    once per level), so the depth is checked on the scanner's own flow level and indentation
    stack, token by token: a bracket inside a quoted string, a comment or a block scalar is never
    counted (a regular expression over the text cannot tell those apart), and a deep document is
    refused at its 51st level, after a bounded amount of work.
    """

    def __init__(self, text: str, filename: str):
        self.filename = filename
        super().__init__(text)

    def _too_deep(self) -> SpecError:
        line = self.get_mark().line + 1
        return SpecError(f"{self.filename}:{line}: the spec is nested too deeply (at most {MAX_DEPTH} levels)")

    def fetch_flow_collection_start(self, TokenClass: Any) -> None:
        if self.flow_level >= MAX_DEPTH:
            raise self._too_deep()
        super().fetch_flow_collection_start(TokenClass)

    def fetch_more_tokens(self) -> None:
        super().fetch_more_tokens()
        # PyYAML scans about 50,000 tokens a second: a megabyte of "[1, 1, 1, ...]" would take
        # ten seconds to refuse for its size. A spec within MAX_NODES has far fewer tokens.
        if self.tokens_taken + len(self.tokens) > MAX_TOKENS:
            raise SpecError(
                f"{self.filename}:{self.get_mark().line + 1}: the spec is too large "
                f"(over {MAX_TOKENS:,} YAML tokens; at most {MAX_NODES:,} values)"
            )

    def add_indent(self, column: int) -> bool:
        if len(self.indents) >= MAX_DEPTH:
            raise self._too_deep()
        return super().add_indent(column)


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
    """Parse spec text; every problem (syntax, tags, size, depth) is a ``FILE:LINE`` :class:`SpecError`."""
    try:
        # The reader checks for unprintable characters as soon as it is built.
        loader = _DepthLimitedLoader(text, filename)
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
    check_expanded_size(node, filename)
    walker = _Walker(filename)
    data = walker.build(node, ())
    return Document(data, walker.lines, filename)


_MERGE_TAG = "tag:yaml.org,2002:merge"
_VALUE_TAG = "tag:yaml.org,2002:value"


def _merge_sources(node: yaml.MappingNode, value: yaml.Node, filename: str) -> list[yaml.MappingNode]:
    """The mappings a merge key (``<<: *a`` or ``<<: [*a, *b]``) pulls into ``node``."""
    sources = value.value if isinstance(value, yaml.SequenceNode) else [value]
    for source in sources:
        if not isinstance(source, yaml.MappingNode):
            raise SpecError(
                f"{filename}:{source.start_mark.line + 1}: a merge key (<<) takes a mapping or a list of mappings"
            )
    return sources  # type: ignore[return-value]


def check_expanded_size(root: yaml.Node, filename: str) -> None:
    """Refuse a document whose values, after expanding every alias and merge key, exceed
    :data:`MAX_NODES`, or which nest deeper than :data:`MAX_DEPTH` once expanded.

    Counted on the composed node graph, before anything is built: each distinct node is visited
    once (its expanded size and height are memoized), so the check takes time linear in the
    file, however large the expansion would be. A 638-byte spec of nested merge keys
    (``<<: [*a, *a, ...]`` over a few levels) expands to billions of values; building it, or
    letting PyYAML flatten its merge keys in place, takes seconds to minutes and gigabytes.
    A node that contains itself (``&a [*a]``) expands forever and is refused as too deep.
    """
    memo: dict[int, tuple[int, int]] = {}  # id(node) -> (expanded values, expanded height)
    active: set[int] = set()

    def too_deep(node: yaml.Node) -> SpecError:
        return SpecError(
            f"{filename}:{node.start_mark.line + 1}: the spec is nested too deeply "
            f"(at most {MAX_DEPTH} levels; a recursive alias?)"
        )

    def visit(node: yaml.Node, depth: int) -> tuple[int, int]:
        key = id(node)
        if key in active:
            raise too_deep(node)
        if key not in memo:
            if depth > MAX_DEPTH:
                raise too_deep(node)
            active.add(key)
            size, height = 1, 0
            for child, merged in _children(node, filename):
                # A merged mapping's pairs become this mapping's own (copied in): its values
                # count, at this level, but the merged mapping itself is not a value here.
                child_size, child_height = visit(child, depth if merged else depth + 1)
                size += child_size - 1 if merged else child_size
                height = max(height, child_height if merged else child_height + 1)
                if size > MAX_NODES:
                    raise SpecError(
                        f"{filename}:{node.start_mark.line + 1}: the spec is too large once its aliases "
                        f"and merge keys (<<) are expanded (over {MAX_NODES:,} values)"
                    )
            active.discard(key)
            memo[key] = (size, height)
        size, height = memo[key]
        if depth + height > MAX_DEPTH:
            raise too_deep(node)
        return size, height

    visit(root, 0)


def _children(node: yaml.Node, filename: str) -> Iterator[tuple[yaml.Node, bool]]:
    """``(child, merged)``: the items of a sequence; the keys and values of a mapping, and the
    mappings merged into it (``merged`` true)."""
    if isinstance(node, yaml.SequenceNode):
        for item in node.value:
            yield item, False
    elif isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                for source in _merge_sources(node, value_node, filename):
                    yield source, True
            else:
                yield key_node, False
                yield value_node, False


class _Walker:
    def __init__(self, filename: str):
        self.filename = filename
        self.lines: dict[Path_, int] = {}
        self.constructor = SafeConstructor()
        self.count = 0

    def where(self, node: yaml.Node) -> str:
        return f"{self.filename}:{node.start_mark.line + 1}"

    def pairs(self, node: yaml.MappingNode) -> list[tuple[yaml.Node, yaml.Node, bool]]:
        """``(key, value, merged)`` of a mapping: the pairs of merged mappings, then its own.

        YAML's merge-key rule, without PyYAML's in-place flattening (which copies pairs into every
        merged mapping and so grows geometrically with nested merges): a key written in the mapping
        overrides a merged one, and of several merged mappings the first listed wins.
        """
        own: list[tuple[yaml.Node, yaml.Node, bool]] = []
        merged: list[tuple[yaml.Node, yaml.Node, bool]] = []
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                for source in _merge_sources(node, value_node, self.filename):
                    merged.extend((k, v, True) for k, v, _ in self.pairs(source))
            else:
                own.append((key_node, value_node, False))
        return merged + own

    def build(self, node: yaml.Node, path: Path_) -> Any:
        self.count += 1
        if self.count > MAX_NODES:  # check_expanded_size refuses these first; kept as a backstop
            raise SpecError(f"{self.where(node)}: the spec is too large (over {MAX_NODES:,} values; aliases?)")
        if len(path) > MAX_DEPTH:  # also ends a recursive alias (&a [*a]), which nests forever
            raise SpecError(
                f"{self.where(node)}: the spec is nested too deeply (at most {MAX_DEPTH} levels; a recursive alias?)"
            )
        self.lines.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            out: dict[Any, Any] = {}
            written: set[Any] = set()  # keys written in this mapping (not merged into it)
            for key_node, value_node, merged in self.pairs(node):
                if key_node.tag == _VALUE_TAG:
                    key_node.tag = "tag:yaml.org,2002:str"
                key = self.build(key_node, path + ("<key>",))
                if isinstance(key, (list, dict)):
                    raise SpecError(f"{self.where(key_node)}: a key must be a plain value")
                if key in written:
                    raise SpecError(f"{self.where(key_node)}: duplicate key '{key}'")
                if key in out and merged:
                    continue  # of several merged mappings, the first listed wins
                if not merged:
                    written.add(key)
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
        except ConstructorError as exc:
            problem = exc.problem or str(exc)
            raise SpecError(f"{self.where(node)}: {problem}") from None
        except Exception as exc:  # noqa: BLE001 - any scalar PyYAML cannot read is a spec mistake
            # ``!!bool maybe`` raises KeyError, ``!!int 0x`` ValueError, ``!!timestamp`` of a
            # malformed date TypeError or ValueError: the user wrote a tag and a value that do not
            # go together; that is a FILE:LINE message, never a traceback.
            tag = node.tag.rsplit(":", 1)[-1]
            value = node.value if len(str(node.value)) <= 40 else str(node.value)[:40] + "..."
            raise SpecError(f"{self.where(node)}: cannot read {value!r} as !!{tag} ({type(exc).__name__})") from None
