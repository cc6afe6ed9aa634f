"""The plugin's cache folder (``--toolbench-cache``, by default ``.pytest_cache/d/toolbench``), laid out in one
place: every file and folder the run keeps there is named here and nowhere else."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..data import DownloadFolders


@dataclass(frozen=True)
class CacheLayout:
    root: Path
    generations: Path  # the generation cache (SQLite)
    data_hashes: Path  # sha256 of data files, by path, size, times and inode (data.HashCache)
    data_downloads: Path  # whole suites downloaded at their pinned commit: <suite>/<commit>/
    download_entries: Path  # ``download: true`` files, verified: <suite>/<pin>/<rel>
    data_overlays: Path  # a data folder plus its downloaded files: <suite>-<digest>/
    suites: Path  # loaded suites (run.suite_cache)

    #: The xdist controller's generations that its cache file could not take, handed to the workers; written in the
    #: run's hand-off folder, not in the cache folder.
    UNSAVED_GENERATIONS = "unsaved-generations.sqlite"

    @classmethod
    def at(cls, root: Path | str) -> "CacheLayout":
        root = Path(root)
        return cls(root=root, generations=root / "generations.sqlite", data_hashes=root / "data-sha256.json",
                   data_downloads=root / "data", download_entries=root / "downloads",
                   data_overlays=root / "data-overlay", suites=root / "suites")

    @property
    def generation_runs(self) -> Path:
        """The generation figures of the runs that filled the generation cache, by fingerprint: a later run that
        reads their answers from the cache reports how they were produced (``run.progress``)."""
        return self.root / "generation-runs.json"

    @property
    def downloads(self) -> DownloadFolders:
        """The folders the data package may write downloads to."""
        return DownloadFolders(suites=self.data_downloads, entries=self.download_entries,
                               overlays=self.data_overlays)

    @classmethod
    def unsaved(cls, handoff_folder: Path | str) -> Path:
        """Where an xdist controller leaves the generations its cache file could not take, for its workers."""
        return Path(handoff_folder) / cls.UNSAVED_GENERATIONS
