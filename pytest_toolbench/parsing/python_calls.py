"""Python-call text (``[name(key=value, ...), ...]``) decoded into calls, never evaluated: the one decoder that BFCL
and ACEBench share, with each benchmark's quirks as explicit flags (:mod:`.dialect`; the presets are
``scorer_lib.python_dialects``), and (re-exported) the strict literal reader of the TL-Training protocol
(:mod:`.literal_calls`).

Upstream decoders (BFCL's ``default_decode_ast_prompting`` / ``resolve_ast_by_type`` in bfcl-eval 2026.3.23,
ACEBench's ``decode_ast`` and its agent roles' ``decode_function_list`` at chenchen0103/ACEBench @ 56dd66cf, both
descendants of the same Gorilla code) parse the text with ``ast`` and walk the tree: a call becomes
``{name: {keyword: value}}`` and each value node is resolved by one ``resolve_ast_by_type``. The copies have drifted
apart, so one :class:`PythonCallDecoder` reproduces all of them from a :class:`Dialect`:

* ``BFCL_PROMPTING``: ``default_decode_ast_prompting`` for python categories;
* ``ACEBENCH_NORMAL``: ACEBench Normal/Special ``decode_ast`` (the text is prepared by the caller: first bracket
  span or whitespace removed, see ``suites/acebench/scorer/decoding.py``);
* ``ACEBENCH_AGENT``: the ACEBench agent and execution roles' ``decode_function_list``.

What all dialects share (upstream's common ``resolve_ast_by_type``): positional arguments are dropped silently and
``**kwargs`` lands under the key ``None``; the call name is the ``Attribute`` chain down to a ``Name`` (any other
base is dropped, so ``f()()`` is named ``""``); ``...`` becomes the string ``"..."``; a bare name becomes its own
text; a subscript becomes the source text of its value and slice; lists, tuples and dicts are resolved element by
element; every unary operator (``+``, ``-``, ``~``, ``not``) *negates* its operand's constant (``+5`` → -5, ``not 1``
→ -1, see :meth:`PythonCallDecoder.value`); a binary operation is evaluated as a constant expression (upstream
``eval(ast.unparse(node))``, here bounded arithmetic on literals: :mod:`pytest_toolbench.parsing.arithmetic`).

Where the dialects differ, :class:`Dialect` has a flag; each one names the upstream behaviour it reproduces. The
messages differ too (they are the scorers' own words, shown in verdicts), so each dialect carries its
:class:`Messages`. A dialect raises its ``error`` class; scorers set their own with :func:`dataclasses.replace`.

The decoder keeps the old per-level code shapes (one frame per resolved node, comprehensions where the old code had
them), so deeply nested input reaches Python's recursion limit where it did before (see the flag
``arguments_in_comprehension``).
"""

from __future__ import annotations

import ast
import re
import sys
from typing import Any, Callable

from .arithmetic import ArithmeticRefused, apply_binary, apply_unary
from .dialect import Dialect, Messages, PythonCallError
from .literal_calls import parse_literal_calls

__all__ = ["Dialect", "Messages", "PythonCallDecoder", "PythonCallError", "call_name", "parse_literal_calls",
           "strip_and_wrap"]


# ----------------------------------------------------------------------------------------------------------------
# Text preparation


def strip_and_wrap(text: str) -> str:
    """BFCL's pre-processing (``default_decode_ast_prompting``): strip '`', newline and space at both ends, then add
    the missing brackets. BFCL applies it to every return format (python, Java, JavaScript)."""
    text = text.strip("`\n ")
    if not text.startswith("["):
        text = "[" + text
    if not text.endswith("]"):
        text = text + "]"
    return text


_PARSE_FAILURES = (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError)
_FORMAT_CONVERSIONS = {-1: lambda v: v, 115: str, 114: repr, 97: ascii}


def _stack_depth() -> int:
    """Python frames on the stack, the caller's included."""
    frame, depth = sys._getframe(1), 0
    while frame is not None:
        depth += 1
        frame = frame.f_back
    return depth


