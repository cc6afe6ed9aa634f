"""Fetching upstream files, each checked before it is kept.

``download_listed``: every file ``suite.yaml`` lists, from ``upstream.base_url`` at the pinned commit, kept only when
all arrive with their sha256. ``obtain``: one ``download: true`` entry, fetched from its source into
``<entries>/<suite>/<pin>/<rel>`` (``<pin>``: the declared git blob, else the sha256; one process at a time per pin
folder), checked, and kept only if it matches; a later run reuses it after checking its sha256 through ``HashCache``
against the one recorded when it was verified. A file served as a Git LFS pointer whose git blob is the pinned one is
followed to its LFS media URL and the object checked against the pointer. A failure is a ``FetchFailure`` saying
what went wrong at which URL.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from ..contract.definition import SuiteDefinition
from .entries import DownloadEntry, judge
from .hashes import HashCache, file_digests, file_sha256
from .lfs import LfsPointer, lfs_media_url, parse_lfs_pointer, pointer_in_file

DOWNLOAD_TIMEOUT_S = 20
NO_DOWNLOAD_ENV = "TOOLBENCH_NO_DOWNLOAD"
_RECORD = ".toolbench-download.json"  # in a pin folder: rel -> what was verified when it was fetched


class FetchFailure(Exception):
    """A download entry that could not be fetched and verified: what went wrong, at which URL.

    ``kind``: "refused" (downloads turned off), "mismatch" (fetched, wrong checksum, discarded), "fetch" (network,
    HTTP, storage)."""

    def __init__(self, url: str, what: str, kind: str = "fetch"):
        super().__init__(what)
        self.url = url
        self.what = what
        self.kind = kind


def downloads_allowed(allow_download: bool) -> bool:
    return allow_download and not os.environ.get(NO_DOWNLOAD_ENV)


def download_listed(target: Path, definition: SuiteDefinition) -> bool:
    """Fetch every listed file; keep nothing unless all arrive with the right checksum."""
    base = definition.upstream["base_url"].rstrip("/") + "/"
    if os.environ.get(NO_DOWNLOAD_ENV):
        return False
    staging = Path(tempfile.mkdtemp(prefix="toolbench-dl-"))
    try:
        for rel, (digest, source) in definition.data_files.items():
            dest = staging / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            with urllib.request.urlopen(base + source, timeout=DOWNLOAD_TIMEOUT_S) as response:
                dest.write_bytes(response.read())
            if file_sha256(dest) != digest:
                return False
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
        return True
    except (urllib.error.URLError, OSError, TimeoutError):
        return False
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def _fetch(url: str, dest: Path) -> tuple[str, str, int]:
    """Write what ``url`` serves to ``dest``; (sha256, git blob id, size). Raises ``FetchFailure``."""
    request = urllib.request.Request(url, headers={"User-Agent": "pytest-toolbench"})
    try:
        with urllib.request.urlopen(request, timeout=DOWNLOAD_TIMEOUT_S) as response, dest.open("wb") as out:
            for block in iter(lambda: response.read(1 << 20), b""):
                out.write(block)
    except urllib.error.HTTPError as error:
        raise FetchFailure(url, f"HTTP error {error.code} {error.reason}") from None
    except urllib.error.URLError as error:
        raise FetchFailure(url, f"no connection ({error.reason})") from None
    except TimeoutError:
        raise FetchFailure(url, f"no answer within {DOWNLOAD_TIMEOUT_S} s") from None
    except ValueError as error:
        raise FetchFailure(url, f"not a URL that can be fetched ({error})") from None
    except OSError as error:
        raise FetchFailure(url, f"{type(error).__name__}: {error}") from None
    sha, blob = file_digests(dest)
    return sha, blob, dest.stat().st_size


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """One process at a time fetches into ``folder`` (xdist workers start together); no-op without fcntl."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    with open(folder / ".lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _pin_folder(entries_root: Path, definition: SuiteDefinition, entry: DownloadEntry) -> Path:
    return entries_root / definition.name / entry.pin


