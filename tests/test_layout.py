"""The package's layers, as docs/architecture.md states them: which folder of ``pytest_toolbench`` may import
which. Checked on every import statement of every module (imports inside functions included; imports under
``if TYPE_CHECKING:`` are annotations only and are left out), so a new module that reaches across a layer fails here
with the line that does it. Then: the folder rules themselves have no cycle; the core folders import no pytest,
``_pytest``, xdist or pytest-html (imports inside functions included); and the module import graph, every import
counted (inside functions and under ``if TYPE_CHECKING:`` too), has no cycle.

The suites (``suites/``, shipped as ``pytest_toolbench.suites``) live under the same rules: their module graph has no
cycle, no function imports a module of the suite or of the package, a suite imports of the package only
``SUITES_MAY_IMPORT`` (never another suite, never a backend, the run, the reports or the plugin), and the core never
imports ``pytest_toolbench.suites``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "pytest_toolbench"
#: The suites' folder; it ships inside the wheel as ``pytest_toolbench.suites`` (pyproject's package-dir).
SUITES = PACKAGE.parent / "suites"
SUITES_PACKAGE = "pytest_toolbench.suites"

#: folder -> the package's folders its modules may import (besides their own folder and the standard library).
MAY_IMPORT = {
    "contract": set(),
    "parsing": set(),
    "scorer_lib": {"contract", "parsing"},
    "data": {"contract"},
    "prompting": {"contract", "parsing", "scorer_lib"},
    "backends": {"contract", "parsing", "scorer_lib", "prompting"},
    # stats: the statistics, pure functions (records and the suites' aggregates are read through contract/)
    "stats": {"contract"},
    "run": {"contract", "data", "backends", "scorer_lib", "parsing", "prompting", "stats"},
    "report": {"contract", "run", "stats"},
    "plugin": {"contract", "data", "backends", "run", "report", "scorer_lib", "parsing", "prompting", "stats"},
}



#: The folders that make the run apart from pytest: none of their modules imports these (see ``plugin/``).
PYTEST_FREE = ("run", "report", "stats", "data", "contract", "parsing", "scorer_lib", "prompting", "backends")
PYTEST_PACKAGES = ("pytest", "_pytest", "xdist", "pytest_html")



def _runtime_imports(tree: ast.AST, module: str) -> list[tuple[int, str]]:
    """(line, absolute module) of every import outside ``if TYPE_CHECKING:`` blocks."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(child) for stmt in node.body for child in ast.walk(stmt))
    found = []
    package = module.rsplit(".", 1)[0]
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names = [f"{target}.{alias.name}" for alias in node.names] if not node.module else [target]
            found += [(node.lineno, name) for name in names]
    return found


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1] + ["__init__"]
        yield path, ".".join(parts)


def _allowed(folder: str, target: str) -> bool:
    inner = target.split(".", 1)[1] if "." in target else ""
    if inner in ("", "__version__"):  # the package itself: its version
        return True
    if inner.split(".")[0] == folder:
        return True
    return any(inner == rule or inner.startswith(rule + ".") for rule in MAY_IMPORT[folder])


@pytest.mark.parametrize("folder", sorted(MAY_IMPORT))
def test_each_layer_imports_only_what_the_layout_allows(folder):
    crossings = []
    for path, module in _modules():
        parts = module.split(".")
        if len(parts) < 3 or parts[1] != folder:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for line, target in _runtime_imports(tree, module):
            if target.split(".")[0] == "pytest_toolbench" and not _allowed(folder, target):
                crossings.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {target}")
    assert not crossings, f"{folder}/ may import {sorted(MAY_IMPORT[folder])} only:\n" + "\n".join(crossings)


def test_every_folder_of_the_package_has_a_rule():
    folders = {path.name for path in PACKAGE.iterdir() if path.is_dir() and (path / "__init__.py").is_file()}
    assert folders == set(MAY_IMPORT)


def test_the_rule_catches_a_crossing(tmp_path):
    tree = ast.parse("from ..plugin import options\nif TYPE_CHECKING:\n    from ..plugin.options import X\n")
    imports = _runtime_imports(tree, "pytest_toolbench.run.context")
    assert imports == [(1, "pytest_toolbench.plugin")]
    assert not _allowed("run", "pytest_toolbench.plugin") and _allowed("run", "pytest_toolbench.data.source")


