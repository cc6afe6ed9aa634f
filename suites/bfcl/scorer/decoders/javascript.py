"""A small JavaScript parser standing in for upstream's tree-sitter-javascript decoding of JS call syntax.

BFCL (bfcl-eval 2026.3.23, ``bfcl_eval/model_handler/parser/js_parser.py`` at gorilla commit
6ea57973c7a6097fd7c5915698c54c17c5b1b6c8) parses the text between the outer brackets with tree-sitter-javascript,
fails the output when the tree holds an ERROR node, and then looks at the program's top-level expression
statements in order: the first one whose expression *is* a call yields ``[{callee source text: arguments}]``; when
there is none the decoder returns ``None`` (which the checker reports as a wrong output format). Each ``name=value``
argument becomes ``{name: value source text}`` with one pair of matching outer quotes removed; a positional bare
identifier or a positional ``true`` (not ``false``) lands under the key ``None``; other positional values are
dropped; a repeated name fails the output.

Automatic semicolon insertion is honoured at line breaks, so ``javascript\\nf(a=1)`` is two statements.

String literals follow tree-sitter's token-level reading, error recovery included (see :func:`_scan_string`): a raw
line break inside quotes is skipped like a blank, so ``'a\\n'`` decodes to ``a`` plus the line break, and
``'a\\n, b=1`` is closed by a MISSING quote (the value keeps its opening quote: ``'a``).

Deviation (documented): tree-sitter's error recovery cannot be reproduced in general; this parser accepts the
common expression grammar and rejects everything else. Function and block bodies are checked for balanced braces
only.

Comments are skipped as blanks, but tree-sitter keeps them as nodes and upstream reads the assignment's third
child as the value: a comment between ``name`` and ``=`` or between ``=`` and the value takes the value's place
(``f(a=/*c*/1)`` is ``{"a": "/*c*/"}``, ``f(a /*c*/ = 1)`` is ``{"a": "="}``), reproduced by
:func:`.common.assignment_children`. Inside a value the source text is kept as it is, comments included.
Checked on 166 frozen official rows (comments in 22 value shapes, empty arguments): all agree.
"""

from __future__ import annotations

import re
from functools import partial

from .common import (
    DecodeError, Node, Token, TokenStream, call_arguments, inner, leaf, longest_first, scan_escape, scan_name_or_number,
    scan_number, scan_operator, skip_blanks_and_comments, tree_sitter_input,
)

_OPERATORS = longest_first(
    """>>>= ... === !== **= <<= >>= >>> &&= ||= ??= => == != <= >= && || ?? ?. ++ -- += -= *= /= %= &= |= ^= ** << >>
    + - * / % = < > ! ~ ? : ; , . ( ) [ ] { } & | ^ @ #""")
_RESERVED = {
    "break", "case", "catch", "class", "const", "continue", "debugger", "default", "delete", "do", "else",
    "export", "extends", "finally", "for", "function", "if", "import", "in", "instanceof", "new", "return",
    "switch", "throw", "try", "typeof", "var", "void", "while", "with", "null", "true", "false", "this", "super",
}
_ASSIGNMENT_OPERATORS = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", ">>>=", "**=",
                         "&&=", "||=", "??="}
_BINARY_PRECEDENCE = {
    "??": 1, "||": 2, "&&": 3, "|": 4, "^": 5, "&": 6, "==": 7, "!=": 7, "===": 7, "!==": 7,
    "<": 8, ">": 8, "<=": 8, ">=": 8, "instanceof": 8, "in": 8,
    "<<": 9, ">>": 9, ">>>": 9, "+": 10, "-": 10, "*": 11, "/": 11, "%": 11, "**": 12,
}
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


