"""BFCL multi-turn execution without ``eval``: step decoders and a safe executor with upstream's observable behaviour.

Upstream (bfcl-eval 2026.3.23 = gorilla 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8, ``bfcl_eval/``) turns each model step
into call strings (``model_handler/utils.py``: ``default_decode_execute_prompting`` with
``decoded_output_to_execution_list`` / ``parse_nested_value`` for prompting models, ``convert_to_function_call`` for FC
models) and runs every string with ``eval`` after a regex rewrite (``eval_checker/multi_turn_eval/multi_turn_utils.py``:
``execute_multi_turn_func_call``, ``_process_method_calls``). Here the same strings are produced, the same rewrite and
refusal check are applied, and the rewritten text is parsed with :mod:`ast` and walked: only the simulator instances'
public methods can be called, only literals, displays, bounded constant arithmetic, subscripts and nested calls are
evaluated. The result strings are upstream's:

- **Rewrite** (quirk): ``\\b([a-zA-Z_]\\w*)\\s*(?=\\()`` puts ``<instance>.`` before every known method name followed by
  ``(``, *inside string literals too*: ``echo(content='go cd(x)')`` writes ``go <instance>.cd(x)``. Instance names are
  upstream's ``<model>_<entry id>_<Class>_instance`` (``-./:`` -> ``_``), so the model name shows in such text; the
  scorer uses the fixed model name :data:`MODEL_NAME` (a replay does not know the model's registry name).
- **Refused names**: the text before the first ``(``; if it has a ``.``, the part between the first and the second
  ``.`` (``split(".")[1]``); ``kill exit quit remove unlink popen Popen run`` -> ``Function call <name> is not allowed.``
- **Results**: a ``str`` as is; a ``dict`` as ``json.dumps`` (``str()`` if that fails); anything else ``str()``; an
  exception ``Error during execution: <str(e)>`` (so a SyntaxError reads ``invalid syntax (<string>, line 1)``, a
  missing argument ``GorillaFileSystem.cd() missing 1 required positional argument: 'folder'``).

- **Compilation**: the parsed text is compiled (``compile(tree, "<string>", "eval")``, which runs nothing) before it
  is walked, so whatever Python's compiler refuses and ``ast.parse`` accepts is refused with ``eval``'s message: an
  FC call whose arguments hold ``"path"`` and ``"path "`` becomes ``f(path='.',path ='.')``, which ``eval`` refuses
  with ``keyword argument repeated: path (<string>, line 1)`` and runs nothing; so does this executor.
- **Expressions** ``eval`` would evaluate and that run nothing but the tools: ``and`` / ``or`` (short-circuit: an FC
  call named ``"mkdir(dir_name='x') or diff"`` runs ``mkdir`` and then ``diff``, as upstream), comparisons,
  ``not``, conditional expressions; keyword merging with Python's own errors (``got multiple values for keyword
  argument``, ``argument after ** must be a mapping``, ``keywords must be strings``, ``argument after * must be
  an iterable``).

**Deviations** (each makes a call fail that ``eval`` would run; none occurs in the ground truth): a bare name that is
not an instance method is ``name '<x>' is not defined`` even where it is a Python builtin or one of the module's
imports (upstream runs ``round(number=2.5)``, ``dict(a=1)``, even ``__import__``); attribute access is allowed only to
an instance's public attributes (upstream would walk ``().__class__.__mro__``); comprehensions, lambdas, f-strings
and the walrus operator are not evaluated; constant arithmetic is bounded (:mod:`pytest_toolbench.parsing.arithmetic`).
Such a call's result is ``Error during execution: <why>``.
"""

from __future__ import annotations

import ast
import inspect
import json
import operator
import re
from typing import Any, Mapping

from pytest_toolbench.parsing.arithmetic import ArithmeticRefused, apply_binary, apply_unary
from ..decoders.common import DecodeError
from ..decoding import decode

#: The model name in instance names (see the module docstring).
MODEL_NAME = "toolbench"
REFUSED_NAMES = frozenset({"kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run"})
_METHOD_CALL = re.compile(r"\b([a-zA-Z_]\w*)\s*(?=\()")
#: Longest sequence a subscript, display or argument may produce from model text.
MAX_ITEMS = 1_000_000


class StepDecodeError(ValueError):
    """A model step does not decode to calls (upstream: ``decode_execute`` raises; the turn ends there)."""


# -- step decoders ----------------------------------------------------------------------------------------------------

def decode_prompting_step(step: Any) -> list[str]:
    """``default_decode_execute_prompting``: decode the text like the single-turn decoder, render each call back."""
    if not isinstance(step, str):
        raise StepDecodeError(f"a prompting step is text, not {type(step).__name__}")
    try:
        decoded = decode(step, "python")
        return [f"{name}({', '.join(f'{k}={_nested_value(v)}' for k, v in arguments.items())})"
                for call in decoded for name, arguments in call.items()]
    except DecodeError as error:
        raise StepDecodeError(str(error)) from None
    except (ValueError, IndexError, AttributeError, TypeError, RecursionError) as error:
        raise StepDecodeError(f"{type(error).__name__}: {error}") from None


