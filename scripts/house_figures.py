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

Exit status 0 when every figure is 0, 1 otherwise. The figures are counted by the checks of ``tests/test_layout.py``
and ``tests/test_core_names_no_suite.py`` themselves (imported from there), which hold each rule one by one.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the layout tests' own checks: one implementation, measured and tested

from test_core_names_no_suite import suite_naming  # noqa: E402
from test_layout import (SUITES_PACKAGE, core_imports_of_the_suites, local_package_imports, module_graph,  # noqa: E402
                         package_modules, strongly_connected)

CORE = ROOT / "pytest_toolbench"
SUITES = ROOT / "suites"
#: The folders of the core that must not load pytest when imported (the plugin/ folder is pytest's side).
PYTEST_FREE = ("run", "report", "stats", "data", "contract", "parsing", "scorer_lib", "prompting", "backends")
MAX_LINES = 450


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
    return {
        "cycles in pytest_toolbench/": [" <-> ".join(c) for c in strongly_connected(module_graph(CORE))],
        "cycles in suites/": [" <-> ".join(c) for c in strongly_connected(module_graph(SUITES, SUITES_PACKAGE))],
        "function-local own imports in pytest_toolbench/": local_package_imports(CORE),
        "function-local own imports in suites/": local_package_imports(SUITES, ("pytest_toolbench",)),
        "core code naming a suite": [f"{path}: {', '.join(names)}" for path, names in suite_naming().items()],
        "core imports of pytest_toolbench.suites": core_imports_of_the_suites(CORE),
        "core modules loading pytest": pytest_loaders(package_modules(CORE)),
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