class _Parser:
    def __init__(self, source: str, tokens: list[Token] | None = None):
        self.source = source
        self.stream = TokenStream(tokenize(source) if tokens is None else tokens)

    def program(self) -> list[Node]:
        """Top-level statements: expression statements are parsed, others are refused (deviation)."""
        statements: list[Node] = []
        stream = self.stream
        while stream.current.kind != "eof":
            if stream.at(";"):
                stream.advance()
                continue
            if stream.at("{"):
                self.balanced("{", "}")
                statements.append(Node("statement_block", 0, 0))
                continue
            if stream.current.kind == "name" and stream.current.text in ("var", "let", "const"):
                self.declaration()
                statements.append(Node("lexical_declaration", 0, 0))
                continue
            expression = self.sequence()
            self.end_statement()
            statements.append(Node("expression_statement", expression.start, expression.end, [expression]))
        return statements

    def end_statement(self) -> None:
        stream = self.stream
        if stream.at(";"):
            stream.advance()
        elif stream.current.after_missing_quote:
            # tree-sitter lexed this token in error mode (a MISSING quote closed the string before it): no automatic
            # semicolon exists there, so neither the end of input nor '}' nor a line break ends the statement.
            raise DecodeError("a statement ending in a string closed by a MISSING quote")
        elif stream.current.kind == "eof" or stream.current.newline_before or stream.at("}"):
            return  # automatic semicolon insertion
        else:
            raise DecodeError(f"unexpected {stream.current.text!r} after an expression")

    def declaration(self) -> None:
        stream = self.stream
        stream.advance()
        while True:
            if stream.current.kind != "name" or stream.current.text in _RESERVED:
                raise DecodeError("expected a variable name")
            stream.advance()
            if stream.at("="):
                stream.advance()
                self.assignment()
            if stream.at(","):
                stream.advance()
                continue
            break
        self.end_statement()

    def balanced(self, open_text: str, close_text: str) -> Node:
        stream = self.stream
        first = stream.expect(open_text)
        depth = 1
        last = first
        while depth:
            last = stream.advance()
            if last.kind == "eof":
                raise DecodeError("unbalanced brackets")
            if last.text in ("{", "(", "["):
                depth += 1
            elif last.text in ("}", ")", "]"):
                depth -= 1
        return Node("statement_block", first.start, last.end)

    def sequence(self) -> Node:
        first = self.assignment()
        if not self.stream.at(","):
            return first
        pieces = [first]
        while self.stream.at(","):
            pieces.append(leaf(self.stream.advance()))
            pieces.append(self.assignment())
        return inner("sequence_expression", pieces)

    def assignment(self) -> Node:
        stream = self.stream
        arrow = self.arrow_function()
        if arrow is not None:
            return arrow
        if stream.at("yield", "await") and stream.peek().kind != "op":
            keyword = leaf(stream.advance())
            return inner("await_expression", [keyword, self.assignment()])
        left = self.conditional()
        token = stream.current
        if token.kind == "op" and token.text in _ASSIGNMENT_OPERATORS:
            if left.type not in ("identifier", "member_expression", "subscript_expression", "object", "array"):
                raise DecodeError("invalid assignment target")
            operator_node = leaf(stream.advance())
            right = self.assignment()
            node_type = "assignment_expression" if token.text == "=" else "augmented_assignment_expression"
            return inner(node_type, [left, operator_node, right])
        return left

    def arrow_function(self) -> Node | None:
        stream = self.stream
        start = stream.index
        is_async = stream.at("async") and stream.peek().text in ("(",) or (
            stream.at("async") and stream.peek().kind == "name" and stream.peek(2).text == "=>")
        offset = 1 if is_async else 0
        token = stream.peek(offset) if offset else stream.current
        if token.kind == "name" and token.text not in _RESERVED and stream.peek(offset + 1).text == "=>":
            for _ in range(offset + 2):
                stream.advance()
        elif token.text == "(":
            close = stream.closing(stream.index + offset)  # where the bracket count is back to zero
            if close is None:
                return None
            probe = close - stream.index
            after = stream.peek(probe + 1)
            if after.text != "=>" or after.newline_before:
                return None
            for _ in range(probe + 2):
                stream.advance()
        else:
            return None
        first = stream.tokens[start]
        if stream.at("{"):
            body = self.balanced("{", "}")
        else:
            body = self.assignment()
        return Node("arrow_function", first.start, body.end)

    def conditional(self) -> Node:
        condition = self.binary(1)
        stream = self.stream
        if stream.at("?"):
            if stream.current.after_missing_quote:
                # the ternary '?' is an external-scanner token, which tree-sitter's error-mode lexer does not produce
                raise DecodeError("a ternary '?' right after a string closed by a MISSING quote")
            stream.advance()
            self.assignment()
            stream.expect(":")
            alternative = self.assignment()
            return Node("ternary_expression", condition.start, alternative.end)
        return condition

    def binary(self, minimum: int) -> Node:
        left = self.unary()
        stream = self.stream
        while True:
            token = stream.current
            precedence = _BINARY_PRECEDENCE.get(token.text) if token.kind in ("op", "name") else None
            if precedence is None or precedence < minimum:
                return left
            stream.advance()
            right = self.binary(precedence if token.text == "**" else precedence + 1)
            left = Node("binary_expression", left.start, right.end)

    def unary(self) -> Node:
        stream = self.stream
        if stream.at("+", "-", "!", "~", "typeof", "void", "delete", "await"):
            token = stream.advance()
            operand = self.unary()
            return Node("unary_expression", token.start, operand.end)
        if stream.at("++", "--"):
            token = stream.advance()
            operand = self.unary()
            return Node("update_expression", token.start, operand.end)
        node = self.call_member()
        if stream.at("++", "--") and not stream.current.newline_before:
            token = stream.advance()
            node = Node("update_expression", node.start, token.end)
        return node

    def call_member(self) -> Node:
        stream = self.stream
        if stream.at("new"):
            new_token = stream.advance()
            if stream.at("."):
                stream.advance()
                target = stream.advance()
                node = Node("meta_property", new_token.start, target.end)
            else:
                constructor = self.member_only()
                end = constructor.end
                if stream.at("("):
                    end = self.arguments().end
                node = Node("new_expression", new_token.start, end)
        else:
            node = self.primary()
        while True:
            if stream.at("."):
                stream.advance()
                name = stream.advance()
                if name.kind != "name" and name.text != "#":
                    raise DecodeError("expected a property name after '.'")
                node = Node("member_expression", node.start, name.end, [node])
            elif stream.at("?."):
                stream.advance()
                if stream.at("("):
                    arguments = self.arguments()
                    chain = Node("optional_chain", arguments.start, arguments.start)
                    node = Node("call_expression", node.start, arguments.end, [node, chain, arguments])
                elif stream.at("["):
                    close = self.balanced("[", "]")
                    node = Node("subscript_expression", node.start, close.end, [node])
                else:
                    name = stream.advance()
                    if name.kind != "name":
                        raise DecodeError("expected a property name after '?.'")
                    node = Node("member_expression", node.start, name.end, [node])
            elif stream.at("["):
                stream.advance()
                self.sequence()
                close = stream.expect("]")
                node = Node("subscript_expression", node.start, close.end, [node])
            elif stream.at("("):
                arguments = self.arguments()
                node = Node("call_expression", node.start, arguments.end, [node, arguments])
            elif stream.current.kind == "template":
                template = stream.advance()
                node = Node("call_expression", node.start, template.end,
                            [node, Node("template_string", template.start, template.end)])
            else:
                return node

    def member_only(self) -> Node:
        stream = self.stream
        node = self.primary()
        while stream.at(".", "["):
            if stream.at("."):
                stream.advance()
                name = stream.advance()
                if name.kind != "name":
                    raise DecodeError("expected a property name after '.'")
                node = Node("member_expression", node.start, name.end)
            else:
                stream.advance()
                self.sequence()
                close = stream.expect("]")
                node = Node("subscript_expression", node.start, close.end)
        return node

    def arguments(self) -> Node:
        stream = self.stream
        open_token = stream.expect("(")
        children = [leaf(open_token)]
        for _ in stream.comma_separated(")", children):
            if stream.at(","):
                continue  # a hole: tree-sitter-javascript's argument list allows empty items, like an array
            if stream.at("..."):
                spread = stream.advance()
                value = self.assignment()
                children.append(Node("spread_element", spread.start, value.end))
            elif len(children) == 1 and stream.at("**", "*"):
                # ``f(**opts, a=1)``: tree-sitter inserts a MISSING left operand for a leading ``**``/``*`` in the
                # first argument (measured); later in the list the same text yields an ERROR node.
                operator_token = stream.advance()
                operand = self.binary(_BINARY_PRECEDENCE[operator_token.text])
                children.append(Node("binary_expression", operator_token.start, operand.end))
            else:
                children.append(self.assignment())
        close = stream.expect(")")
        children.append(leaf(close))
        return Node("arguments", open_token.start, close.end, children)

    def primary(self) -> Node:
        stream = self.stream
        token = stream.current
        if token.kind in ("number", "string", "template", "regex"):
            stream.advance()
            return leaf(token, {"number": "number", "string": "string", "template": "template_string",
                                "regex": "regex"}[token.kind])
        if token.kind == "name":
            if token.text in ("true", "false", "null", "this", "super"):
                stream.advance()
                return leaf(token, token.text)
            if token.text in ("function", "async") and (token.text == "function" or stream.peek().text == "function"):
                return self.function_expression()
            if token.text == "import" and stream.peek().text == "(":
                stream.advance()
                return leaf(token, "import")
            if token.text == "class":
                stream.advance()
                if stream.current.kind == "name" and stream.current.text not in _RESERVED:
                    stream.advance()
                if stream.at("extends"):
                    stream.advance()
                    self.call_member()
                body = self.balanced("{", "}")
                return Node("class", token.start, body.end)
            if token.text in _RESERVED:
                raise DecodeError(f"unexpected keyword {token.text!r}")
            stream.advance()
            return leaf(token, "identifier")
        if token.text == "(":
            stream.advance()
            expression = self.sequence()
            close = stream.expect(")")
            return Node("parenthesized_expression", token.start, close.end, [expression])
        if token.text == "[":
            return self.array()
        if token.text == "{":
            return self.object()
        if token.text == "<":
            return self.jsx()
        raise DecodeError(f"unexpected {token.text or 'end of input'!r}")

    def jsx(self) -> Node:
        """A JSX element (tree-sitter-javascript parses XML-like text as JSX): scanned on characters, then the
        token cursor skips past it."""
        start = self.stream.current.start
        end = _jsx_element_end(self.source, start)
        stream = self.stream
        # The text inside the element was tokenized as script; tokenize again from the element's end.
        stream.tokens = stream.tokens[:stream.index] + tokenize(self.source, end)
        return Node("jsx_element", start, end)

    def function_expression(self) -> Node:
        stream = self.stream
        first = stream.advance()
        if first.text == "async":
            stream.expect("function")
        if stream.at("*"):
            stream.advance()
        if stream.current.kind == "name" and not stream.at("("):
            stream.advance()
        self.balanced("(", ")")
        body = self.balanced("{", "}")
        return Node("function_expression", first.start, body.end)

    def array(self) -> Node:
        stream = self.stream
        open_token = stream.expect("[")
        for _ in stream.comma_separated("]"):
            if stream.at(","):
                continue  # a hole: the comma is consumed as the separator
            if stream.at("..."):
                stream.advance()
            self.assignment()
        close = stream.expect("]")
        return Node("array", open_token.start, close.end)

    def object(self) -> Node:
        stream = self.stream
        open_token = stream.expect("{")
        for _ in stream.comma_separated("}"):
            if stream.at("..."):
                stream.advance()
                self.assignment()
            else:
                key = stream.current
                if key.kind in ("name", "string", "number"):
                    stream.advance()
                elif key.text == "[":
                    stream.advance()
                    self.assignment()
                    stream.expect("]")
                else:
                    raise DecodeError("expected a property key")
                if stream.at(":"):
                    stream.advance()
                    self.assignment()
                elif stream.at("("):
                    self.balanced("(", ")")
                    self.balanced("{", "}")
                elif key.kind != "name" or key.text in _RESERVED:
                    raise DecodeError("expected ':' after a property key")
        close = stream.expect("}")
        return Node("object", open_token.start, close.end)


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