def test_the_folder_rules_have_no_cycle():
    rules = {folder: {rule.split(".")[0] for rule in allowed}
             for folder, allowed in MAY_IMPORT.items()}
    cycles = strongly_connected(rules)
    assert not cycles, f"folders that may import each other (round and round): {cycles}"


@pytest.mark.parametrize("folder", PYTEST_FREE)
def test_the_core_imports_no_pytest(folder):
    found = []
    for path in sorted((PACKAGE / folder).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            found += [f"{path.relative_to(PACKAGE.parent)}:{node.lineno} imports {name}" for name in names
                      if name.split(".")[0] in PYTEST_PACKAGES]
    assert not found, f"{folder}/ is part of the pytest-free core (the plugin hands it plain values):\n" + \
        "\n".join(found)


# -- the module import graph -----------------------------------------------------------------------------------
def package_modules(package: Path, name: str | None = None) -> dict[str, Path]:
    """Dotted module name -> file of every module under ``package`` (a package named without ``__init__``), the
    folder itself named ``name`` (default: the folder's name; the suites' folder is ``pytest_toolbench.suites``).
    The suites' ``samples/`` folders hold data in an upstream layout, not modules of the suite."""
    modules: dict[str, Path] = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package).with_suffix("").parts)
        if "samples" in parts[:-1]:
            continue
        parts = [name or package.name, *(parts[:-1] if parts[-1] == "__init__" else parts)]
        modules[".".join(parts)] = path
    return modules


def module_graph(package: Path, name: str | None = None) -> dict[str, set[str]]:
    """Module -> the package's modules it imports, every import statement counted: at module level, inside
    functions and under ``if TYPE_CHECKING:``. A package is named without ``__init__``; ``from . import x`` imports
    the package as well as ``x`` (its ``__init__`` runs first)."""
    modules = package_modules(package, name)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = name.split(".") if is_package else name.split(".")[:-1]
                    parts = parts[:len(parts) - (node.level - 1)]
                    base = ".".join(parts + ([node.module] if node.module else []))
                targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
            else:
                continue
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[tuple[str, ...]]:
    """Tarjan's strongly connected components of more than one node (iterative: no recursion limit), each as its
    sorted names."""
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


def test_the_module_graph_has_no_cycle():
    cycles = strongly_connected(module_graph(PACKAGE))
    assert not cycles, "modules that import each other, round and round (function-local and TYPE_CHECKING " \
                       "imports count):\n" + "\n".join(" <-> ".join(cycle) for cycle in cycles)


