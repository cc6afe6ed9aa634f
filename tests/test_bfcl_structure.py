"""The shape of the BFCL scorer package: the module import graph has no cycle, and what the Java and JavaScript
decoders share lives once, in ``decoders/common.py``.

Read from the source with :mod:`ast` (nothing is imported): every relative import counts, also one inside a function
(a deferred import hides a cycle from the import system, not from a reader).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SCORER = Path(__file__).resolve().parents[1] / "suites" / "bfcl" / "scorer"


def _module_name(path: Path) -> str:
    """``multi_turn/executor.py`` -> ``multi_turn.executor``; a package's ``__init__.py`` is the package's name
    (``""`` for the scorer package itself)."""
    parts = path.relative_to(SCORER).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(SCORER.rglob("*.py"))}


def _is_package(name: str, modules: dict[str, Path]) -> bool:
    return modules[name].name == "__init__.py"


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules of the scorer it imports (relative imports; ``from .pkg import mod`` is an edge to the
    module ``pkg.mod`` when that is a module, else to ``pkg``)."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name.split(".") if _is_package(name, modules) else name.split(".")[:-1]
        package = [part for part in package if part]
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or not node.level:
                continue
            base = package[:len(package) - node.level + 1]
            assert len(base) == len(package) - node.level + 1, f"{path}: relative import above the scorer package"
            target = ".".join(base + (node.module.split(".") if node.module else []))
            for alias in node.names:
                submodule = f"{target}.{alias.name}" if target else alias.name
                if submodule in modules:
                    edges.add(submodule)
                else:
                    assert target in modules, f"{path}: imports {target!r}, which is no module of the scorer"
                    edges.add(target)
        edges.discard(name)
        graph[name] = edges
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path ``[a, b, ..., a]``, or None."""
    state: dict[str, str] = {}
    stack: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = "open"
        stack.append(module)
        for imported in sorted(graph[module]):
            if state.get(imported) == "open":
                return stack[stack.index(imported):] + [imported]
            if imported not in state:
                found = visit(imported)
                if found:
                    return found
        stack.pop()
        state[module] = "done"
        return None

    for module in sorted(graph):
        if module not in state:
            found = visit(module)
            if found:
                return found
    return None


def test_the_scorer_has_no_import_cycle():
    graph = import_graph()
    assert {"loading", "prompt", "decoding", "checker", "aggregation", "replay", "gold", "tl"} <= set(graph)
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(name or "__init__" for name in cycle)


def test_the_cycle_finder_sees_a_cycle_through_a_deferred_import():
    # prompt -> loading -> multi_turn -> prompt, the cycle this package had (loading imported multi_turn in a function)
    graph = {"prompt": {"loading"}, "loading": {"multi_turn"}, "multi_turn": {"prompt"}, "checker": {"prompt"}}
    assert find_cycle(graph) == ["prompt", "loading", "multi_turn", "prompt"]
    graph["multi_turn"] = {"categories"}
    graph["categories"] = set()
    assert find_cycle(graph) is None


def test_subpackages_import_nothing_of_the_package_root_but_its_modules():
    # ``from .. import x`` in a subpackage would reach the scorer's __init__, which imports every part: a cycle
    graph = import_graph()
    assert all("" not in edges for name, edges in graph.items() if name), graph


#: Each language's decoder modules: the decoder (upstream's reading of the tree), its grammar and its lexer.
LANGUAGE_MODULES = {language: (language, f"{language}_parser", f"{language}_lexer") for language in ("java", "javascript")}


def test_the_language_decoders_import_nothing_else_of_the_scorer():
    graph = import_graph()
    for name in ("decoders.common", "decoders.python"):
        assert graph[name] <= {"decoders.common"}, (name, graph[name])
    for language, modules in LANGUAGE_MODULES.items():
        own = {f"decoders.{module}" for module in modules}
        for module in modules:  # the language's own modules, and common.py
            assert graph[f"decoders.{module}"] <= own | {"decoders.common"}, (module, graph[f"decoders.{module}"])


def _definitions(path: Path) -> dict[str, str]:
    """Every function and method of a module: qualified name -> its body (docstring left out) as an AST dump."""
    found: dict[str, str] = {}

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                body = child.body
                if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                        and isinstance(body[0].value.value, str):
                    body = body[1:]
                found[prefix + child.name] = ast.dump(ast.Module(body=body, type_ignores=[]))
                walk(child, prefix + child.name + ".")
            elif isinstance(child, ast.ClassDef):
                walk(child, prefix + child.name + ".")

    walk(ast.parse(path.read_text(encoding="utf-8")), "")
    return found


def test_java_and_javascript_define_nothing_twice():
    java, javascript = ({name: body for module in LANGUAGE_MODULES[language]
                         for name, body in _definitions(SCORER / "decoders" / f"{module}.py").items()}
                        for language in ("java", "javascript"))
    common = _definitions(SCORER / "decoders" / "common.py")
    by_body: dict[str, list[str]] = {}
    for module, definitions in (("java", java), ("javascript", javascript), ("common", common)):
        for name, body in definitions.items():
            by_body.setdefault(body, []).append(f"{module}.{name}")
    repeated = [names for names in by_body.values() if len({name.split(".")[0] for name in names}) > 1]
    assert not repeated, f"defined identically in more than one decoder module (share it in common.py): {repeated}"


@pytest.mark.parametrize("module", ["java", "javascript"])
def test_both_decoders_run_on_the_shared_pieces(module):
    """The parse guard, the reading of call arguments and the lexer's scanning steps are common.py's."""
    trees = [ast.parse((SCORER / "decoders" / f"{part}.py").read_text(encoding="utf-8"))
             for part in LANGUAGE_MODULES[module]]
    imported = {alias.name for tree in trees for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and node.module == "common" for alias in node.names}
    assert {"tree_sitter_input", "call_arguments", "scan_name_or_number", "scan_operator", "longest_first",
            "TokenStream", "DecodeError", "skip_blanks_and_comments"} <= imported
    names = {node.id for tree in trees for node in ast.walk(tree) if isinstance(node, ast.Name)}
    assert "RecursionError" not in names and "UnicodeEncodeError" not in names  # the guard is common.py's