#: What a fresh thread's stack holds when its target starts (threading's bootstrap), in recursion-limit units;
#: calibrated with :func:`_on_fresh_stack` against ``bfcl evaluate``'s verdicts
#: (tests/test_bfcl_decoder_expressions.py).
_THREAD_BASE_FRAMES = 8


#: An upper bound on the frames ``ast.unparse`` spends per level of the tree (about 3 measured for operators and
#: subscripts), and a margin for C-level calls: below that, text renders on any stack and needs no fresh thread.
_UNPARSE_FRAMES_PER_LEVEL = 8
_STACK_MARGIN = 60


def _tree_depth(node: ast.AST) -> int:
    """The depth of an expression tree, without recursion."""
    deepest, pending = 0, [(node, 1)]
    while pending:
        current, depth = pending.pop()
        deepest = max(deepest, depth)
        pending.extend((child, depth + 1) for child in ast.iter_child_nodes(current))
    return deepest


def _on_fresh_stack(frames: int, function: Callable[..., Any], *arguments: Any) -> Any:
    """``function(*arguments)`` on a new thread, called ``frames`` frames deep (from the thread's target); what it
    raises is raised here. The thread's recursion depth starts at zero, so the result does not depend on the
    caller's stack."""
    import threading

    outcome: dict[str, Any] = {}

    def climb(remaining: int) -> Any:
        return function(*arguments) if remaining <= 0 else climb(remaining - 1)

    def target() -> None:
        try:
            outcome["value"] = climb(frames)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            outcome["error"] = exc

    thread = threading.Thread(target=target, name="toolbench-upstream-stack", daemon=True)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def call_name(func: ast.AST) -> str:
    """The called name: the ``Attribute`` chain down to a ``Name``; any other base (a call, a subscript) is dropped
    (upstream walks ``.attr`` / ``.id`` the same way)."""
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
    return ".".join(reversed(parts))


