"""What the small Java and JavaScript parsers share, in one place: the decode error, tokens, syntax nodes, the
scanning steps both lexers take (each language passes its own character sets, prefixes and operators), the token
cursor with its comma-list loop, the guard every parse runs under, and upstream's reading of a call's arguments
(``bfcl_eval/model_handler/parser/java_parser.py`` and ``js_parser.py`` at gorilla commit
6ea57973c7a6097fd7c5915698c54c17c5b1b6c8 read them with the same loop).

The recursive descent itself stays in each language's module and runs in its own frames (the guard is a context
manager, the comma-list loop a generator driven from the caller's loop), so sharing these pieces adds no stack frame
per nesting level: the depth at which deep nesting fails is the same as with each language's own copy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


class DecodeError(Exception):
    """The model text does not decode in the requested return format (BFCL: ``ast_decoder:decoder_failed``)."""


@dataclass
class Token:
    kind: str  # "name", "number", "string", "char", "template", "regex", "op", "eof"
    text: str
    start: int
    end: int
    newline_before: bool = False  # a line terminator sits between the previous token and this one
    # JavaScript: the token right after a string that tree-sitter closed with a MISSING quote; tree-sitter lexed it in
    # error mode, so no automatic semicolon can come before it.
    after_missing_quote: bool = False


@dataclass
class Node:
    """A syntax node named like tree-sitter's node types, spanning ``source[start:end]``."""

    type: str
    start: int
    end: int
    children: list["Node"] = field(default_factory=list)
    fields: dict[str, "Node"] = field(default_factory=dict)

    def text(self, source: str) -> str:
        return source[self.start:self.end]


def leaf(token: Token, node_type: str | None = None) -> Node:
    return Node(node_type or token.text, token.start, token.end)


def inner(node_type: str, children: list[Node], **fields: Node) -> Node:
    return Node(node_type, children[0].start, children[-1].end, children, dict(fields))


def skip_blanks_and_comments(source: str, position: int, blanks: str, line_breaks: str) -> tuple[int, bool]:
    """Skip whitespace and ``//``/``/* */`` comments; also say whether a line break was skipped (a line break
    inside a block comment counts only as ``\\n``, in both languages)."""
    length = len(source)
    newline = False
    while position < length:
        char = source[position]
        if char in blanks:
            newline = newline or char in line_breaks
            position += 1
        elif source.startswith("//", position):
            end = source.find("\n", position)
            position = length if end < 0 else end
        elif source.startswith("/*", position):
            end = source.find("*/", position + 2)
            if end < 0:
                raise DecodeError("unterminated comment")
            newline = newline or "\n" in source[position:end]
            position = end + 2
        else:
            break
    return position, newline


def longest_first(operators: str) -> list[str]:
    """A language's operators (blank-separated), longest first, so a scan takes the longest one that matches."""
    return sorted(operators.split(), key=len, reverse=True)


def scan_operator(source: str, position: int, operators: list[str], not_before_digit: tuple[str, ...] = ()) -> int:
    """End of the longest operator starting here; ``not_before_digit`` operators are passed over when a digit follows
    them (JavaScript's ``?.`` before a digit is a conditional ``?`` and a number)."""
    for text in operators:
        if source.startswith(text, position):
            end = position + len(text)
            if text in not_before_digit and source[end:end + 1].isdigit():
                continue
            return end
    raise DecodeError(f"unexpected character {source[position]!r}")


def scan_name_or_number(source: str, position: int, *, non_ascii_parts: bool,
                        scan_number: Callable[[str, int], int]) -> tuple[int, str] | None:
    """End and kind (``"name"`` or ``"number"``) of the identifier or number literal starting here, or None when
    neither starts here. ``non_ascii_parts``: see :func:`scan_identifier`; ``scan_number``: the language's number
    scanner (:func:`scan_number` with its prefixes and suffixes)."""
    char = source[position]
    if is_identifier_start(char):
        return scan_identifier(source, position, non_ascii_parts), "name"
    if char.isdigit() or (char == "." and position + 1 < len(source) and source[position + 1].isdigit()):
        return scan_number(source, position), "number"
    return None


def is_identifier_start(char: str) -> bool:
    return char.isalpha() or char in "_$" or (ord(char) > 127 and char.isidentifier())


def scan_identifier(source: str, position: int, non_ascii_parts: bool) -> int:
    """End of the name starting here; ``non_ascii_parts`` also continues it over non-ASCII identifier characters
    that are not alphanumeric (JavaScript does, Java does not)."""
    length = len(source)
    while position < length and (source[position].isalnum() or source[position] in "_$"
                                 or (non_ascii_parts and ord(source[position]) > 127
                                     and source[position].isidentifier())):
        position += 1
    return position


