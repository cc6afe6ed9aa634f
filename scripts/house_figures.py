"""The house's figures, measured from the source (issue 42): what a newcomer meets when adding something.

    .venv/bin/python scripts/house_figures.py [--json]

Prints, for ``pytest_toolbench/`` (the core) and ``suites/`` (shipped as ``pytest_toolbench.suites``):

- import cycles: strongly connected components of the module import graph, every import statement counted (module
  level, inside functions, under ``if TYPE_CHECKING:``); ``from . import x`` imports the package too;
- function-local own imports: imports of the package's own modules inside a function body;
- core code naming a suite: identifiers and string literals (docstrings and comments left out) of the core outside
  ``scorer_lib/`` that contain the name of a folder of ``suites/`` as a word (``bfcl_rows`` names ``bfcl``);
- pytest at run time: core modules after whose import, in a fresh interpreter, ``pytest`` is in ``sys.modules``;
- the largest files: Python files outside ``tests/`` over 450 lines.

Exit status 0 when every figure is 0, 1 otherwise. ``tests/test_layout.py`` checks the same rules one by one.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "pytest_toolbench"
SUITES = ROOT / "suites"
#: The folders of the core that must not load pytest when imported (the plugin/ folder is pytest's side).
PYTEST_FREE = ("run", "report", "stats", "data", "contract", "parsing", "scorer_lib", "prompting", "backends")
MAX_LINES = 450


def modules_of(folder: Path, package: str) -> dict[str, Path]:
    """Dotted module name -> file, a package named without ``__init__``."""
    found = {}
    for path in sorted(folder.rglob("*.py")):
        if "samples" in path.relative_to(folder).parts:
            continue
        parts = list(path.relative_to(folder).with_suffix("").parts)
        parts = parts[:-1] if parts[-1] == "__init__" else parts
        found[".".join([package, *parts])] = path
    return found


def import_targets(name: str, path: Path, tree: ast.AST) -> list[tuple[ast.AST, str, list[str]]]:
    """(node, base, [base.alias...]) of every import statement; relative ones made absolute."""
    is_package = path.name == "__init__.py"
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.append((node, "", [alias.name for alias in node.names]))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = name.split(".") if is_package else name.split(".")[:-1]
                parts = parts[:len(parts) - (node.level - 1)]
                base = ".".join(parts + ([node.module] if node.module else []))
            out.append((node, base, [base] + [f"{base}.{alias.name}" for alias in node.names]))
    return out


def module_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for _node, _base, targets in import_targets(name, path, ast.parse(path.read_text(encoding="utf-8"))):
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[tuple[str, ...]]:
    """Tarjan's components of more than one node, iteratively."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[tuple[str, ...]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph.get(successor, ())))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(tuple(sorted(component)))
    return found


def local_own_imports(modules: dict[str, Path], own: str) -> list[str]:
    """``path:line`` of imports inside function bodies whose target lies under ``own``."""
    found = set()
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in ast.walk(tree):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node, _base, targets in import_targets(name, path, function):
                if any(t == own or t.startswith(own + ".") for t in targets):
                    found.add(f"{path.relative_to(ROOT)}:{node.lineno}")
    return sorted(found)


def _code_without_docstrings(tree: ast.AST) -> str:
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            node.body = [stmt for stmt in body
                         if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
                                 and isinstance(stmt.value.value, str))] or [ast.Pass()]
    return ast.unparse(tree)


def suite_mentions(suite_names: list[str]) -> list[str]:
    """``path: names`` of core files (outside scorer_lib/) whose code names a suite."""
    pattern = re.compile(r"(?<![a-z0-9])(" + "|".join(map(re.escape, suite_names)) + r")(?![a-z0-9])")
    found = []
    for path in sorted(CORE.rglob("*.py")):
        if path.relative_to(CORE).parts[0] == "scorer_lib":
            continue
        code = _code_without_docstrings(ast.parse(path.read_text(encoding="utf-8"))).lower()
        names = sorted(set(pattern.findall(code)))
        if names:
            found.append(f"{path.relative_to(ROOT)}: {', '.join(names)}")
    return found


def pytest_loaders(modules: dict[str, Path]) -> list[str]:
    """Core modules whose import (fresh interpreter) leaves pytest in ``sys.modules``."""
    names = [name for name in modules
             if len(name.split(".")) >= 2 and name.split(".")[1] in PYTEST_FREE]

    def loads_pytest(name: str) -> bool:
        probe = f"import sys, importlib; importlib.import_module({name!r}); print('pytest' in sys.modules)"
        result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT)
        return result.stdout.strip() != "False"

    with ThreadPoolExecutor(max_workers=8) as pool:
        flags = list(pool.map(loads_pytest, names))
    return [name for name, flag in zip(names, flags) if flag]


def large_files() -> list[str]:
    listed = subprocess.run(["git", "ls-files", "*.py"], capture_output=True, text=True, cwd=ROOT).stdout.split()
    sizes = []
    for rel in listed:
        if rel.startswith("tests/") or not (ROOT / rel).is_file():
            continue
        lines = len((ROOT / rel).read_text(encoding="utf-8").splitlines())
        if lines > MAX_LINES:
            sizes.append((lines, rel))
    return [f"{rel}: {lines}" for lines, rel in sorted(sizes, reverse=True)]


def measure() -> dict[str, list[str]]:
    core = modules_of(CORE, "pytest_toolbench")
    suites = modules_of(SUITES, "pytest_toolbench.suites")
    suite_names = sorted(p.name for p in SUITES.iterdir() if (p / "suite.yaml").is_file())
    return {
        "cycles in pytest_toolbench/": [" <-> ".join(c) for c in strongly_connected(module_graph(core))],
        "cycles in suites/": [" <-> ".join(c) for c in strongly_connected(module_graph(suites))],
        "function-local own imports in pytest_toolbench/": local_own_imports(core, "pytest_toolbench"),
        "function-local own imports in suites/": local_own_imports(suites, "pytest_toolbench"),
        "core code naming a suite": suite_mentions(suite_names),
        "core imports of pytest_toolbench.suites": sorted(
            f"{path.relative_to(ROOT)}" for name, path in core.items()
            if any(t == "pytest_toolbench.suites" or t.startswith("pytest_toolbench.suites.")
                   for _n, _b, targets in import_targets(name, path, ast.parse(path.read_text(encoding="utf-8")))
                   for t in targets)),
        "core modules loading pytest": pytest_loaders(core),
        f"files over {MAX_LINES} lines (outside tests/)": large_files(),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the findings as JSON")
    parser.add_argument("--list", action="store_true", help="list every finding, not only the counts")
    args = parser.parse_args()
    figures = measure()
    if args.json:
        print(json.dumps(figures, indent=1))
    else:
        for label, items in figures.items():
            print(f"{len(items):5d}  {label}")
            if args.list:
                for item in items:
                    print(f"         {item}")
    return 0 if not any(figures.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
