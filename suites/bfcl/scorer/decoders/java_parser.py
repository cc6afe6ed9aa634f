"""The Java decoder's grammar: statements and expressions over the lexer's tokens (``java_lexer.py``) into the
syntax nodes upstream's ``java_parser.py`` reads from tree-sitter-java's tree, with the two recoveries ``java.py``
documents (a MISSING ``;``, a MISSING identifier before ``[``); anything else is refused."""

from __future__ import annotations

from .common import DecodeError, Node, Token, TokenStream, inner, leaf
from .java_lexer import tokenize

_PRIMITIVES = {"byte", "short", "int", "long", "char", "float", "double", "boolean", "void"}
_LITERAL_WORDS = {"true": "true", "false": "false", "null": "null_literal"}
_RESERVED = _PRIMITIVES | set(_LITERAL_WORDS) | {"new", "this", "super", "instanceof", "class"}
_ASSIGNMENT_OPERATORS = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", ">>>="}
_BINARY_PRECEDENCE = {
    "||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6,
    "<": 7, ">": 7, "<=": 7, ">=": 7, "instanceof": 7,
    "<<": 8, ">>": 8, ">>>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10,
}


class Parser:
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