def _nested_value(value: Any) -> str:
    """``parse_nested_value``. Quirks: a dict whose values are all dicts (``{}`` included) is a nested call named by
    its first key (an empty dict raises); other dict keys are written raw inside quotes; ``repr`` raises on an int of
    more than 4,300 digits."""
    if isinstance(value, dict):
        if all(isinstance(v, dict) for v in value.values()):
            name = list(value.keys())[0]
            return f"{name}({', '.join(f'{k}={_nested_value(v)}' for k, v in value[name].items())})"
        return "{" + ", ".join(f"'{k}': {_nested_value(v)}" for k, v in value.items()) + "}"
    return repr(value)


def decode_fc_step(step: Any) -> list[str]:
    """``convert_to_function_call``: ``[{name: "<arguments JSON>"}]`` (or one such dict) -> ``name(k=repr(v),...)``.
    Text (an FC model that answered without calls) does not decode; ``[]`` decodes to no call."""
    if type(step) is dict:
        step = [step]
    if not isinstance(step, list):
        raise StepDecodeError(f"an FC step is a list of calls, not {type(step).__name__}")
    calls = []
    try:
        for call in step:
            for name, arguments in call.items():
                if type(arguments) is str:
                    arguments = json.loads(arguments)
                calls.append(f"{name}({','.join(f'{k}={v!r}' for k, v in arguments.items())})")
    except (ValueError, AttributeError, TypeError, RecursionError) as error:
        raise StepDecodeError(f"{type(error).__name__}: {error}") from None
    return calls


def is_empty_step(calls: list) -> bool:
    """``is_empty_execute_response``."""
    return len(calls) == 0 or (len(calls) == 1 and len(calls[0]) == 0)


# -- execution --------------------------------------------------------------------------------------------------------

def instance_name(class_name: str, entry_id: str, model_name: str = MODEL_NAME) -> str:
    return re.sub(r"[-./:]", "_", f"{model_name}_{entry_id}_{class_name}_instance")


def execute_calls(calls: list[str], instances: Mapping[str, Any], *, entry_id: str = "entry",
                  model_name: str = MODEL_NAME) -> list[str]:
    """Run call strings on an entry's instances (``{class name: instance}``); one result string per call."""
    names = {class_name: instance_name(class_name, entry_id, model_name) for class_name in instances}
    by_name = {names[class_name]: instance for class_name, instance in instances.items()}
    method_owner: dict[str, str] = {}
    for class_name, instance in instances.items():
        for method_name, _ in inspect.getmembers(instance, predicate=inspect.ismethod):
            if not method_name.startswith("_"):
                method_owner[method_name] = names[class_name]
    return [_execute_one(call, method_owner, by_name) for call in calls]


def _execute_one(call: str, method_owner: Mapping[str, str], instances: Mapping[str, Any]) -> str:
    rewritten = _METHOD_CALL.sub(
        lambda m: f"{method_owner[m.group(1)]}.{m.group(1)}" if m.group(1) in method_owner else m.group(1), call)
    try:
        head = rewritten.split("(")[0] if "(" in rewritten else rewritten
        if "." in head:
            head = head.split(".")[1]
        if head in REFUSED_NAMES:
            raise PermissionError(f"Function call {head} is not allowed.")
        tree = ast.parse(rewritten.lstrip(" \t"), filename="<string>", mode="eval")
        # eval compiles what it parsed: the compiler's own refusals (a repeated keyword, yield or await outside a
        # function...) are SyntaxErrors there and must be here, before anything runs. Compiling executes nothing.
        compile(tree, "<string>", "eval", dont_inherit=True)
        result = _Evaluator(instances).value(tree.body)
        if type(result) is str:
            return result
        if type(result) is dict:
            try:
                return json.dumps(result)
            except Exception:  # noqa: BLE001 - upstream: str() when json.dumps fails
                return str(result)
        return str(result)
    except Exception as error:  # noqa: BLE001 - upstream catches every exception of the call
        try:
            message = str(error)
        except Exception:  # noqa: BLE001 - e.g. an int too large to print
            message = type(error).__name__
        return f"Error during execution: {message}"


class _Unsupported(Exception):
    pass


_COMPARISONS = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
                ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
                ast.In: lambda a, b: operator.contains(b, a), ast.NotIn: lambda a, b: not operator.contains(b, a)}


def _function_str(function: Any) -> str:
    """How CPython names a callable in its call errors (``_PyObject_FunctionStr``): ``<module>.<qualname>()``."""
    module = getattr(function, "__module__", None)
    qualname = getattr(function, "__qualname__", type(function).__name__)
    return f"{module}.{qualname}()" if isinstance(module, str) and module != "builtins" else f"{qualname}()"


def _iterable(value: Any) -> bool:
    try:
        iter(value)
    except TypeError:
        return False
    return True


