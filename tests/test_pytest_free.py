"""The core is apart from pytest at run time: importing any module of the package outside ``plugin/`` (the pytest
glue), each in an interpreter of its own, loads neither pytest nor ``_pytest``, xdist or pytest-html.
``tests/test_layout.py`` checks the import statements; this checks what an import actually loads (a module can
reach pytest through another one, or through a third-party package). The checking runs in a separate interpreter
(``tests/pytest_free_check.py``), as this one has pytest loaded."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "pytest_toolbench"
CHECK = Path(__file__).with_name("pytest_free_check.py")
#: every folder of the package but the pytest glue
CORE = sorted(path.name for path in PACKAGE.iterdir() if (path / "__init__.py").is_file() and path.name != "plugin")


def check(package: Path, folders: list[str]) -> dict[str, object]:
    out = subprocess.run([sys.executable, str(CHECK), str(package), *folders], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_no_core_module_loads_pytest_when_imported_alone():
    answers = check(PACKAGE, CORE)
    modules = {".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")
               for folder in CORE for path in (PACKAGE / folder).rglob("*.py")}
    assert modules <= set(answers) and "pytest_toolbench" in answers
    loading = {module: answer for module, answer in answers.items() if answer != []}
    assert not loading, "these core modules load pytest (the plugin hands the core plain values):\n" + \
        "\n".join(f"{module}: {answer}" for module, answer in sorted(loading.items()))


def test_the_check_names_every_module_that_loads_pytest_directly_or_through_another(tmp_path):
    package = tmp_path / "pytest_free_sample"
    (package / "core").mkdir(parents=True)
    files = {
        "__init__.py": "",
        "core/__init__.py": "",
        "core/clean.py": "import json\n",
        "core/direct.py": "from . import clean\n\n\ndef later():\n    return 1\n\n\nimport pytest  # noqa\n",
        "core/through.py": "from .clean import json\nfrom . import direct\n",
        "core/above.py": "from . import clean, through\n",
        "core/lazy.py": "def only_when_called():\n    import pytest  # noqa\n",
        "core/broken.py": "raise ImportError('a missing optional package')\n",
    }
    for name, text in files.items():
        (package / name).write_text(text, encoding="utf-8")
    answers = check(package, ["core"])
    assert answers["pytest_free_sample.core.clean"] == answers["pytest_free_sample.core.lazy"] == []
    for module in ("direct", "through", "above"):
        assert "pytest" in answers[f"pytest_free_sample.core.{module}"], module
    assert answers["pytest_free_sample.core.broken"].startswith("error: ImportError: a missing optional package")
