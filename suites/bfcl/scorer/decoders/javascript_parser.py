"""The JavaScript decoder's grammar: statements and expressions over the lexer's tokens (``javascript_lexer.py``)
into the syntax nodes upstream's ``js_parser.py`` reads from tree-sitter-javascript's tree; expression statements
are parsed, declarations and blocks checked for balanced brackets only, anything else refused (the deviation
``javascript.py`` documents)."""

from __future__ import annotations

from .common import DecodeError, Node, Token, TokenStream, inner, leaf
from .javascript_lexer import jsx_element_end, tokenize

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


class Parser:
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
        end = jsx_element_end(self.source, start)
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
