"""Where a suite's data come from (``resolve``): a given folder, a verified download at a pinned commit, or the
shipped samples.

The order: ``--toolbench-data``/ini/``TOOLBENCH_DATA``; a previous verified download in the cache; a fresh download
from the upstream repository at the commit pinned in ``suite.yaml`` (each file checked against its sha256); and only
then the small samples shipped with the suite, which the run header and summary flag loudly.

With ``download: true`` entries (files that may not be redistributed, not expected in a user's data folder): when a
data folder is in use and such a file is missing there, it is fetched (``downloads.obtain``) and the scorer reads an
overlay (``overlay.build_overlay``) of the user's folder plus the downloaded files. A download entry present in the
user's folder is checked by ``verification.verify`` instead. A missing file that cannot be fetched (downloads turned
off, no network, HTTP error) makes the suite run on its samples with the reason and where to put the file by hand;
one fetched with the wrong checksum is one ``DataError`` naming the file, the URL, the expected and the received
checksum. Without any data folder, a suite is downloaded whole (listed files from ``base_url``, download entries
from their sources) when it can be; else the shipped samples are used, as for every suite, with the loud notice
(and the reason).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..contract.definition import SuiteDefinition
from ..contract.errors import DataError
from .downloads import NO_DOWNLOAD_ENV, FetchFailure, download_listed, downloads_allowed, obtain
from .entries import DownloadEntry, download_entries
from .hashes import HashCache, manifest_sha256
from .overlay import build_overlay
from .source import DataSource, DownloadFolders


def resolve(definition: SuiteDefinition, data_dir: str | None, origin: str, folders: DownloadFolders,
            allow_download: bool, hashes: HashCache | None = None) -> DataSource:
    """Where the data come from; a folder is returned unchecked (``verify`` checks it), a download verified.

    With download entries, a folder lacking some of them becomes an overlay with their verified copies (a
    ``DataError`` when one cannot be had); without a folder, the whole suite is downloaded or the samples used.
    Whole suites are downloaded to ``folders.suites``, download entries to ``folders.entries``, overlays built in
    ``folders.overlays``."""
    hashes = hashes or HashCache(None)
    entries = download_entries(definition)
    if data_dir:
        folder = Path(data_dir) / definition.data_folder
        if folder.is_dir():
            source = DataSource(folder, "folder", f"{folder} (from {origin})")
            if entries:
                source = _complete(source, definition, entries, Path(data_dir), origin, folders, allow_download,
                                   hashes)
            return source
    if entries:
        return _download_whole(definition, entries, data_dir, folders, allow_download, hashes)
    upstream = definition.upstream
    if definition.data_files and upstream.get("base_url"):
        target = folders.suites / definition.name / upstream["commit"]
        listed = manifest_sha256({rel: digest for rel, (digest, _) in definition.data_files.items()})
        if _verified(target, definition, hashes):
            return DataSource(target, "download", f"{upstream['repository']}@{upstream['commit'][:12]} (cached)",
                              data_sha256=listed)
        if allow_download and download_listed(target, definition):
            return DataSource(target, "download", f"{upstream['repository']}@{upstream['commit'][:12]} (downloaded)",
                              data_sha256=listed)
    reason = "no data folder given" if not data_dir else f"{data_dir} has no '{definition.data_folder}' folder"
    return DataSource(definition.samples_dir, "samples",
                      f"{definition.samples_dir}: SHIPPED SAMPLES ONLY ({reason}; download unavailable)"
                      " - not the benchmark's numbers")


def _verified(target: Path, definition: SuiteDefinition, hashes: HashCache) -> bool:
    return target.is_dir() and all(hashes.sha256(target / rel) == digest
                                   for rel, (digest, _) in definition.data_files.items())


def _fetch_error(definition: SuiteDefinition, entry: DownloadEntry, failure: FetchFailure, data_dir: Path,
                 origin: str, others: list[DownloadEntry]) -> DataError:
    hand = data_dir / definition.data_folder / entry.rel
    if failure.kind == "refused":
        what = (f"missing, and {failure.what}: suite '{definition.name}' fetches it from {failure.url} "
                f"(expected {entry.expected})")
    elif failure.kind == "mismatch":
        what = (f"missing, and the download from {failure.url} was discarded: {failure.what} in suite.yaml of "
                f"suite '{definition.name}'")
    else:
        what = (f"missing, and downloading it from {failure.url} failed: {failure.what} (expected "
                f"{entry.expected}, pinned in suite.yaml of suite '{definition.name}')")
    more = ""
    if others:
        more = f" (not tried: {', '.join(e.rel for e in others)}, missing too)"
    given = f"--toolbench-data={data_dir}" + (f", here from {origin}" if origin and origin != "--toolbench-data"
                                               else "")
    return DataError(hand, f"{what}{more}. To supply it by hand, save the file as {hand} (DIR/"
                           f"{definition.data_folder}/{entry.rel} with {given})")


def _complete(source: DataSource, definition: SuiteDefinition, entries: list[DownloadEntry], data_dir: Path,
              origin: str, folders: DownloadFolders, allow_download: bool, hashes: HashCache) -> DataSource:
    """A user's data folder plus the download entries it lacks (fetched or cached), as an overlay folder; the
    shipped samples, with the reason and the hand-supply path, when one cannot be fetched; a ``DataError`` when one
    was fetched with the wrong checksum."""
    allowed = downloads_allowed(allow_download)
    folder = source.path
    provided: dict[str, Path] = {}
    pointers: list[tuple[str, str, int]] = []
    unsettled: list[tuple[str, str]] = []
    fetched = []
    missing = [entry for entry in entries if not (folder / entry.rel).exists()]
    for entry in entries:
        if entry in missing:
            try:
                path, _, pointer, now = obtain(entry, definition, folders.entries, allowed, hashes)
            except FetchFailure as failure:
                later = missing[missing.index(entry) + 1:]
                error = _fetch_error(definition, entry, failure, data_dir, origin, later)
                if failure.kind == "mismatch":
                    raise error from None  # upstream served something else: never scored, never kept
                # Unreachable (no network, an HTTP error, downloads off): this suite runs on its shipped samples,
                # saying why and how to supply the file, instead of stopping every other suite of the run.
                return DataSource(definition.samples_dir, "samples",
                                  f"{definition.samples_dir}: SHIPPED SAMPLES ONLY ({error}) - not the benchmark's "
                                  "numbers")
            provided[entry.rel] = path
            if now:
                fetched.append(entry.rel)
        else:
            # Present: ``verify`` checks it. Content pinned only by its LFS pointer's git blob needs that pointer.
            user = folder / entry.rel
            if not entry.git_blob or entry.sha256 or hashes.git_blob(user) == entry.git_blob:
                continue
            try:
                _, _, pointer, _ = obtain(entry, definition, folders.entries, allowed, hashes)
            except FetchFailure as failure:
                unsettled.append((entry.rel, f"{failure.url}: {failure.what}"))
                continue
            if pointer is None:  # upstream serves the pinned blob itself: the present file simply differs
                unsettled.append((entry.rel, ""))
        if pointer is not None:
            pointers.append((entry.rel, pointer.oid, pointer.size))
    source = replace(source, lfs_pointers=tuple(pointers), unsettled=tuple(unsettled))
    if not provided:
        return source
    overlay = build_overlay(folder, provided, folders.overlays, definition.name)
    how = ", ".join(f"{rel} ({'downloaded' if rel in fetched else 'cached'})" for rel in provided)
    return replace(source, path=overlay, description=f"{source.description} + {how} from "
                                                     f"{folders.entries / definition.name}",
                   downloaded=tuple(provided), given_folder=str(folder))


def _download_whole(definition: SuiteDefinition, entries: list[DownloadEntry], data_dir: str | None,
                    folders: DownloadFolders, allow_download: bool, hashes: HashCache) -> DataSource:
    """No data folder: the listed files from ``base_url`` (as ``resolve`` does for every suite) and the download
    entries from their sources, all verified; when that fails, the shipped samples, saying why."""
    upstream = definition.upstream
    allowed = downloads_allowed(allow_download)
    pins = manifest_sha256({entry.rel: entry.pin for entry in entries})
    target = folders.suites / definition.name / upstream.get("commit", f"pins-{pins[:16]}")
    why = ""
    fetched = False
    shared = {rel: digest for rel, (digest, _) in definition.data_files.items()}
    if shared and not upstream.get("base_url"):
        why = "suite.yaml gives no upstream.base_url for its listed files"
    elif shared and not _verified(target, definition, hashes):
        if not allowed:
            why = f"downloads are turned off (--toolbench-no-download or {NO_DOWNLOAD_ENV})"
        elif not download_listed(target, definition):
            why = f"the listed files could not be fetched and verified from {upstream['base_url']}"
        else:
            fetched = True
    provided: dict[str, Path] = {}
    digests = dict(shared)
    pointers = []
    for entry in entries if not why else ():
        try:
            path, sha, pointer, now = obtain(entry, definition, folders.entries, allowed, hashes)
        except FetchFailure as failure:
            why = f"{entry.rel}: {failure.what} ({failure.url})"
            break
        provided[entry.rel], digests[entry.rel] = path, sha
        fetched |= now
        if pointer is not None:
            pointers.append((entry.rel, pointer.oid, pointer.size))
    if not why:
        overlay = build_overlay(target, provided, folders.overlays, definition.name)
        label = upstream.get("repository", definition.name) + (f"@{upstream['commit'][:12]}"
                                                               if upstream.get("commit") else "")
        return DataSource(overlay, "download", f"{label} ({'downloaded' if fetched else 'cached'}; "
                                               f"{len(entries)} file(s) from their own sources)",
                          data_sha256=manifest_sha256(digests), downloaded=tuple(provided), given_folder=str(target),
                          lfs_pointers=tuple(pointers))
    reason = "no data folder given" if not data_dir else f"{data_dir} has no '{definition.data_folder}' folder"
    return DataSource(definition.samples_dir, "samples",
                      f"{definition.samples_dir}: SHIPPED SAMPLES ONLY ({reason}; download unavailable: {why})"
                      " - not the benchmark's numbers")
