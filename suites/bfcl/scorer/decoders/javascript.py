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

String literals follow tree-sitter's token-level reading, error recovery included (see
:func:`.javascript_lexer._scan_string`): a raw line break inside quotes is skipped like a blank, so ``'a\\n'`` decodes
to ``a`` plus the line break, and ``'a\\n, b=1`` is closed by a MISSING quote (the value keeps its opening quote:
``'a``).

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

from .common import DecodeError, Node, call_arguments, tree_sitter_input
from .javascript_lexer import bare_quote, tokenize
from .javascript_parser import Parser


def _strip_quotes(value: str) -> str:
    if (value.startswith('"') and value.endswith('"')) or (value.startswith("'") and value.endswith("'")):
        return value[1:-1]
    return value


def _program(source: str) -> list[Node]:
    tokens = tokenize(source)
    for index, token in enumerate(tokens):
        if token.kind == "string" and bare_quote(token.text):
            # Official-parser quirk: a bare opening quote closed by a MISSING quote (``'`` + line break, no fragment)
            # competes in tree-sitter's error recovery with dropping the quote into an ERROR node, which is cheaper
            # (error cost 601 against 610 for a MISSING token; comments after the quote are extras and cost
            # nothing); the ERROR wins wherever the text parses without the quote (``f('\\n)``, ``f(a='\\n + 1)``;
            # measured), and the decoder then fails.
            try:
                Parser(source, tokens[:index] + tokens[index + 1:]).program()
            except DecodeError:
                continue
            raise DecodeError("a bare quote that tree-sitter drops into an ERROR node")
    return Parser(source, tokens).program()


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