class PythonCallDecoder:
    """Decode Python-call text the way one upstream decoder does (its :class:`Dialect`)."""

    def __init__(self, dialect: Dialect):
        self.dialect = dialect
        self.error = dialect.error
        self.messages = dialect.messages
        # where the current decode started and how many dict displays enclose the current value (upstream resolves
        # a dict's items in a comprehension, one frame more than here): the upstream stack depth of a value
        self._entry_depth = 0
        self._dicts = 0

    def __repr__(self) -> str:
        return f"PythonCallDecoder({self.dialect.name})"

    def _fail(self, template: str, node: Any = None, exc: BaseException | None = None) -> Exception:
        kind = type(node)
        return self.error(template.format(type=kind.__name__, type_repr=kind, exc=exc))

    # -- the top level ------------------------------------------------------------------------------------------

    def decode(self, text: Any) -> list[dict[Any, Any]]:
        """The calls of ``text`` as ``[{name: {keyword: value}}]``; raises the dialect's ``error``."""
        dialect, messages = self.dialect, self.messages
        source = dialect.prepare(text) if dialect.prepare is not None else text
        if source is None:
            raise self.error(messages.no_text)
        try:
            tree = ast.parse(source, mode="eval")
        except _PARSE_FAILURES as exc:
            raise self.error(messages.parse_error.format(type=type(exc).__name__, exc=exc)) from None
        body = tree.body
        self._entry_depth, self._dicts = _stack_depth(), 0
        try:
            if dialect.bare_call and isinstance(body, ast.Call):
                return [self.call(body)]
            if not isinstance(body, dialect.containers):
                if dialect.other_expression_is_empty:
                    return []
                raise self._fail(messages.not_a_list, body)
            calls = []
            for element in body.elts:
                if not isinstance(element, ast.Call):
                    raise self._fail(messages.not_a_call, element)
                calls.append(self.call(element))
            return calls
        except RecursionError:
            raise self.error(messages.too_deep) from None

    def call(self, node: ast.Call) -> dict[Any, Any]:
        """``{name: {keyword: value}}``. Positional arguments are dropped (upstream reads only ``keywords``);
        ``**kwargs`` has the keyword ``None``."""
        if self.dialect.arguments_in_comprehension:
            return {call_name(node.func): {keyword.arg: self.value(keyword.value) for keyword in node.keywords}}
        arguments: dict[Any, Any] = {}
        for keyword in node.keywords:
            arguments[keyword.arg] = self.value(keyword.value)
        return {call_name(node.func): arguments}

    # -- values (upstream ``resolve_ast_by_type``) --------------------------------------------------------------

    def value(self, node: ast.AST) -> Any:
        dialect, messages = self.dialect, self.messages
        if isinstance(node, ast.Constant):
            return "..." if node.value is Ellipsis else node.value
        if isinstance(node, ast.UnaryOp):
            # Quirk (all upstreams): ``-operand.value`` whatever the operator: ``+5``, ``~5`` and ``not 5`` all give
            # -5, ``not True`` gives -1. An operand that is not a constant fails, as does a constant that cannot be
            # negated (a string, None).
            operand = node.operand
            if not isinstance(operand, ast.Constant):
                raise self._fail(messages.unary_non_constant, operand)
            value = operand.value
            if isinstance(value, (bool, int, float, complex)):
                return -value
            raise self._fail(messages.unary_bad_operand, value)
        if isinstance(node, ast.List):
            return [self.value(item) for item in node.elts]
        if isinstance(node, ast.Dict):
            result: dict[Any, Any] = {}
            self._dicts += 1
            try:
                for key_node, value_node in zip(node.keys, node.values):
                    if key_node is None:  # ``{**other}``: upstream fails on the missing key node
                        raise self.error(messages.dict_unpacking)
                    key = self.value(key_node)
                    if dialect.hash_key_before_value:
                        try:
                            hash(key)
                        except TypeError:
                            raise self.error(messages.unhashable_key) from None
                        result[key] = self.value(value_node)
                    else:
                        value = self.value(value_node)
                        try:
                            result[key] = value
                        except TypeError:
                            raise self.error(messages.unhashable_key) from None
            finally:
                self._dicts -= 1
            return result
        if isinstance(node, ast.BinOp):
            # Upstream: ``eval(ast.unparse(node))``; here only constant arithmetic is computed, never evaluated. The
            # text is rendered first, as upstream does: too deep to render is upstream's RecursionError.
            if dialect.upstream_frames is not None:
                self.render(node)
            if not dialect.wrap_arithmetic_failures:
                return self.constant(node)
            try:
                return self.constant(node)
            except self.error:
                raise
            except Exception as exc:  # ZeroDivisionError, TypeError, OverflowError, RecursionError, ...
                raise self._fail(messages.arithmetic_failed, exc) from None
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Call):
            if not node.keywords:
                if dialect.call_without_keywords == "empty_call":
                    return {call_name(node.func): {}}
                return self.render(node) if dialect.wrap_render_errors else ast.unparse(node)
            return self.call(node)
        if isinstance(node, ast.Tuple):
            return tuple(self.value(item) for item in node.elts)
        if isinstance(node, ast.Subscript):
            # Upstream's first attempt (``node.body``) always fails, so its fallback text is what is kept.
            if dialect.wrap_render_errors:
                return self.render(node.value) + "[" + self.render(node.slice) + "]"
            return ast.unparse(node.value) + "[" + ast.unparse(node.slice) + "]"
        # Lambdas fail upstream too (its lambda branch reads ``body[0]`` of an expression); the rest is
        # "Unsupported AST type".
        raise self._fail(messages.unsupported, node)

    def render(self, node: ast.AST) -> str:
        """Source text of a node; text too deep to render is the dialect's error (``wrap_render_errors``)."""
        try:
            if self.dialect.upstream_frames is None:
                return ast.unparse(node)
            return self._unparse_with_upstream_frames(node)
        except (RecursionError, ValueError) as exc:
            raise self.error(self.messages.render_failed.format(exc=exc)) from None

    def _unparse_with_upstream_frames(self, node: ast.AST) -> str:
        """``ast.unparse`` with as much stack left as upstream has at this value (:attr:`Dialect.upstream_frames`).

        The value's depth below the decode entry counts the same here as upstream (a list, tuple or nested call is
        two frames on both sides; a dict is two upstream, one here, hence ``_dicts``). This process's own stack
        (pytest, pluggy, C-level calls) must not count, so the text is rendered on a fresh thread whose stack is
        built up to upstream's depth first."""
        here = _stack_depth()
        below_entry = here - 1 - self._entry_depth + self._dicts  # render's caller, value, is the base
        needed = _UNPARSE_FRAMES_PER_LEVEL * _tree_depth(node) + _STACK_MARGIN
        if self.dialect.upstream_frames + below_entry + needed < 1000 and here + needed < sys.getrecursionlimit():
            return ast.unparse(node)  # shallow text renders on both stacks: no thread needed
        frames = self.dialect.upstream_frames + below_entry - _THREAD_BASE_FRAMES + sys.getrecursionlimit() - 1000
        return _on_fresh_stack(frames, ast.unparse, node)

    # -- constant expressions (upstream ``eval``) ---------------------------------------------------------------

    def constant(self, node: ast.AST) -> Any:
        """A constant expression's value as Python's ``eval`` computes it, without ``eval``: literals, containers
        and operators (inside an expression the real semantics apply: ``+5`` is 5 there); names, calls and other
        syntax fail, as the official ``eval`` raises on them (NameError) or yields objects that fail later. Too-large
        results are refused (:mod:`pytest_toolbench.parsing.arithmetic`, a documented deviation)."""
        messages = self.messages
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.BinOp):
            left = self.constant(node.left)
            right = self.constant(node.right)
            try:
                return apply_binary(node.op, left, right)
            except ArithmeticRefused as exc:
                raise self.error(str(exc)) from None
        if isinstance(node, ast.UnaryOp):
            operand = self.constant(node.operand)
            try:
                return apply_unary(node.op, operand)
            except ArithmeticRefused as exc:
                raise self.error(str(exc)) from None
        if isinstance(node, ast.List):
            return [self.constant(item) for item in node.elts]
        if isinstance(node, ast.Tuple):
            return tuple(self.constant(item) for item in node.elts)
        if isinstance(node, ast.Dict):
            if any(key is None for key in node.keys):
                raise self.error(messages.expression_dict_unpacking)
            if messages.expression_unhashable_key is None:
                return {self.constant(k): self.constant(v) for k, v in zip(node.keys, node.values)}
            try:
                return {self.constant(k): self.constant(v) for k, v in zip(node.keys, node.values)}
            except TypeError:
                raise self.error(messages.expression_unhashable_key) from None
        if isinstance(node, ast.Set) and self.dialect.sets_in_expressions:
            return set(self.constant(item) for item in node.elts)
        if isinstance(node, ast.JoinedStr) and self.dialect.fstrings:
            return "".join(self._format_piece(piece) for piece in node.values)
        raise self._fail(messages.expression_unsupported, node)

    def _format_piece(self, piece: ast.AST) -> str:
        """One part of an f-string inside a constant expression (``f'{1}' + 'a'`` evaluates upstream)."""
        if isinstance(piece, ast.Constant):
            return str(piece.value)
        if not isinstance(piece, ast.FormattedValue):
            raise self.error("unsupported f-string part")
        value = self.constant(piece.value)
        try:
            value = _FORMAT_CONVERSIONS[piece.conversion](value)
            spec = self.constant(piece.format_spec) if piece.format_spec is not None else ""
            if any(len(run) > 6 for run in re.findall(r"\d+", spec)):
                raise self.error("f-string format width too large to evaluate safely")
            return format(value, spec)
        except self.error:
            raise
        except (TypeError, ValueError, KeyError, OverflowError) as exc:
            raise self.error(f"f-string formatting failed: {exc}") from None