def _jsx_element_end(source: str, position: int) -> int:
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
                position = _jsx_element_end(source, position)
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
            position = _jsx_element_end(source, position)
        elif source[position] == "{":
            position = _jsx_braces_end(source, position)
        else:
            position += 1


def _strip_quotes(value: str) -> str:
    if (value.startswith('"') and value.endswith('"')) or (value.startswith("'") and value.endswith("'")):
        return value[1:-1]
    return value


def _bare_quote(text: str) -> bool:
    """A string token closed by a MISSING quote without any fragment or escape: its opening quote, maybe followed by
    the line break, blanks and comments tree-sitter skipped (a fragment can only follow the quote directly, or a
    comment)."""
    return len(text) == 1 or (text[1] in "\r\n" and not text.endswith(text[0])
                              and skip_blanks_and_comments(text, 1, _BLANKS, _LINE_BREAKS)[0] == len(text))


def _program(source: str) -> list[Node]:
    tokens = tokenize(source)
    for index, token in enumerate(tokens):
        if token.kind == "string" and _bare_quote(token.text):
            # Official-parser quirk: a bare opening quote closed by a MISSING quote (``'`` + line break, no fragment)
            # competes in tree-sitter's error recovery with dropping the quote into an ERROR node, which is cheaper
            # (error cost 601 against 610 for a MISSING token; comments after the quote are extras and cost
            # nothing); the ERROR wins wherever the text parses without the quote (``f('\\n)``, ``f(a='\\n + 1)``;
            # measured), and the decoder then fails.
            try:
                _Parser(source, tokens[:index] + tokens[index + 1:]).program()
            except DecodeError:
                continue
            raise DecodeError("a bare quote that tree-sitter drops into an ERROR node")
    return _Parser(source, tokens).program()


def parse_js_calls(source: str) -> list[dict] | None:
    """Decode the text between the outer brackets; ``None`` when no top-level statement is a call."""
    with tree_sitter_input(source):
        statements = _program(source)
    for statement in statements:
        if statement.type != "expression_statement":
            continue
        expression = statement.children[0]
        if expression.type != "call_expression":
            continue
        callee, argument_node = expression.children[0], expression.children[1]
        # a bare identifier or ``true`` (not ``false``) is the positional value upstream keeps; neither starts with a
        # quote, so stripping quotes leaves it as written
        arguments = call_arguments(argument_node.children, source, source, ("identifier", "true"),
                                   lambda node: _strip_quotes(node.text(source)))
        return [{callee.text(source): arguments}]
    return None
