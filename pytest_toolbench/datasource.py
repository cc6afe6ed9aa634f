"""Where a suite's data comes from: a given folder, a verified download at a pinned commit, or the shipped samples.

The resolution order is: ``--toolbench-data``/ini/``TOOLBENCH_DATA``; a previous verified download in the cache;
a fresh download from the upstream repository at the commit pinned in ``suite.yaml`` (each file checked against its
sha256); and only then the small samples shipped with the suite, which the run header and summary flag loudly.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .definition import SuiteDefinition

DOWNLOAD_TIMEOUT_S = 20


@dataclass(frozen=True)
class DataSource:
    path: Path
    kind: str  # "folder", "download", "samples"
    description: str

    @property
    def is_sample(self) -> bool:
        return self.kind == "samples"

    info: tuple[tuple[str, str], ...] = ()  # the benchmark's own notes on this data (run_info), e.g. prompt variant

    def to_json(self) -> dict[str, Any]:
        return {"path": str(self.path), "kind": self.kind, "description": self.description, "info": dict(self.info)}


def resolve(definition: SuiteDefinition, data_dir: str | None, origin: str, download_root: Path,
            allow_download: bool) -> DataSource:
    if data_dir:
        folder = Path(data_dir) / definition.data_folder
        if folder.is_dir():
            return DataSource(folder, "folder", f"{folder} (from {origin})")
    upstream = definition.upstream
    if definition.data_files and upstream.get("base_url"):
        target = download_root / definition.name / upstream["commit"]
        if _verified(target, definition):
            return DataSource(target, "download", f"{upstream['repository']}@{upstream['commit'][:12]} (cached)")
        if allow_download and _download(target, definition):
            return DataSource(target, "download", f"{upstream['repository']}@{upstream['commit'][:12]} (downloaded)")
    reason = "no data folder given" if not data_dir else f"{data_dir} has no '{definition.data_folder}' folder"
    return DataSource(definition.samples_dir, "samples",
                      f"{definition.samples_dir}: SHIPPED SAMPLES ONLY ({reason}; download unavailable)"
                      " - not the benchmark's numbers")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _verified(target: Path, definition: SuiteDefinition) -> bool:
    return all((target / rel).is_file() and _sha256(target / rel) == digest
               for rel, (digest, _) in definition.data_files.items())


def _download(target: Path, definition: SuiteDefinition) -> bool:
    """Fetch every listed file; keep nothing unless all arrive with the right checksum."""
    base = definition.upstream["base_url"].rstrip("/") + "/"
    if os.environ.get("TOOLBENCH_NO_DOWNLOAD"):
        return False
    staging = Path(tempfile.mkdtemp(prefix="toolbench-dl-"))
    try:
        for rel, (digest, source) in definition.data_files.items():
            dest = staging / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            with urllib.request.urlopen(base + source, timeout=DOWNLOAD_TIMEOUT_S) as response:
                dest.write_bytes(response.read())
            if _sha256(dest) != digest:
                return False
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists():
            import shutil

            shutil.rmtree(target)
        staging.rename(target)
        return True
    except (urllib.error.URLError, OSError, TimeoutError):
        return False
    finally:
        if staging.exists():
            import shutil

            shutil.rmtree(staging, ignore_errors=True)
