"""Shared pieces of the small Java/JavaScript parsers: the decode error, tokens, syntax nodes."""

from __future__ import annotations

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


class TokenStream:
    """A cursor over tokens with the small helpers a recursive-descent parser needs."""

    def __init__(self, tokens: list[Token]):
        self.tokens = tokens
        self.index = 0

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
