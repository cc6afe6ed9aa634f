"""The Java decoder's lexer: tokens as tree-sitter-java lexes them (names, numbers with Java's suffixes, operators,
string literals that may span raw line breaks, character literals that may not). The grammar is ``java_parser.py``;
the decoder, with the quirks it reproduces, ``java.py``."""

from __future__ import annotations

from functools import partial

from .common import (
    DecodeError, Token, longest_first, scan_escape, scan_name_or_number, scan_number, scan_operator,
    skip_blanks_and_comments,
)

_OPERATORS = longest_first(
    """>>>= <<= >>= >>> ... -> :: ++ -- && || == != <= >= += -= *= /= %= &= |= ^= << >>
    + - * / % = < > ! ~ ? : ; , . ( ) [ ] { } @ &  | ^""")
_BLANKS = " \t\r\f\n"
_LINE_BREAKS = "\n"
# Java: no octal prefix, type suffixes l/L f/F d/D, ``1.foo`` leaves the dot out unless the letter is an exponent or a
# float suffix, and ``$`` right after a literal does not make it malformed (it starts the next name).
_scan_number = partial(scan_number, radix_prefixes=("0x", "0X", "0b", "0B"), suffixes="lLfFdD",
                       letters_after_dot="eEfFdD", word_chars="_")


def tokenize(source: str) -> list[Token]:
    tokens: list[Token] = []
    length = len(source)
    position, newline = skip_blanks_and_comments(source, 0, _BLANKS, _LINE_BREAKS)
    while position < length:
        char = source[position]
        start = position
        scanned = scan_name_or_number(source, position, non_ascii_parts=False, scan_number=_scan_number)
        if scanned is not None:
            position, kind = scanned
        elif source.startswith('"""', position):
            end = source.find('"""', position + 3)
            if end < 0:
                raise DecodeError("unterminated text block")
            position = end + 3
            kind = "string"
        elif char == '"':
            position = _scan_string_literal(source, position)
            kind = "string"
        elif char == "'":
            position = _scan_character_literal(source, position)
            kind = "char"
        else:
            position = scan_operator(source, position, _OPERATORS)
            kind = "op"
        tokens.append(Token(kind, source[start:position], start, position, newline))
        position, newline = skip_blanks_and_comments(source, position, _BLANKS, _LINE_BREAKS)
    tokens.append(Token("eof", "", length, length, newline))
    return tokens


def _scan_string_literal(source: str, position: int) -> int:
    """End of the ``"..."`` literal starting here. Official-parser quirk: tree-sitter-java's ``string_fragment`` is
    ``[^"\\\\]+``, so unlike Java itself a literal runs on over raw line breaks (``"a`` + line break + ``b"`` decodes to
    ``a``, line break, ``b``); only a malformed escape (:func:`scan_escape`) or the end of input (an unterminated
    literal) is an ERROR."""
    length = len(source)
    position += 1
    while position < length:
        char = source[position]
        if char == '"':
            return position + 1
        position = scan_escape(source, position) if char == "\\" else position + 1
    raise DecodeError("unterminated string literal")


def _scan_character_literal(source: str, position: int) -> int:
    """End of the ``'...'`` literal starting here: one tree-sitter token, ``'`` then one or more of (any character but
    ``'``, a backslash or a raw ``\\n``) or (a backslash and any character), then ``'``. A raw ``\\n`` inside, or
    ``''``, lexes as nothing (an ERROR), while ``'ab'`` or a raw ``\\r`` is accepted."""
    length = len(source)
    start = position
    position += 1
    while position < length:
        char = source[position]
        if char == "'" and position > start + 1:
            return position + 1
        if char in "'\n":
            break
        position += 2 if char == "\\" else 1
    raise DecodeError("malformed character literal")