def scan_number(source: str, position: int, *, radix_prefixes: tuple[str, ...], suffixes: str,
                letters_after_dot: str | None, word_chars: str) -> int:
    """End of the number literal starting here.

    ``radix_prefixes`` start a literal whose body is any run of alphanumerics and ``_``; ``suffixes`` are the
    one-character type suffixes; ``letters_after_dot``, when given, are the only letters after a ``.`` that keep the
    dot in the number (any other letter leaves the dot out: Java's ``1.foo``); ``word_chars`` are the non-alphanumeric
    characters that make a literal malformed when they follow it directly.
    """
    length = len(source)
    if source.startswith(radix_prefixes, position):
        position += 2
        while position < length and (source[position].isalnum() or source[position] == "_"):
            position += 1
        return position
    while position < length and (source[position].isdigit() or source[position] == "_"):
        position += 1
    if position < length and source[position] == ".":
        after = source[position + 1] if position + 1 < length else ""
        if letters_after_dot is None or not (after.isalpha() and after not in letters_after_dot):
            position += 1
            while position < length and (source[position].isdigit() or source[position] == "_"):
                position += 1
    if position < length and source[position] in "eE":
        probe = position + 1
        if probe < length and source[probe] in "+-":
            probe += 1
        if probe < length and source[probe].isdigit():
            position = probe
            while position < length and source[position].isdigit():
                position += 1
    if position < length and source[position] in suffixes:
        position += 1
    if position < length and (source[position].isalnum() or source[position] in word_chars):
        raise DecodeError("malformed number literal")
    return position


_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


def scan_escape(source: str, position: int, line_continuations: bool = False) -> int:
    """End of the escape sequence whose backslash sits at ``position``: tree-sitter's ``escape_sequence`` token, the
    same in both grammars -- ``\\u{hex...}``, ``\\u`` + 4 hex digits, ``\\x`` + 2 hex digits, 1 to 3 octal digits,
    or any other single character (a raw line break included). ``line_continuations`` (JavaScript) also takes a
    backslash, ``\\r`` or ``?``, and a line terminator as one three-character escape (the grammar's
    ``[\\r?][\\n\\u2028\\u2029]``). A ``\\x``/``\\u`` without its digits, or a backslash at the end, lexes as no
    token at all, which tree-sitter reports as an ERROR (measured: ``"\\xZZ"``, ``'\\u12'`` fail in both)."""
    length = len(source)
    position += 1
    if position >= length:
        raise DecodeError("backslash at the end of a string literal")
    char = source[position]
    if line_continuations and char in "\r?" and position + 1 < length and source[position + 1] in "\n\u2028\u2029":
        return position + 2
    if char == "x":
        if all(index < length and source[index] in _HEX_DIGITS for index in (position + 1, position + 2)):
            return position + 3
        raise DecodeError("malformed \\x escape")
    if char == "u":
        if position + 1 < length and source[position + 1] == "{":
            end = position + 2
            while end < length and source[end] in _HEX_DIGITS:
                end += 1
            if end > position + 2 and end < length and source[end] == "}":
                return end + 1
        elif all(index < length and source[index] in _HEX_DIGITS for index in range(position + 1, position + 5)):
            return position + 5
        raise DecodeError("malformed \\u escape")
    end = position + 1
    while end < length and end < position + 3 and "0" <= char <= "7" and "0" <= source[end] <= "7":
        end += 1
    return end


