"""Where the shipped suites lie, found without importing them: ``pytest_toolbench.suites`` (the top-level ``suites/``
folder in a checkout, a subpackage in the wheel). The core reads files there (``profile.yaml``) but never imports
the suites package: ``importlib.util.find_spec`` locates a package without running it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

#: The import name the suites ship under.
SUITES_PACKAGE = "pytest_toolbench.suites"


def shipped_suites_folder() -> Path:
    """The folder of the shipped suites (``FileNotFoundError`` when the installation has none)."""
    spec = importlib.util.find_spec(SUITES_PACKAGE)
    if spec is None or spec.origin is None:
        raise FileNotFoundError(f"no {SUITES_PACKAGE} package is installed beside pytest_toolbench")
    return Path(spec.origin).resolve().parent
