"""The JavaScript decoder's lexer: tokens as tree-sitter-javascript lexes them (names, numbers, operators, string
literals with the grammar's error recovery, template strings, regular expressions, the line breaks automatic
semicolon insertion reads), and JSX elements scanned on characters. The grammar is ``javascript_parser.py``; the
decoder, with the quirks it reproduces, ``javascript.py``."""

from __future__ import annotations

import re
from functools import partial

from .common import (
    DecodeError, Token, longest_first, scan_escape, scan_name_or_number, scan_number, scan_operator,
    skip_blanks_and_comments,
)

_OPERATORS = longest_first(
    """>>>= ... === !== **= <<= >>= >>> &&= ||= ??= => == != <= >= && || ?? ?. ++ -- += -= *= /= %= &= |= ^= ** << >>
    + - * / % = < > ! ~ ? : ; , . ( ) [ ] { } & | ^ @ #""")
_REGEX_ALLOWED_AFTER = set("( , = : [ ! & | ? { } ; + - * % < > ~ ^".split()) | {
    "=>", "==", "===", "!=", "!==", "&&", "||", "??", "return", "typeof", "in", "of", "new", "delete", "void",
}
_LINE_BREAKS = "\n\u2028\u2029"
# The grammar's blank extras, ``[\s\p{Zs}\uFEFF\u2028\u2029\u2060\u200B]`` (tree-sitter's ``\s`` is ASCII here: U+0085
# is no blank, measured).
_BLANKS = (" \t\r\f\v\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f"
           "\u3000\ufeff\u2060\u200b" + _LINE_BREAKS)
# JavaScript: octal prefix too, the BigInt suffix n, a '.' after digits always belongs to the number, and ``$`` right
# after a literal makes it malformed.
_scan_number = partial(scan_number, radix_prefixes=("0x", "0X", "0b", "0B", "0o", "0O"), suffixes="n",
                       letters_after_dot=None, word_chars="_$")
_FRAGMENT_STOPS = {"'": "'\\\r\n", '"': '"\\\r\n'}


def tokenize(source: str, position: int = 0) -> list[Token]:
    tokens: list[Token] = []
    length = len(source)
    position, newline = skip_blanks_and_comments(source, position, _BLANKS, _LINE_BREAKS)
    after_missing_quote = False
    while position < length:
        char = source[position]
        start = position
        previous = tokens[-1] if tokens else None
        closed = True
        scanned = scan_name_or_number(source, position, non_ascii_parts=True, scan_number=_scan_number)
        if scanned is not None:
            position, kind = scanned
        elif char in "\"'":
            position, closed = _scan_string(source, position)
            kind = "string"
        elif char == "`":
            position = _scan_template(source, position)
            kind = "template"
        elif char == "/" and (previous is None or (previous.kind in ("op", "name") and previous.text in
                                                    _REGEX_ALLOWED_AFTER)) and _regex_end(source, position):
            position = _regex_end(source, position)
            kind = "regex"
        else:
            # ``?.`` followed by a digit is a conditional and a number, not optional chaining.
            position = scan_operator(source, position, _OPERATORS, not_before_digit=("?.",))
            kind = "op"
        if after_missing_quote and kind == "name":
            # tree-sitter's error-mode lexer reads any word as an identifier (``in``, ``instanceof`` too), and no
            # identifier can follow the string (measured).
            raise DecodeError("a word right after a string closed by a MISSING quote")
        tokens.append(Token(kind, source[start:position], start, position, newline and not after_missing_quote,
                            after_missing_quote))
        after_missing_quote = not closed
        position, newline = skip_blanks_and_comments(source, position, _BLANKS, _LINE_BREAKS)
    tokens.append(Token("eof", "", length, length, newline and not after_missing_quote, after_missing_quote))
    return tokens


def _scan_string(source: str, position: int) -> tuple[int, bool]:
    """End of the string literal whose quote sits at ``position``, and whether its closing quote is really there.

    Official-parser quirk: tree-sitter-javascript lexes a string as several tokens -- the quote, ``string_fragment``
    runs of anything but that quote, a backslash or a raw ``\\r``/``\\n``, escape sequences, the closing quote -- and
    the grammar's extras (blanks, comments) may sit between any two of them. Fragments and escapes are *immediate*
    tokens: they may follow the opening quote, another fragment or escape, or a comment, but never a skipped blank. So
    a raw line break inside quotes is skipped as a blank, together with the blanks, line breaks and comments after
    it; then

    * the closing quote completes the literal, whose text keeps everything in between (``'a\\n'`` -> ``a`` + line
      break: the case the BFCL decoder accepts);
    * anything else cannot continue the literal: tree-sitter's error recovery closes it with a zero-width MISSING
      quote right after its last fragment, escape or comment and resumes parsing at that next token (lexed in error
      mode); the literal's text has no closing quote (``'a\\n, b=1`` -> ``'a``), and the result is an ERROR-free
      tree when the rest parses (else ERROR, checked by the parser);
    * the end of input inside a fragment, or a malformed escape, is an ERROR.
    """
    quote = source[position]
    stops = _FRAGMENT_STOPS[quote]
    length = len(source)
    end = cursor = position + 1  # ``end``: where the literal's last token ends
    after_blank = False
    while True:
        if cursor >= length:
            if after_blank:
                return end, False
            raise DecodeError("unterminated string")
        char = source[cursor]
        if char == quote:
            return cursor + 1, True
        if char == "\\" and not after_blank:
            cursor = end = scan_escape(source, cursor, line_continuations=True)
        elif char not in stops and not after_blank:
            while cursor < length and source[cursor] not in stops:
                cursor += 1
            end = cursor
        elif char in _BLANKS:
            cursor += 1
            after_blank = True
        elif source.startswith("//", cursor):
            while cursor < length and source[cursor] not in "\r\n\u2028\u2029":
                cursor += 1
            end, after_blank = cursor, False
        elif source.startswith("/*", cursor) and source.find("*/", cursor + 2) >= 0:
            end = cursor = source.find("*/", cursor + 2) + 2
            after_blank = False
        else:
            return end, False


