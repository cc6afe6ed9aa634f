"""The core names no suite (issue 42): what a suite needs from the core is a declaration in its suite.yaml (e.g. BFCL's
``generation.handlers: bfcl_handlers.library``: its renderers, its leaderboard rows, ``--toolbench-bfcl-model`` and
the run header's ``bfcl_row``) or a generic field, and suite-specific code lives in ``scorer_lib/`` or the suite's
own folder. Checked on the code of every core module outside ``scorer_lib/`` (docstrings and comments aside, as
``scripts/house_figures.py`` counts it): no identifier or string literal holds the name of a shipped suite as a
word, except in the files listed below with why (a ratchet: a new file naming a suite fails here, and a listed file
that no longer does must leave the list)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "pytest_toolbench"

#: core files that still name a suite, and why
STILL_NAMING: set[str] = set()


def _code(path: Path) -> str:
    """The module's code without its docstrings (comments are not in the tree)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            node.body = [statement for statement in body
                         if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
                                 and isinstance(statement.value.value, str))] or [ast.Pass()]
    return ast.unparse(tree).lower()


def suite_naming() -> dict[str, list[str]]:
    """Core file (outside ``scorer_lib/``) -> the suite names in its code (``scripts/house_figures.py`` counts them)."""
    suites = sorted(path.name for path in (ROOT / "suites").iterdir() if (path / "suite.yaml").is_file())
    pattern = re.compile(r"(?<![a-z0-9])(" + "|".join(map(re.escape, suites)) + r")(?![a-z0-9])")
    found = {}
    for path in sorted(CORE.rglob("*.py")):
        if path.relative_to(CORE).parts[0] == "scorer_lib":
            continue
        names = sorted(set(pattern.findall(_code(path))))
        if names:
            found[path.relative_to(ROOT).as_posix()] = names
    return found


def test_the_core_names_no_suite_outside_the_listed_files():
    found = suite_naming()
    new = {path: names for path, names in found.items() if path not in STILL_NAMING}
    assert not new, f"core code naming a suite (declare it in suite.yaml, or move it to scorer_lib/): {new}"
    gone = sorted(STILL_NAMING - set(found))
    assert not gone, f"these files no longer name a suite: take them off STILL_NAMING: {gone}"


def test_the_check_finds_a_suite_name_in_code_but_not_in_a_docstring(tmp_path):
    module = tmp_path / "m.py"
    module.write_text('"""BFCL in a docstring."""\nROW = "bfcl_row"  # a comment naming acebench\n', encoding="utf-8")
    code = _code(module)
    assert "bfcl_row" in code and "docstring" not in code and "acebench" not in code


def test_the_prompting_layer_reaches_a_handler_library_only_by_its_declared_name():
    from pytest_toolbench.plugin import option_scope
    from pytest_toolbench.prompting import rows
    from pytest_toolbench.prompting.suite_prompts import SuitePrompts
    from pytest_toolbench.scorer_lib.bfcl_handlers.library import LIBRARY

    declared = SuitePrompts.shipped()
    assert declared.handlers == "bfcl_handlers.library" and declared.library() is LIBRARY
    assert rows.row_option(declared) is LIBRARY.option and rows.header_key(declared) == "bfcl_row"
    assert option_scope.OPTION_SCOPE[LIBRARY.option.dest] == option_scope.ROW_SCOPE
    # no library declared: no row, no option
    assert rows.choose_row(SuitePrompts(), None, "Qwen/Qwen3-8B", "qwen") is rows.NO_LIBRARY
    assert rows.row_option(SuitePrompts()) is None and rows.header_key(SuitePrompts()) is None
