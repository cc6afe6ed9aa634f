"""xdist: the controller owns the engine and generates once; workers only read the cache and score.

What the plugin reads off pytest-xdist, in one place: which part of the run this process plays
(:func:`process_role`), what the controller handed a worker (:func:`worker_input`), and the manifest files through
which workers tell the controller their selection. The session (``plugin/session.py``) calls these; the core gets
the role and the worker input as plain values.

Facts relied on (pytest-xdist 3.x): ``pytest_configure_node`` fills ``workerinput`` before a worker starts; the
controller never collects; ``pytest_xdist_node_collection_finished`` runs before scheduling, so generating there
delays dispatch without any worker timing out. Workers send their selection through a manifest file written in
``pytest_collection_finish`` (``tryfirst``: before xdist's own reports their collected ids).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

from ..run.ledger import Manifest
from ..run.role import WORKER_INPUT_KEY, Role, role_of

def process_role(config: pytest.Config) -> Role:
    return role_of(is_worker(config), config.getoption("dist", "no") != "no",
                   bool(config.getoption("collectonly")))


def is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def worker_input(config: pytest.Config) -> dict[str, Any]:
    """What the controller handed this worker (options, manifest folder, fingerprint); empty off a worker."""
    return dict(getattr(config, "workerinput", {}).get(WORKER_INPUT_KEY) or {})


def worker_id(config: pytest.Config) -> str | None:
    return getattr(config, "workerinput", {}).get("workerid")


def new_manifest_dir() -> Path:
    return Path(tempfile.mkdtemp(prefix="toolbench-manifest-"))


def write_manifest(folder: Path | str, worker: str | None, manifest: Manifest) -> None:
    """A worker's selection, written whole (through a temporary file) before xdist reports its ids."""
    path = Path(folder) / f"{worker}.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(manifest.to_json()), encoding="utf-8")
    tmp.replace(path)


def read_manifest(folder: Path, worker: str) -> Manifest:
    path = folder / f"{worker}.json"
    # no file: the worker collected nothing
    return Manifest.from_json(json.loads(path.read_text(encoding="utf-8"))) if path.exists() else Manifest()


def remove_manifest_dir(folder: Path) -> None:
    for path in folder.glob("*"):
        path.unlink(missing_ok=True)
    try:
        os.rmdir(folder)
    except OSError:
        pass