def _scan_template(source: str, position: int) -> int:
    position += 1
    while position < len(source):
        char = source[position]
        if char == "\\":
            position += 2
            continue
        if char == "`":
            return position + 1
        if source.startswith("${", position):
            depth = 1
            position += 2
            while position < len(source) and depth:
                if source[position] == "{":
                    depth += 1
                elif source[position] == "}":
                    depth -= 1
                elif source[position] in "\"'`":
                    position = (_scan_template(source, position) if source[position] == "`" else
                                _scan_string(source, position)[0]) - 1
                position += 1
            continue
        position += 1
    raise DecodeError("unterminated template string")


def _regex_end(source: str, position: int) -> int:
    """End of a regex literal starting here, or 0 when there is none (then '/' is an operator, e.g. in JSX)."""
    try:
        return _scan_regex(source, position)
    except DecodeError:
        return 0


def _scan_regex(source: str, position: int) -> int:
    position += 1
    in_class = False
    while position < len(source):
        char = source[position]
        if char == "\\":
            position += 2
            continue
        if char == "\n":
            break
        if char == "[":
            in_class = True
        elif char == "]":
            in_class = False
        elif char == "/" and not in_class:
            position += 1
            while position < len(source) and source[position].isalpha():
                position += 1
            return position
        position += 1
    raise DecodeError("unterminated regular expression")


_JSX_NAME = re.compile(r"[A-Za-z_$][\w$\-:.]*")


def _jsx_skip_space(source: str, position: int) -> int:
    while position < len(source) and source[position] in " \t\r\n":
        position += 1
    return position


def _jsx_braces_end(source: str, position: int) -> int:
    depth = 0
    while position < len(source):
        char = source[position]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return position + 1
        elif char in "\"'`":
            position = (_scan_template(source, position) if char == "`" else _scan_string(source, position)[0]) - 1
        position += 1
    raise DecodeError("unbalanced braces in JSX")


def jsx_element_end(source: str, position: int) -> int:
    if not source.startswith("<", position):
        raise DecodeError("expected a JSX element")
    position += 1
    name_match = _JSX_NAME.match(source, position)
    name = name_match.group(0) if name_match else ""
    position = name_match.end() if name_match else position
    while True:
        position = _jsx_skip_space(source, position)
        if source.startswith("/>", position):
            if not name:
                raise DecodeError("empty JSX tag")
            return position + 2
        if source.startswith(">", position):
            position += 1
            break
        attribute = _JSX_NAME.match(source, position)
        if not attribute or not name:
            raise DecodeError("malformed JSX attribute")
        position = _jsx_skip_space(source, attribute.end())
        if source.startswith("=", position):
            position = _jsx_skip_space(source, position + 1)
            if position < len(source) and source[position] in "\"'":
                closing = source.find(source[position], position + 1)
                if closing < 0:
                    raise DecodeError("unterminated JSX attribute")
                position = closing + 1
            elif source.startswith("{", position):
                position = _jsx_braces_end(source, position)
            elif source.startswith("<", position):
                position = jsx_element_end(source, position)
            else:
                raise DecodeError("malformed JSX attribute value")
    while True:
        if position >= len(source):
            raise DecodeError("unterminated JSX element")
        if source.startswith("</", position):
            close = _JSX_NAME.match(source, position + 2)
            close_name = close.group(0) if close else ""
            position = _jsx_skip_space(source, close.end() if close else position + 2)
            if close_name != name or not source.startswith(">", position):
                raise DecodeError("mismatched JSX closing tag")
            return position + 1
        if source[position] == "<":
            position = jsx_element_end(source, position)
        elif source[position] == "{":
            position = _jsx_braces_end(source, position)
        else:
            position += 1


def bare_quote(text: str) -> bool:
    """A string token closed by a MISSING quote without any fragment or escape: its opening quote, maybe followed by
    the line break, blanks and comments tree-sitter skipped (a fragment can only follow the quote directly, or a
    comment)."""
    return len(text) == 1 or (text[1] in "\r\n" and not text.endswith(text[0])
                              and skip_blanks_and_comments(text, 1, _BLANKS, _LINE_BREAKS)[0] == len(text))
