"""Which of the package's core modules load pytest when imported: each in an interpreter of its own.

Run as a script (``python tests/pytest_free_check.py PACKAGE_DIR FOLDER...``; it imports no pytest itself), it prints
one JSON object: module -> the pytest packages (``pytest``, ``_pytest``, ``xdist``, ``pytest_html``) in
``sys.modules`` after importing it, or ``"error: ..."`` when the import failed.

One interpreter per module, cheaply: a parent that has imported nothing of the package forks a child per module
(a copy of that clean interpreter), which imports the module and reports. To spare each child the imports of the
modules below it, the modules are checked in layers of the package's import graph (a module's layer is above every
module it imports): before a layer, the parent imports the modules of the layers below that were found clean. That
hides nothing: a clean module loads no pytest when imported, so having it already loaded changes nothing but the
time; a module found loading pytest is never imported by the parent, so each module that imports it finds pytest
too. Where ``os.fork`` is missing, each module gets a fresh ``python -c`` instead (slower, same answer).
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

PYTEST_PACKAGES = ("pytest", "_pytest", "xdist", "pytest_html")


def core_modules(package: Path, folders: list[str]) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (at any level of the file)."""
    modules: dict[str, Path] = {}
    for folder in ["__init__.py"] + folders:
        for path in sorted(package.glob(folder) if folder.endswith(".py") else (package / folder).rglob("*.py")):
            parts = list(path.relative_to(package.parent).with_suffix("").parts)
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        found: set[str] = set()
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
            found.update(targets)
        graph[name] = {target for target in found if target in modules and target != name}
    return graph


def layers(graph: dict[str, set[str]]) -> list[list[str]]:
    """The modules in layers, each above every module it imports (a cycle, should there be one, goes last)."""
    placed: set[str] = set()
    result: list[list[str]] = []
    while len(placed) < len(graph):
        layer = sorted(name for name, imports in graph.items() if name not in placed and imports <= placed)
        if not layer:
            layer = sorted(set(graph) - placed)
        result.append(layer)
        placed.update(layer)
    return result


def loaded() -> list[str]:
    return sorted(name for name in PYTEST_PACKAGES if name in sys.modules)


def check_in_child(module: str) -> str:
    try:
        importlib.import_module(module)
    except BaseException as error:  # noqa: BLE001 - reported, as the module's answer
        return json.dumps(f"error: {type(error).__name__}: {error}")
    return json.dumps(loaded())


def check_layer(layer: list[str], jobs: int) -> dict[str, object]:
    answers: dict[str, object] = {}
    if not hasattr(os, "fork"):
        for module in layer:
            out = subprocess.run([sys.executable, __file__, "--one", module], capture_output=True, text=True)
            answers[module] = json.loads(out.stdout) if out.returncode == 0 else f"error: {out.stderr.strip()}"
        return answers
    queue, running = list(layer), {}
    while queue or running:
        while queue and len(running) < jobs:
            module = queue.pop(0)
            read, write = os.pipe()
            pid = os.fork()
            if pid == 0:  # the child: a copy of the parent's interpreter
                os.close(read)
                os.write(write, check_in_child(module).encode())
                os._exit(0)
            os.close(write)
            running[pid] = (module, read)
        pid, _ = os.wait()
        module, read = running.pop(pid)
        chunks = []
        while True:
            chunk = os.read(read, 65536)
            if not chunk:
                break
            chunks.append(chunk)
        os.close(read)
        answers[module] = json.loads(b"".join(chunks) or b'"error: the child died"')
    return answers


def main(argv: list[str]) -> int:
    if argv[:1] == ["--one"]:
        print(check_in_child(argv[1]))
        return 0
    package, folders = Path(argv[0]).resolve(), argv[1:]
    sys.path.insert(0, str(package.parent))
    jobs = max(2, min(8, os.cpu_count() or 2))
    answers: dict[str, object] = {}
    for layer in layers(core_modules(package, folders)):
        answers.update(check_layer(layer, jobs))
        for module in layer:
            if answers[module] == []:
                importlib.import_module(module)  # clean: the layers above need not import it again
        assert not loaded(), "a module found clean loaded pytest in the parent"
    print(json.dumps(answers, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