def test_a_planted_cycle_is_found(tmp_path):
    package = tmp_path / "pkg"
    (package / "low").mkdir(parents=True)
    files = {
        "__init__.py": "",
        "top.py": "from .low import base\n",
        "low/__init__.py": "",
        "low/base.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .helper import Helper\n",
        "low/helper.py": "def helper():\n    from ..top import x\n",  # function-local: still an arrow
        "alone.py": "import json\nfrom . import top\n",
    }
    for name, text in files.items():
        (package / name).write_text(text, encoding="utf-8")
    graph = module_graph(package)
    assert graph["pkg.top"] == {"pkg.low", "pkg.low.base"} and graph["pkg.alone"] == {"pkg", "pkg.top"}
    assert strongly_connected(graph) == [("pkg.low.base", "pkg.low.helper", "pkg.top")]
    (package / "low/helper.py").write_text("def helper():\n    return 1\n", encoding="utf-8")
    assert strongly_connected(module_graph(package)) == []
    # a cycle through a package's __init__, and two components at once
    assert sorted(strongly_connected({"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"e"}, "e": {"c"}, "f": {"a"}})) == \
        [("a", "b"), ("c", "d", "e")]
    assert strongly_connected({"x": {"x"}}) == []  # a module is not its own cycle


#: What a function may import inside its body: heavy third-party packages (and optional extras), loaded only when a
#: run needs them, so that importing the plugin (and ``pytest --help``) stays cheap. Never the package's own modules:
#: an arrow between them is written at the top of the module, where a reader sees it.
def local_package_imports(package: Path, own: tuple[str, ...] = ()) -> list[str]:
    """``path:line`` of every import of the package's own modules inside a function body: a relative import, or an
    absolute one of the folder's name or of a name in ``own`` (the suites: ``pytest_toolbench``, whose
    ``pytest_toolbench.suites`` they are)."""
    roots = {package.name, *own}
    found = []
    for path in sorted(package_modules(package).values()):
        for function in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(function):
                own_import = (isinstance(node, ast.ImportFrom) and (node.level > 0 or
                                                                     (node.module or "").split(".")[0] in roots)) or \
                    (isinstance(node, ast.Import) and any(a.name.split(".")[0] in roots for a in node.names))
                if own_import:
                    found.append(f"{path.relative_to(package.parent)}:{node.lineno}")
    return sorted(set(found))


def test_functions_import_no_module_of_the_package():
    found = local_package_imports(PACKAGE)
    assert not found, "imports of the package's own modules inside functions (move them to the module's top):\n" + \
                      "\n".join(found)


def test_a_function_local_package_import_is_found(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "a.py").write_text("import json\n\ndef f():\n    import torch\n    from . import b\n", encoding="utf-8")
    (package / "b.py").write_text("def g():\n    import pkg.a\n    from json import dumps\n", encoding="utf-8")
    assert local_package_imports(package) == ["pkg/a.py:5", "pkg/b.py:2"]


# -- the suites under the same rules ---------------------------------------------------------------------------
#: What a suite (its scorer, its ``__init__``) may import of the package: the contract it is written against, the
#: parsers and the scorer libraries, as a layer of ``MAY_IMPORT`` would say it. Never another suite, never a backend,
#: the run, the reports, the data layer or the plugin (``tests/test_scorer_lib.py`` names the modules of these three
#: folders one by one: ``SCORER_MAY_IMPORT``).
SUITES_MAY_IMPORT = {"contract", "parsing", "scorer_lib"}


def import_targets(module: str, path: Path) -> list[tuple[int, str]]:
    """(line, absolute target) of every import statement of one module (inside functions and under
    ``if TYPE_CHECKING:`` too); ``from x import y`` gives ``x`` and ``x.y`` (``y`` may be a module)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
                parts = parts[:len(parts) - (node.level - 1)]
                base = ".".join(parts + ([node.module] if node.module else []))
            found += [(node.lineno, base)] + [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return found


def suite_crossings(suites: Path, name: str = SUITES_PACKAGE) -> list[str]:
    """``path:line imports target`` (the line's first offending target) of every import of a suite module that
    reaches the package outside ``SUITES_MAY_IMPORT`` or another suite (``pytest_toolbench.suites.<other>``, relative
    or absolute); the package itself and the suites' package are no crossing."""
    package, depth = name.split(".")[0], len(name.split("."))
    found = {}
    for module, path in package_modules(suites, name).items():
        own = module.split(".")[:depth + 1]  # pytest_toolbench.suites.<suite>
        for line, target in import_targets(module, path):
            parts = target.split(".")
            if parts[0] != package or len(parts) == 1:
                continue
            if parts[:depth] == name.split("."):
                allowed = len(parts) == depth or parts[:depth + 1] == own
            else:
                allowed = parts[1] in SUITES_MAY_IMPORT
            if not allowed:
                found.setdefault(f"{path.relative_to(suites.parent)}:{line}", target)
    return [f"{where} imports {target}" for where, target in found.items()]


def test_the_suites_module_graph_has_no_cycle():
    cycles = strongly_connected(module_graph(SUITES, SUITES_PACKAGE))
    assert not cycles, "suite modules that import each other, round and round (function-local and TYPE_CHECKING " \
                       "imports count; `from . import x` imports the package, whose __init__ imports the module " \
                       "back):\n" + "\n".join(" <-> ".join(cycle) for cycle in cycles)


def test_suite_functions_import_no_module_of_the_suite_or_the_package():
    found = local_package_imports(SUITES, own=("pytest_toolbench",))
    assert not found, "imports of the suite's or the package's modules inside functions (move them to the " \
                      "module's top):\n" + "\n".join(found)


def test_a_suite_imports_only_the_contract_the_parsers_and_the_scorer_libraries():
    found = suite_crossings(SUITES)
    assert not found, f"a suite may import of the package {sorted(SUITES_MAY_IMPORT)} and itself only:\n" + \
        "\n".join(found)


def core_imports_of_the_suites(package: Path) -> list[str]:
    """``path:line`` of every import (inside functions and under ``if TYPE_CHECKING:`` too) by which a module of the
    package reaches ``<package>.suites``."""
    suites = f"{package.name}.suites"
    return sorted({f"{path.relative_to(package.parent)}:{line}" for module, path in package_modules(package).items()
                   for line, target in import_targets(module, path)
                   if target == suites or target.startswith(suites + ".")})


def test_the_core_never_imports_the_suites():
    """The arrow runs from the suites to the core only: what the core needs of a suite comes through the suite's
    declaration (suite.yaml, loaded as data from the suites' folder) and its scorer, bound by the catalog."""
    found = core_imports_of_the_suites(PACKAGE)
    assert not found, "the core imports pytest_toolbench.suites (the suites import the core, never back):\n" + \
        "\n".join(found)
    allowing = sorted(folder for folder, allowed in MAY_IMPORT.items() if "suites" in allowed)
    assert not allowing, f"folder rules that still allow importing the suites: {allowing}"


def _write_tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")


def test_planted_suite_violations_are_found(tmp_path):
    suites = tmp_path / "suites"
    _write_tree(suites, {
        "__init__.py": "",
        "one/__init__.py": "",
        "one/scorer/__init__.py": "from .checker import score\n",
        # a cycle through the scorer's __init__: `from . import x` imports the package first
        "one/scorer/checker.py": "from . import rules\nfrom pytest_toolbench.contract.suite import Case\n",
        "one/scorer/rules.py": "import json\n\ndef f():\n    import torch\n    from .other import g\n"
                               "    from pytest_toolbench.contract.errors import DataError\n",
        "one/scorer/other.py": "def g():\n    return 1\n",
        "one/samples/data.py": "from pytest_toolbench.backends import gold\n",  # data, not a module of the suite
        "two/__init__.py": "",
        "two/scorer/__init__.py": "from ...one.scorer import checker\nimport pytest_toolbench.suites.one.scorer\n"
                                  "from pytest_toolbench.backends.gold import GoldBackend\n"
                                  "from pytest_toolbench.parsing.python_calls import PythonCallDecoder\n"
                                  "from pytest_toolbench.suites.two.scorer import x\nimport pytest_toolbench.suites\n",
    })
    graph = module_graph(suites, SUITES_PACKAGE)
    assert "pytest_toolbench.suites.one.samples.data" not in graph
    assert strongly_connected(graph) == [("pytest_toolbench.suites.one.scorer",
                                          "pytest_toolbench.suites.one.scorer.checker")]
    assert local_package_imports(suites, own=("pytest_toolbench",)) == ["suites/one/scorer/rules.py:5",
                                                                         "suites/one/scorer/rules.py:6"]
    assert suite_crossings(suites) == ["suites/two/scorer/__init__.py:1 imports pytest_toolbench.suites.one.scorer",
                                       "suites/two/scorer/__init__.py:2 imports pytest_toolbench.suites.one.scorer",
                                       "suites/two/scorer/__init__.py:3 imports pytest_toolbench.backends.gold"]
    (suites / "one/scorer/checker.py").write_text("from .rules import f\n", encoding="utf-8")
    assert strongly_connected(module_graph(suites, SUITES_PACKAGE)) == []


def test_a_planted_core_import_of_the_suites_is_found(tmp_path):
    package = tmp_path / "pytest_toolbench"
    _write_tree(package, {
        "__init__.py": "",
        "suites/__init__.py": "",
        "report/__init__.py": "",
        "report/profile.py": "import pytest_toolbench.suites as shipped\n",
        "backends/__init__.py": "",
        "backends/prompts.py": "def f():\n    from .. import suites\n",
        "run/__init__.py": "",
        "run/context.py": "from ..backends import prompts\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                          "    from pytest_toolbench.suites.bfcl import scorer\n",
    })
    assert core_imports_of_the_suites(package) == ["pytest_toolbench/backends/prompts.py:2",
                                                   "pytest_toolbench/report/profile.py:1",
                                                   "pytest_toolbench/run/context.py:4"]