class TokenStream:
    """A cursor over tokens with the small helpers a recursive-descent parser needs."""

    def __init__(self, tokens: list[Token]):
        self.tokens = tokens
        self.index = 0
        self._closing: dict[tuple[str, str], dict[int, int]] = {}

    def closing(self, index: int, opens: str = "([{", closes: str = ")]}") -> int | None:
        """The index of the token that brings the bracket count back to zero after the opening bracket at ``index``
        (a token whose text is one of ``opens`` counts +1, one of ``closes`` -1, whatever their kinds: the parsers'
        look-ahead for an arrow function or a lambda), None when the tokens end first. Found for every bracket in one
        pass and kept, so looking ahead from each level of deeply nested brackets costs O(n) in all, not
        O(depth x n) (a 1 MB reply of nested parentheses took minutes)."""
        key = (opens, closes)
        table = self._closing.get(key)
        if table is None:
            table, stack = {}, []
            for position, token in enumerate(self.tokens):
                if token.text and token.text in opens and len(token.text) == 1:
                    stack.append(position)
                elif token.text and token.text in closes and len(token.text) == 1 and stack:
                    table[stack.pop()] = position
            self._closing[key] = table
        return table.get(index)

    @property
    def current(self) -> Token:
        return self.tokens[self.index]

    def peek(self, offset: int = 1) -> Token:
        return self.tokens[min(self.index + offset, len(self.tokens) - 1)]

    def at(self, *texts: str) -> bool:
        token = self.current
        return token.kind in ("op", "name") and token.text in texts

    def advance(self) -> Token:
        token = self.tokens[self.index]
        if token.kind != "eof":
            self.index += 1
        return token

    def expect(self, text: str) -> Token:
        if not self.at(text):
            raise DecodeError(f"expected {text!r} at offset {self.current.start}, found {self.current.text!r}")
        return self.advance()

    def comma_separated(self, close_text: str, pieces: list[Node] | None = None,
                        trailing_comma: bool = True) -> Iterator[None]:
        """Yield once per item of a comma-separated list that ends before ``close_text``; the caller parses the item
        in its loop body (in its own frame, so a nesting level costs no extra stack frame and the depth at which
        deep nesting fails is unchanged). Comma leaves are appended to ``pieces`` when given. Without
        ``trailing_comma`` a comma must be followed by another item (Java argument lists)."""
        if self.at(close_text):
            return
        while True:
            yield
            if not self.at(","):
                return
            comma = self.advance()
            if pieces is not None:
                pieces.append(leaf(comma))
            if trailing_comma and self.at(close_text):
                return


def assignment_children(node: Node, source: str) -> list[Node]:
    """An assignment's children as tree-sitter lists them: the comments between the target, the operator and the
    value are children too (tree-sitter keeps comments as nodes where they occur; this parser skips them as
    blanks). Upstream reads the value as ``children[2]``, so ``a=/*c*/1`` gives the comment and ``a /*c*/ = 1`` the
    ``=``. ``source`` is the parsed text (character offsets)."""
    target, operator, value = node.children[0], node.children[1], node.children[-1]
    children = [target]
    children += comments_between(source, target.end, operator.start)
    children.append(operator)
    children += comments_between(source, operator.end, value.start)
    children.append(value)
    return children


def comments_between(source: str, start: int, end: int) -> list[Node]:
    """The comments in ``source[start:end]``, a run of blanks and comments, as nodes (a line comment stops before its
    line break, as tree-sitter's ``line_comment`` / ``comment`` does)."""
    comments = []
    position = start
    while position < end:
        if source.startswith("//", position):
            stop = source.find("\n", position, end)
            stop = end if stop < 0 else stop
            comments.append(Node("comment", position, stop))
            position = stop
        elif source.startswith("/*", position):
            stop = source.find("*/", position + 2, end)
            stop = end if stop < 0 else stop + 2
            comments.append(Node("comment", position, stop))
            position = stop
        else:
            position += 1
    return comments


@contextmanager
def tree_sitter_input(source: str) -> Iterator[None]:
    """The guard a parse of ``source`` runs under (``with tree_sitter_input(source): ...``, which adds no stack frame
    to the parse): a lone surrogate is refused first (upstream cannot encode the text for tree-sitter and fails the
    output), and nesting too deep for the recursive descent fails the output instead of raising."""
    try:
        source.encode("utf-8")
    except UnicodeEncodeError:
        raise DecodeError("a lone surrogate: upstream cannot encode the text for tree-sitter") from None
    try:
        yield
    except RecursionError:
        raise DecodeError("expression nested too deeply") from None


def call_arguments(arguments: list[Node], text: str, sliced: object, positional: tuple[str, ...],
                   value_text: Callable[[Node], str]) -> dict:
    """Upstream's reading of a call's argument list (the same loop in both languages): each ``name=value``
    assignment becomes ``{name: value text}``, where the value is the assignment's third child as tree-sitter lists
    it (:func:`assignment_children`: a comment may take its place); a positional argument of a ``positional`` node
    type lands under the key ``None``; any other positional argument is dropped; a repeated name fails the output.

    ``text`` is the parsed text (character offsets); ``sliced`` is what upstream slices node texts from (the text
    itself, or Java's byte-offset view of it); ``value_text(node)`` renders a value the language's way.
    """
    result: dict = {}
    for child in arguments:
        if child.type == "assignment_expression":
            key = child.children[0].text(sliced)
            value = value_text(assignment_children(child, text)[2])
        elif child.type in positional:
            key, value = None, value_text(child)
        else:
            continue
        if key in result:
            raise DecodeError("multiple arguments with the same name")
        result[key] = value
    return result