def _records(folder: Path) -> dict[str, Any]:
    try:
        document = json.loads((folder / _RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return document if isinstance(document, dict) else {}


def _cached(entry: DownloadEntry, folder: Path, hashes: HashCache) -> tuple[Path, str, LfsPointer | None] | None:
    """The verified copy from an earlier run: its sha256 (through ``HashCache``) is still the one recorded when it
    was fetched and verified against the entry's pin (the folder's name)."""
    record = _records(folder).get(entry.rel)
    path = folder / entry.rel
    if not isinstance(record, dict) or not isinstance(record.get("sha256"), str):
        return None
    sha = hashes.sha256(path)
    if sha is None or sha != record["sha256"] or (entry.sha256 and sha != entry.sha256):
        return None
    pointer = parse_lfs_pointer(record["lfs_pointer"].encode("ascii")) \
        if isinstance(record.get("lfs_pointer"), str) else None
    return path, sha, pointer


def _placeholder(pin: str | None) -> bool:
    return bool(pin) and set(pin) == {"0"}


def obtain(entry: DownloadEntry, definition: SuiteDefinition, entries_root: Path, allowed: bool,
           hashes: HashCache) -> tuple[Path, str, LfsPointer | None, bool]:
    """The entry's verified copy in the download cache: (path, sha256, LFS pointer or None, fetched now).

    Raises ``FetchFailure`` when it is not cached and cannot be fetched and verified; a wrong download is deleted.
    """
    if _placeholder(entry.sha256) and (not entry.git_blob or _placeholder(entry.git_blob)):
        # A suite whose upstream publishes no digest says so with zeros: nothing fetched could be verified.
        raise FetchFailure(entry.url or entry.source, "suite.yaml has only a placeholder checksum for it (no published "
                                                      "digest yet): save it by hand and run with "
                                                      "--toolbench-data-unverified, which records it as UNVERIFIED",
                           kind="refused")
    folder = _pin_folder(entries_root, definition, entry)
    hit = _cached(entry, folder, hashes)
    if hit is not None:
        return (*hit, False)
    if not entry.url:
        raise FetchFailure(entry.source, "no URL: the source is a relative path and suite.yaml gives no "
                                         "upstream.base_url")
    if not allowed:
        raise FetchFailure(entry.url, f"downloads are turned off (--toolbench-no-download or {NO_DOWNLOAD_ENV})",
                           "refused")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise FetchFailure(entry.url, f"the download cache {folder} cannot be written ({error})") from None
    with _locked(folder):
        hit = _cached(entry, folder, hashes)  # another process may have fetched it meanwhile
        if hit is not None:
            return (*hit, False)
        part = folder / f".{Path(entry.rel).name}.{os.getpid()}.part"
        try:
            sha, blob, size = _fetch(entry.url, part)
            pointer = pointer_in_file(part)
            if pointer is not None and not (blob == entry.git_blob or pointer.oid == entry.sha256):
                raise FetchFailure(entry.url, f"the file served is a Git LFS pointer with git blob {blob} (for an "
                                              f"object with sha256 {pointer.oid}), not the {entry.expected} pinned",
                                   "mismatch")
            if pointer is not None:
                media = lfs_media_url(entry.url)
                if media is None:
                    raise FetchFailure(entry.url, "the file served is a Git LFS pointer, and no LFS media URL is known "
                                                  "for this host (LFS_MEDIA knows GitHub's raw URLs)")
                sha, blob, size = _fetch(media, part)
                if sha != pointer.oid or size != pointer.size:
                    raise FetchFailure(media, f"the Git LFS object downloaded has sha256 {sha} ({size} bytes), not the "
                                              f"sha256 {pointer.oid} ({pointer.size} bytes) of its pointer (git blob "
                                              f"{entry.git_blob or '-'}); expected {entry.expected}", "mismatch")
                if entry.sha256 and sha != entry.sha256:
                    raise FetchFailure(media, f"the Git LFS object downloaded has sha256 {sha}, not the sha256 "
                                              f"{entry.sha256} pinned", "mismatch")
            else:
                verdict, got = judge(entry, sha, size, lambda: blob, None)
                if not verdict:
                    raise FetchFailure(entry.url, f"the file downloaded has {got}, not the {entry.expected} pinned",
                                       "mismatch")
            final = folder / entry.rel
            final.parent.mkdir(parents=True, exist_ok=True)
            os.replace(part, final)
            hashes.remember(final, sha)
            hashes.remember_blob(sha, blob)
            records = _records(folder)
            records[entry.rel] = {"url": entry.url, "sha256": sha, "size": size, "git_blob": blob,
                                  "lfs_pointer": pointer.text if pointer else None}
            tmp = folder / f"{_RECORD}.{os.getpid()}.tmp"
            tmp.write_text(json.dumps(records, indent=1, sort_keys=True), encoding="utf-8")
            os.replace(tmp, folder / _RECORD)
            return final, sha, pointer, True
        except OSError as error:
            raise FetchFailure(entry.url, f"the download could not be stored in {folder} ({error})") from None
        finally:
            part.unlink(missing_ok=True)
