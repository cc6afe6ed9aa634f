"""Shared fixtures for the plugin's own tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[1]
EXAMPLE_SUITE = REPO / "examples" / "echo_suite"


def shared_data_dir() -> Path | None:
    """The upstream data: TOOLBENCH_DATA, else ../shared/data beside the checkout."""
    given = os.environ.get("TOOLBENCH_DATA")
    candidate = Path(given) if given else REPO.parent / "shared" / "data"
    return candidate if candidate.is_dir() else None


@pytest.fixture(scope="session")
def shared_data() -> Path:
    path = shared_data_dir()
    if path is None:
        pytest.skip("upstream benchmark data not available (set TOOLBENCH_DATA)")
    return path
