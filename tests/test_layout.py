"""The package's layers, as README's "Layout" section states them: which folder of ``pytest_toolbench`` may import
which. Checked on every import statement of every module (imports inside functions included; imports under
``if TYPE_CHECKING:`` are annotations only and are left out), so a new module that reaches across a layer fails here
with the line that does it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "pytest_toolbench"

#: folder -> the package's folders its modules may import (besides their own folder and the standard library).
MAY_IMPORT = {
    "contract": {"scorer_lib"},  # definition.py: the names of the scorer libraries a suite.yaml may declare
    "parsing": set(),
    "scorer_lib": {"contract", "parsing"},
    "data": {"contract"},
    "backends": {"contract", "parsing", "scorer_lib", "run.records"},  # run.records: the one text-safety policy
    "run": {"contract", "data", "backends", "scorer_lib", "parsing"},
    "report": {"contract", "run", "suites"},  # suites: the shipped folder, where profile.yaml lies (no scorer)
    "plugin": {"contract", "data", "backends", "run", "report", "scorer_lib", "parsing"},
}


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
