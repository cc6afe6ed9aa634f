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

String literals are read as tree-sitter-java lexes them (see :func:`_scan_string_literal`): a ``"..."`` literal may
span raw line breaks, a ``'...'`` character literal may not. Texts are cut with upstream's byte-offset slicing (see
:class:`_ByteOffsetSlices`). Deviation: string templates (``"\\{expr}"``) are not parsed, ``\\{`` reads as an escape
(a template whose expression does not parse is an ERROR upstream and decodes here).

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

from functools import partial

from .common import (
    DecodeError, Node, Token, TokenStream, call_arguments, comments_between, inner, leaf, longest_first, scan_escape,
    scan_name_or_number, scan_number, scan_operator, skip_blanks_and_comments, tree_sitter_input,
)

_OPERATORS = longest_first(
    """>>>= <<= >>= >>> ... -> :: ++ -- && || == != <= >= += -= *= /= %= &= |= ^= << >>
    + - * / % = < > ! ~ ? : ; , . ( ) [ ] { } @ &  | ^""")
_PRIMITIVES = {"byte", "short", "int", "long", "char", "float", "double", "boolean", "void"}
_LITERAL_WORDS = {"true": "true", "false": "false", "null": "null_literal"}
_RESERVED = _PRIMITIVES | set(_LITERAL_WORDS) | {"new", "this", "super", "instanceof", "class"}
_ASSIGNMENT_OPERATORS = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", ">>>="}
_BINARY_PRECEDENCE = {
    "||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6,
    "<": 7, ">": 7, "<=": 7, ">=": 7, "instanceof": 7,
    "<<": 8, ">>": 8, ">>>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10,
}
_VERBATIM_TYPES = {"identifier", "class_literal", "type_identifier", "method_invocation"}
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


class _Parser:
    def __init__(self, source: str):
        self.source = source
        self.stream = TokenStream(tokenize(source))

    # ---- statements -------------------------------------------------------------------------------------------
    def program(self) -> list[Node]:
        stream = self.stream
        self.missing_tokens = 0
        statements = self.statements(top_level=True)
        if self.missing_tokens and len(statements) <= 1:
            # tree-sitter recovers with MISSING tokens (no ERROR node) unless the program is one short one-line
            # statement: its cost model then prefers an ERROR node (measured on tree-sitter-java 0.21). The program's
            # statement alone counts, from its first token to its last: comments around it are extras (``/*c*/f(a=1)``
            # is an ERROR too), while an empty statement ``;`` is a statement of its own (``;f(a=1)`` recovers).
            tokens = [token for token in stream.tokens if token.kind != "eof"]
            alone = bool(statements) and tokens[0].start == statements[0].start and \
                tokens[-1].end == statements[0].end
            span = self.source[tokens[0].start:tokens[-1].end] if alone else ""
            if alone and len(span.encode("utf-8")) <= 10 and "\n" not in span:
                raise DecodeError("short program needing error recovery (tree-sitter reports an ERROR node)")
        del stream
        return statements

    def statements(self, top_level: bool) -> list[Node]:
        statements: list[Node] = []
        stream = self.stream
        while stream.current.kind != "eof" and (top_level or not stream.at("}")):
            if stream.at(";"):
                stream.advance()
                continue
            if stream.at("{"):
                open_node = leaf(stream.advance())
                inside = self.statements(top_level=False)
                close_node = leaf(stream.expect("}"))
                statements.append(inner("block", [open_node, *inside, close_node]))
                continue
            if stream.at("return"):
                keyword = leaf(stream.advance())
                parts = [keyword] if stream.at(";") else [keyword, self.expression()]
                expression = inner("return_statement", parts)
            elif self._declaration_ahead():
                expression = self.local_variable_declaration()
            elif stream.at("["):
                # ``[call(...)]``: tree-sitter inserts a MISSING identifier and reads an array access.
                self.missing_tokens += 1
                open_node = leaf(stream.advance())
                index = self.expression()
                close_node = leaf(stream.expect("]"))
                expression = inner("array_access", [open_node, index, close_node])
            else:
                expression = self.expression()
            if stream.at(";"):
                stream.advance()
                statements.append(expression)
                continue
            if stream.current.kind == "eof" or (not top_level and stream.at("}")):
                self.missing_tokens += 1  # MISSING ';'
                statements.append(expression)
                continue
            raise DecodeError(f"unexpected {stream.current.text!r} after a statement")
        return statements

    def _declaration_ahead(self) -> bool:
        stream = self.stream
        token = stream.current
        if token.kind != "name" or (token.text in _RESERVED and token.text not in _PRIMITIVES):
            return False
        saved = stream.index
        saved_tokens = list(stream.tokens)
        try:
            self.type_node()
            return stream.current.kind == "name" and stream.current.text not in _RESERVED and \
                stream.peek().text in ("=", ";", ",")
        except DecodeError:
            return False
        finally:
            stream.index = saved
            stream.tokens = saved_tokens

    def local_variable_declaration(self) -> Node:
        stream = self.stream
        parts = [self.type_node()]
        while True:
            name = leaf(stream.advance(), "identifier")
            declarator = [name]
            if stream.at("="):
                declarator.append(leaf(stream.advance()))
                declarator.append(self.array_initializer() if stream.at("{") else self.expression())
            parts.append(inner("variable_declarator", declarator))
            if not stream.at(","):
                return inner("local_variable_declaration", parts)
            parts.append(leaf(stream.advance()))
            if stream.current.kind != "name" or stream.current.text in _RESERVED:
                raise DecodeError("expected a variable name")

    # ---- expressions ------------------------------------------------------------------------------------------
    def expression(self) -> Node:
        stream = self.stream
        if self._lambda_ahead():
            return self.lambda_expression()
        left = self.ternary()
        if stream.current.kind == "op" and stream.current.text in _ASSIGNMENT_OPERATORS:
            if left.type not in ("identifier", "field_access", "array_access"):
                raise DecodeError("invalid assignment target")
            operator_node = leaf(stream.advance())
            right = self.expression()
            return inner("assignment_expression", [left, operator_node, right], left=left, right=right)
        return left

    def _lambda_ahead(self) -> bool:
        stream = self.stream
        if stream.current.kind == "name" and stream.peek().text == "->":
            return True
        if not stream.at("("):
            return False
        close = stream.closing(stream.index, "(", ")")  # where the parentheses count is back to zero
        return close is not None and stream.peek(close - stream.index + 1).text == "->"

    def lambda_expression(self) -> Node:
        stream = self.stream
        start_token = stream.current
        parts: list[Node] = []
        if stream.current.kind == "name":
            parts.append(leaf(stream.advance(), "identifier"))
        else:
            open_token = stream.advance()
            pieces = [leaf(open_token)]
            while not stream.at(")"):
                token = stream.advance()
                if token.kind == "eof":
                    raise DecodeError("unterminated lambda parameters")
                pieces.append(leaf(token, "identifier" if token.kind == "name" else None))
            pieces.append(leaf(stream.advance()))
            parts.append(inner("formal_parameters", pieces))
        parts.append(leaf(stream.expect("->")))
        if stream.at("{"):
            parts.append(self.balanced_block("block"))
        else:
            parts.append(self.expression())
        del start_token
        return inner("lambda_expression", parts)

    def balanced_block(self, node_type: str) -> Node:
        # The inside of a block is kept as tokens, unvalidated (deviation, see module docstring).
        stream = self.stream
        pieces = [leaf(stream.expect("{"))]
        depth = 1
        while depth:
            token = stream.advance()
            if token.kind == "eof":
                raise DecodeError("unbalanced braces")
            if token.text == "{":
                depth += 1
            elif token.text == "}":
                depth -= 1
            node_type_of_token = {"string": "string_literal", "char": "character_literal"}.get(token.kind)
            pieces.append(leaf(token, node_type_of_token))
        return inner(node_type, pieces)

    def ternary(self) -> Node:
        condition = self.binary(1)
        stream = self.stream
        if stream.at("?"):
            question = leaf(stream.advance())
            consequence = self.expression()
            colon = leaf(stream.expect(":"))
            alternative = self.expression() if not self._lambda_ahead() else self.lambda_expression()
            return inner("ternary_expression", [condition, question, consequence, colon, alternative])
        return condition

    def binary(self, minimum: int) -> Node:
        left = self.unary()
        stream = self.stream
        while True:
            token = stream.current
            precedence = _BINARY_PRECEDENCE.get(token.text) if token.kind in ("op", "name") else None
            if precedence is None or precedence < minimum:
                return left
            operator_node = leaf(stream.advance())
            if token.text == "instanceof":
                right = self.type_node()
                left = inner("instanceof_expression", [left, operator_node, right])
                continue
            right = self.binary(precedence + 1)
            left = inner("binary_expression", [left, operator_node, right])

    def unary(self) -> Node:
        stream = self.stream
        if stream.at("+", "-", "!", "~"):
            operator_node = leaf(stream.advance())
            operand = self.unary()
            return inner("unary_expression", [operator_node, operand])
        if stream.at("++", "--"):
            operator_node = leaf(stream.advance())
            operand = self.unary()
            return inner("update_expression", [operator_node, operand])
        if stream.at("(") and self._cast_ahead():
            open_node = leaf(stream.advance())
            type_node = self.type_node()
            close_node = leaf(stream.expect(")"))
            operand = self.unary()
            return inner("cast_expression", [open_node, type_node, close_node, operand])
        node = self.postfix()
        return node

    def _cast_ahead(self) -> bool:
        stream = self.stream
        first = stream.peek(1)
        if first.kind == "name" and first.text in _PRIMITIVES:
            offset = 2
            while stream.peek(offset).text == "[" and stream.peek(offset + 1).text == "]":
                offset += 2
            return stream.peek(offset).text == ")"
        if first.kind != "name" or first.text in _RESERVED:
            return False
        offset = 2
        while stream.peek(offset).text == "." and stream.peek(offset + 1).kind == "name":
            offset += 2
        while stream.peek(offset).text == "[" and stream.peek(offset + 1).text == "]":
            offset += 2
        if stream.peek(offset).text != ")":
            return False
        following = stream.peek(offset + 1)
        if following.kind in ("number", "string", "char"):
            return True
        if following.kind == "name":
            return following.text not in ("instanceof",)
        return following.text in ("(", "!", "~")

    def postfix(self) -> Node:
        node = self.primary()
        stream = self.stream
        while True:
            if stream.at("."):
                dot = leaf(stream.advance())
                token = stream.current
                if token.kind != "name":
                    raise DecodeError("expected a member name after '.'")
                if token.text == "class":
                    keyword = leaf(stream.advance())
                    node = inner("class_literal", [node, dot, keyword])
                    continue
                if token.text in _RESERVED and token.text != "this":
                    raise DecodeError(f"unexpected keyword {token.text!r} after '.'")
                name = leaf(stream.advance(), "identifier")
                if stream.at("("):
                    arguments = self.argument_list()
                    node = inner("method_invocation", [node, dot, name, arguments],
                                 object=node, name=name, arguments=arguments)
                else:
                    node = inner("field_access", [node, dot, name])
            elif stream.at("["):
                open_node = leaf(stream.advance())
                index = self.expression()
                close_node = leaf(stream.expect("]"))
                node = inner("array_access", [node, open_node, index, close_node])
            elif stream.at("::"):
                colons = leaf(stream.advance())
                token = stream.current
                if token.kind != "name":
                    raise DecodeError("expected a method name after '::'")
                name = leaf(stream.advance(), "identifier")
                node = inner("method_reference", [node, colons, name])
            elif stream.at("++", "--"):
                node = inner("update_expression", [node, leaf(stream.advance())])
            else:
                return node

    def primary(self) -> Node:
        stream = self.stream
        token = stream.current
        if token.kind == "number":
            stream.advance()
            kind = "decimal_floating_point_literal" if any(c in token.text for c in ".eEfFdD") and not \
                token.text.lower().startswith("0x") else "decimal_integer_literal"
            return leaf(token, kind)
        if token.kind == "string":
            stream.advance()
            return leaf(token, "string_literal")
        if token.kind == "char":
            stream.advance()
            return leaf(token, "character_literal")
        if token.kind == "name":
            if token.text in _LITERAL_WORDS:
                stream.advance()
                return leaf(token, _LITERAL_WORDS[token.text])
            if token.text == "new":
                return self.creation()
            if token.text in ("this", "super"):
                stream.advance()
                node = leaf(token, token.text)
                if stream.at("("):
                    arguments = self.argument_list()
                    return inner("explicit_constructor_invocation", [node, arguments])
                return node
            if token.text in _PRIMITIVES:
                type_node = self.type_node()
                if stream.at(".") and stream.peek().text == "class":
                    dot = leaf(stream.advance())
                    keyword = leaf(stream.advance())
                    return inner("class_literal", [type_node, dot, keyword])
                raise DecodeError(f"unexpected type {token.text!r} in an expression")
            if token.text in _RESERVED:
                raise DecodeError(f"unexpected keyword {token.text!r}")
            name = leaf(stream.advance(), "identifier")
            if stream.at("("):
                arguments = self.argument_list()
                return inner("method_invocation", [name, arguments], name=name, arguments=arguments)
            return name
        if token.text == "(":
            open_node = leaf(stream.advance())
            expression = self.expression()
            close_node = leaf(stream.expect(")"))
            return inner("parenthesized_expression", [open_node, expression, close_node])
        raise DecodeError(f"unexpected {token.text or 'end of input'!r}")

    def argument_list(self) -> Node:
        stream = self.stream
        pieces = [leaf(stream.expect("("))]
        for _ in stream.comma_separated(")", pieces, trailing_comma=False):
            pieces.append(self.expression())
        pieces.append(leaf(stream.expect(")")))
        return inner("argument_list", pieces)

    def type_node(self) -> Node:
        stream = self.stream
        token = stream.current
        if token.kind != "name" or token.text in _RESERVED - _PRIMITIVES:
            raise DecodeError("expected a type")
        stream.advance()
        if token.text in _PRIMITIVES:
            node = Node("integral_type", token.start, token.end, [leaf(token)])
        else:
            node = leaf(token, "type_identifier")
            while stream.at(".") and stream.peek().kind == "name":
                dot = leaf(stream.advance())
                name = leaf(stream.advance(), "type_identifier")
                node = inner("scoped_type_identifier", [node, dot, name])
            if stream.at("<"):
                node = inner("generic_type", [node, self.type_arguments()])
        while stream.at("[") and stream.peek().text == "]":
            open_node = leaf(stream.advance())
            close_node = leaf(stream.advance())
            node = inner("array_type", [node, inner("dimensions", [open_node, close_node])])
        return node

    def type_arguments(self) -> Node:
        stream = self.stream
        pieces = [leaf(stream.expect("<"))]
        while True:
            if self._close_angle(pieces):
                return inner("type_arguments", pieces)
            if stream.at("?"):
                wildcard = [leaf(stream.advance())]
                if stream.at("extends", "super"):
                    wildcard.append(leaf(stream.advance()))
                    wildcard.append(self.type_node())
                pieces.append(inner("wildcard", wildcard))
            else:
                pieces.append(self.type_node())
            if stream.at(","):
                pieces.append(leaf(stream.advance()))
                continue
            if not self._close_angle(pieces):
                raise DecodeError("expected '>' closing type arguments")
            return inner("type_arguments", pieces)

    def _close_angle(self, pieces: list[Node]) -> bool:
        # '>>' and '>>>' close several type-argument lists at once: split the token.
        stream = self.stream
        token = stream.current
        if token.kind != "op" or not token.text.startswith(">") or set(token.text) - {">", "="}:
            return False
        if "=" in token.text:
            return False
        pieces.append(Node(">", token.start, token.start + 1))
        if len(token.text) == 1:
            stream.advance()
        else:
            stream.tokens[stream.index] = Token("op", token.text[1:], token.start + 1, token.end)
        return True

    def creation(self) -> Node:
        stream = self.stream
        new_node = leaf(stream.advance())
        type_node = self.type_node() if not stream.at("<") else None
        if type_node is None:
            raise DecodeError("unsupported generic constructor call")
        if type_node.type == "array_type" or stream.at("["):
            # ``new T[]{...}`` or ``new T[n]``; T[] already consumed its empty dimensions.
            element_type = type_node
            pieces = [new_node, type_node]
            while element_type.type == "array_type":
                element_type = element_type.children[0]
            while stream.at("["):
                open_node = leaf(stream.advance())
                if stream.at("]"):
                    pieces.append(inner("dimensions", [open_node, leaf(stream.advance())]))
                else:
                    size = self.expression()
                    pieces.append(inner("dimensions_expr", [open_node, size, leaf(stream.expect("]"))]))
            value = self.array_initializer() if stream.at("{") else None
            if value is not None:
                pieces.append(value)
            fields = {"type": element_type}
            if value is not None:
                fields["value"] = value
            return inner("array_creation_expression", pieces, **fields)
        if not stream.at("("):
            raise DecodeError("expected constructor arguments")
        arguments = self.argument_list()
        pieces = [new_node, type_node, arguments]
        if stream.at("{"):
            pieces.append(self.balanced_block("class_body"))
        return inner("object_creation_expression", pieces, type=type_node, arguments=arguments)

    def array_initializer(self) -> Node:
        stream = self.stream
        pieces = [leaf(stream.expect("{"))]
        for _ in stream.comma_separated("}", pieces):
            pieces.append(self.array_initializer() if stream.at("{") else self.expression())
        pieces.append(leaf(stream.expect("}")))
        return inner("array_initializer", pieces)


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
        statements = _Parser(source).program()
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
