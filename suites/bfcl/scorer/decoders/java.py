"""A small Java parser standing in for upstream's tree-sitter-java decoding of Java call syntax.

BFCL (bfcl-eval 2026.3.23, ``bfcl_eval/model_handler/parser/java_parser.py`` at gorilla commit
6ea57973c7a6097fd7c5915698c54c17c5b1b6c8) parses the text between the outer brackets with tree-sitter-java and
fails the output when the syntax tree contains an ERROR node. It then takes the *first* method invocation of the tree
(pre-order) and turns every ``name=value`` argument into ``{name: text}``, where the text is rebuilt from the value's
syntax tree: string and char literals lose their quotes at the top level, identifiers, class literals, type names and
method invocations keep their source text, ``new T[]{...}`` and ``new T(...)`` are rebuilt (an anonymous class body
is dropped), and every other node is the concatenation of its tokens **without whitespace** (``1 + 2`` -> ``1+2``).
Bare identifiers and class literals passed positionally land under the key ``None``; other positional values are
dropped; a repeated name fails the output.

Deviation (documented): tree-sitter's error recovery cannot be reproduced in general. This parser accepts
expression statements, ``return`` statements, local variable declarations and blocks, and rejects everything else.
Two recoveries of tree-sitter are reproduced: a MISSING ``;`` at the end of a statement and a MISSING identifier
before a statement that starts with ``[`` (``[call(...)]`` reads as an array access), except when the program is one
statement of at most 10 bytes on one line, where tree-sitter's cost model prefers an ERROR node (measured against
tree-sitter-java 0.21). The contents of anonymous class bodies and lambda blocks are not validated.

String literals are read as tree-sitter-java lexes them (see :func:`.java_lexer._scan_string_literal`): a ``"..."``
literal may span raw line breaks, a ``'...'`` character literal may not. Texts are cut with upstream's byte-offset
slicing (see :class:`_ByteOffsetSlices`). Deviation: string templates (``"\\{expr}"``) are not parsed, ``\\{`` reads as
an escape (a template whose expression does not parse is an ERROR upstream and decodes here).

Comments are skipped as blanks by the tokenizer, but tree-sitter keeps them as nodes, and upstream reads them:
the assignment's third child is the value, so a comment between ``name`` and ``=`` or between ``=`` and the value
takes its place (``f(a=/*c*/1)`` is ``{"a": "/*c*/"}``, ``f(a /*c*/ = 1)`` is ``{"a": "="}``;
:func:`.common.assignment_children`); inside a value a comment is part of the token concatenation
(``new int[]{/*c*/1,2}``) and inside ``new T(...)`` an argument of its own (``new Foo(/*c*/, 1)``), except between
the parts of ``new T[]{...}`` that upstream reads by field (:func:`_with_comments`); a comment around the single
short statement does not lengthen it (``/*c*/f(a=1)`` is an ERROR, as ``f(a=1)`` is), while an empty statement
``;`` before it does. Checked on 567 frozen official rows (comments in 62 value shapes, empty arguments ``f(a=)``,
``f(a=1,)``, ``f(,a=1)``, ``f(a=1,,b=2)``, ``f()``, empty statements): all agree.
"""

from __future__ import annotations

from .common import DecodeError, Node, call_arguments, comments_between, tree_sitter_input
from .java_parser import Parser

_VERBATIM_TYPES = {"identifier", "class_literal", "type_identifier", "method_invocation"}


def _flat_text(node: Node, source: str) -> str:
    """tree-sitter-based text rebuild used by BFCL for nested values (see module docstring)."""
    if node.type in ("string_literal", "character_literal") or node.type in _VERBATIM_TYPES:
        return node.text(source)
    if node.type == "array_creation_expression":
        value = node.fields.get("value")
        if value is None:
            # Upstream reads the missing initializer and crashes: the output does not decode.
            raise DecodeError("array creation without an initializer")
        return f"new {_flat_text(node.fields['type'], source)}[]{_flat_text(value, source)}"
    if node.type == "object_creation_expression":
        arguments = [
            _flat_text(child, source)
            for child in _with_comments(node.fields["arguments"].children, source)
            if child.type not in (",", "(", ")")
        ]
        return f"new {_flat_text(node.fields['type'], source)}({', '.join(arguments)})"
    if node.children:
        return "".join(_flat_text(child, source) for child in _with_comments(node.children, source))
    return node.text(source)


def _with_comments(children: list[Node], source: "str | _ByteOffsetSlices") -> list[Node]:
    """``children`` with the comments between them, which tree-sitter keeps as nodes of the node that spans them:
    upstream's concatenation keeps their text, and a comment in ``new T(...)`` is an argument of its own."""
    text = source.source if isinstance(source, _ByteOffsetSlices) else source
    result = children[:1]
    for previous, child in zip(children, children[1:]):
        if previous.end < child.start:  # the gaps of all levels are disjoint: linear in the text overall
            result += comments_between(text, previous.end, child.start)
        result.append(child)
    return result


def _top_value(node: Node, source: str) -> str:
    if node.type in ("string_literal", "character_literal"):
        return node.text(source)[1:-1]
    return _flat_text(node, source)


def _first_invocation(node: Node) -> Node | None:
    if node.type == "method_invocation":
        return node
    for child in node.children:
        found = _first_invocation(child)
        if found is not None:
            return found
    return None


class _ByteOffsetSlices:
    """Official-parser quirk: upstream's ``get_text`` slices the Python *str* with tree-sitter's *byte* offsets
    (``source_code[node.start_byte:node.end_byte]``), so after a non-ASCII character every extracted text is shifted
    right (measured: ``f(a="é", b=1)`` decodes to ``{'a': 'é"', '=': ')'}``). Slicing this object with our character
    offsets gives that same text."""

    def __init__(self, source: str):
        self.source = source
        self.byte_at = [0]
        for char in source:
            self.byte_at.append(self.byte_at[-1] + len(char.encode("utf-8")))

    def __getitem__(self, span: slice) -> str:
        return self.source[self.byte_at[span.start]:self.byte_at[span.stop]]


def parse_java_calls(source: str) -> list[dict] | dict:
    """Decode the text between the outer brackets; ``{}`` (not a list) when there is no method invocation."""
    with tree_sitter_input(source):
        statements = Parser(source).program()
    text = source
    if not source.isascii():
        source = _ByteOffsetSlices(source)  # type: ignore[assignment]  # sliced like a str by Node.text
    for statement in statements:
        invocation = _first_invocation(statement)
        if invocation is None:
            continue
        name_node = invocation.fields["name"]
        object_node = invocation.fields.get("object")
        name = name_node.text(source)
        if object_node is not None:
            name = f"{object_node.text(source)}.{name}"
        # bare identifiers and class literals are the positional values upstream keeps
        arguments = call_arguments(invocation.fields["arguments"].children, text, source,
                                   ("identifier", "class_literal"), lambda node: _top_value(node, source))
        return [{name: arguments}]
    return {}