class _Evaluator:
    """Evaluates the parsed call: literals, displays, bounded arithmetic, subscripts and calls of instance methods."""

    def __init__(self, instances: Mapping[str, Any]):
        self.instances = instances
        self.instance_types = tuple({type(i) for i in instances.values()})

    def value(self, node: ast.AST) -> Any:
        method = getattr(self, "_" + type(node).__name__, None)
        if method is None:
            raise _Unsupported(f"{type(node).__name__} is not evaluated here (deviation from upstream's eval)")
        return method(node)

    def _Constant(self, node: ast.Constant) -> Any:
        return node.value

    def _Name(self, node: ast.Name) -> Any:
        if node.id in self.instances:
            return self.instances[node.id]
        raise NameError(f"name '{node.id}' is not defined")

    def _Attribute(self, node: ast.Attribute) -> Any:
        owner = self.value(node.value)
        if not isinstance(owner, self.instance_types) or node.attr.startswith("_"):
            raise _Unsupported(f"attribute {node.attr!r} is not accessible here (deviation from upstream's eval)")
        return getattr(owner, node.attr)

    def _Call(self, node: ast.Call) -> Any:
        function = self.value(node.func)
        if not (inspect.ismethod(function) and isinstance(function.__self__, self.instance_types)):
            raise _Unsupported("only the tools' methods can be called here (deviation from upstream's eval)")
        arguments: list[Any] = []
        for argument in node.args:
            if isinstance(argument, ast.Starred):
                items = self.value(argument.value)
                if not _iterable(items):
                    raise TypeError(f"{_function_str(function)} argument after * must be an iterable, not "
                                    f"{type(items).__name__}")
                arguments.extend(self._bounded(list(items)))
            else:
                arguments.append(self.value(argument))
        # CPython evaluates the positional arguments first, then merges the keywords left to right, raising on a
        # name given twice (the compiler already refused ``a=1, a=2``; ``a=1, **{'a': 2}`` fails here).
        keywords: dict[str, Any] = {}
        for keyword in node.keywords:
            if keyword.arg is None:
                mapping = self.value(keyword.value)
                if not isinstance(mapping, dict):
                    raise TypeError(f"{_function_str(function)} argument after ** must be a mapping, not "
                                    f"{type(mapping).__name__}")
                pairs = list(mapping.items())
                if not all(isinstance(name, str) for name, _ in pairs):
                    raise TypeError("keywords must be strings")
            else:
                pairs = [(keyword.arg, self.value(keyword.value))]
            for name, value in pairs:
                if name in keywords:
                    raise TypeError(f"{_function_str(function)} got multiple values for keyword argument '{name}'")
                keywords[name] = value
        return function(*arguments, **keywords)

    def _BoolOp(self, node: ast.BoolOp) -> Any:
        result = self.value(node.values[0])
        for operand in node.values[1:]:
            if bool(result) == isinstance(node.op, ast.Or):
                return result
            result = self.value(operand)
        return result

    def _Compare(self, node: ast.Compare) -> Any:
        left = self.value(node.left)
        for operator, operand in zip(node.ops, node.comparators):
            right = self.value(operand)
            if not _COMPARISONS[type(operator)](left, right):
                return False
            left = right
        return True

    def _IfExp(self, node: ast.IfExp) -> Any:
        return self.value(node.body) if self.value(node.test) else self.value(node.orelse)

    def _List(self, node: ast.List) -> list:
        return self._bounded(self._elements(node.elts))

    def _Tuple(self, node: ast.Tuple) -> tuple:
        return tuple(self._bounded(self._elements(node.elts)))

    def _Set(self, node: ast.Set) -> set:
        return set(self._elements(node.elts))

    def _elements(self, nodes: list[ast.AST]) -> list:
        items: list[Any] = []
        for node in nodes:
            if isinstance(node, ast.Starred):
                items.extend(self._bounded(list(self.value(node.value))))
            else:
                items.append(self.value(node))
        return items

    def _Dict(self, node: ast.Dict) -> dict:
        result: dict = {}
        for key, value in zip(node.keys, node.values):
            if key is None:
                result.update(self.value(value))
            else:
                result[self.value(key)] = self.value(value)
        return result

    def _UnaryOp(self, node: ast.UnaryOp) -> Any:
        if isinstance(node.op, ast.Not):
            return not self.value(node.operand)
        return apply_unary(node.op, self._plain(self.value(node.operand)))

    def _BinOp(self, node: ast.BinOp) -> Any:
        return apply_binary(node.op, self._plain(self.value(node.left)), self._plain(self.value(node.right)))

    def _Subscript(self, node: ast.Subscript) -> Any:
        container = self._plain(self.value(node.value))
        return container[self.value(node.slice)]

    def _Slice(self, node: ast.Slice) -> slice:
        return slice(*(None if part is None else self.value(part) for part in (node.lower, node.upper, node.step)))

    def _plain(self, value: Any) -> Any:
        if isinstance(value, self.instance_types) or inspect.ismethod(value):
            raise _Unsupported("tools and their methods are not values here (deviation from upstream's eval)")
        return value

    @staticmethod
    def _bounded(items: list) -> list:
        if len(items) > MAX_ITEMS:
            raise ArithmeticRefused(f"more than {MAX_ITEMS} items")
        return items
