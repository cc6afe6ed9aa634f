"""What a suite's data are (``DataSource``: a given folder, a verified download, or the shipped samples) and where
downloads are kept (``DownloadFolders``, given by the run's cache layout)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class DataSource:
    """A suite's data as resolved (``resolution.resolve``), checked (``verification.verify``) and sealed after
    loading (``verification.seal``)."""

    path: Path
    kind: str  # "folder", "download", "samples"
    description: str

    @property
    def is_sample(self) -> bool:
        return self.kind == "samples"

    info: tuple[tuple[str, str], ...] = ()  # the benchmark's own notes on this data (run_info), e.g. prompt variant
    data_sha256: str = ""  # one digest of the files the figures rest on (see ``verification.seal``); "" if none
    unverified: tuple[str, ...] = ()  # listed files that differ from (or are missing against) suite.yaml's sums
    unlisted: tuple[str, ...] = ()  # files the loader read that suite.yaml's data.files does not list
    # With download entries (``download: true``) only:
    downloaded: tuple[str, ...] = ()  # those served from the download cache (fetched now or by an earlier run)
    given_folder: str = ""  # the folder that ``path`` (an overlay with the downloaded files) mirrors
    lfs_pointers: tuple[tuple[str, str, int], ...] = ()  # (rel, oid sha256, size) of known Git LFS pointers
    # (rel, why) a present file's LFS pointer could not be learned; why "": the pin is not an LFS pointer's
    unsettled: tuple[tuple[str, str], ...] = ()

    def to_json(self) -> dict[str, Any]:
        document = {"path": str(self.path), "kind": self.kind, "description": self.description,
                    "info": dict(self.info), "data_sha256": self.data_sha256, "unverified": list(self.unverified),
                    "unlisted": list(self.unlisted)}
        if self.downloaded:
            document.update(downloaded=list(self.downloaded), given_folder=self.given_folder)
        return document


@dataclass(frozen=True)
class DownloadFolders:
    """Where downloaded data are kept. The data package names no folder of its own: a run passes its cache
    layout's (``pytest_toolbench.run.cache_layout.CacheLayout.downloads``)."""

    suites: Path  # whole suites at their pinned commit: <suites>/<suite>/<commit>/<rel>
    entries: Path  # ``download: true`` files, checked against their pin: <entries>/<suite>/<pin>/<rel>
    overlays: Path  # a data folder plus its downloaded files, as one folder: <overlays>/<suite>-<digest>/
