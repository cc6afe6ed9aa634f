"""sha256 and git blob ids of files, one digest for a set of files (``manifest_sha256``), and ``HashCache``, which
remembers each file's digest by (real path, size, mtime, ctime, inode) in a small JSON file, so that an unchanged
file is hashed once, not on every run and in every xdist worker."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any, Mapping


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def file_digests(path: Path) -> tuple[str, str]:
    """(sha256, git blob id) of a file, in one reading."""
    with path.open("rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        sha256, sha1 = hashlib.sha256(), hashlib.sha1(b"blob %d\0" % size)
        read = 0
        for block in iter(lambda: handle.read(1 << 20), b""):
            sha256.update(block)
            sha1.update(block)
            read += len(block)
    if read != size:  # changed while being read: hash what is there now
        return file_digests(path)
    return sha256.hexdigest(), sha1.hexdigest()


def git_blob_of(content: bytes) -> str:
    """What ``git hash-object`` prints for these bytes: sha1 of ``b"blob <size>\\0" + content``."""
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


def manifest_sha256(digests: Mapping[str, str]) -> str:
    """One digest for a set of files: sha256 of ``"<sha256>  <path>\\n"`` lines sorted by path (what
    ``sha256sum`` prints), so ``(cd DIR && sha256sum FILES | sort -k2) | sha256sum`` reproduces it (LC_ALL=C)."""
    text = "".join(f"{digest}  {rel}\n" for rel, digest in sorted(digests.items()))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class HashCache:
    """sha256 of files, remembered by (real path, size, mtime_ns, ctime_ns, inode) in a small JSON file.

    A file whose size, times or inode changed is hashed again; one that did not is never re-read. Several
    processes (xdist workers) may share the file: each merges its new digests into what is on disk and replaces it
    atomically, so the worst a race can do is make a later run hash a file once more. ``path=None``: memory only.

    ``git_blob`` (download entries pinned by git blob): the git blob id of a file, remembered by content (its sha256,
    under ``git_blobs`` in the same file, written only once one is known), so a file is read for it once.
    """

    VERSION = 1
    PRUNE_ABOVE = 5000  # entries; above it, those whose file is gone are dropped when saving

    def __init__(self, path: Path | None):
        self.path = path
        self.hashed = 0  # files this object had to read (cache misses)
        self._entries: dict[str, list[Any]] | None = None
        self._new: dict[str, list[Any]] = {}
        self._blobs: dict[str, str] | None = None  # sha256 -> git blob id
        self._new_blobs: dict[str, str] = {}

    def sha256(self, file: Path | str) -> str | None:
        """The file's sha256, or None when it is missing or not a regular file."""
        real = os.path.realpath(file)
        try:
            info = os.stat(real)
        except OSError:
            return None
        if not stat.S_ISREG(info.st_mode):
            return None
        key = [info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino]
        entry = self._load().get(real)
        if isinstance(entry, list) and len(entry) == 5 and entry[:4] == key:
            return entry[4]
        digest = file_sha256(Path(real))
        self.hashed += 1
        self._entries[real] = self._new[real] = [*key, digest]  # type: ignore[index]
        return digest

    def remember(self, file: Path | str, digest: str) -> None:
        """Record the sha256 of a file this process has just written and hashed while writing."""
        real = os.path.realpath(file)
        info = os.stat(real)
        self._load()[real] = self._new[real] = [info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, digest]

    def git_blob(self, file: Path | str) -> str | None:
        """The file's git blob id (``git hash-object``), or None when it is missing or not a regular file."""
        digest = self.sha256(file)
        if digest is None:
            return None
        blobs = self._load_blobs()
        if digest not in blobs:
            sha, blob = file_digests(Path(os.path.realpath(file)))
            if sha != digest:  # changed since it was hashed: do not tie this blob id to that content
                return blob
            self.remember_blob(sha, blob)
        return blobs[digest]

    def remember_blob(self, sha256: str, blob: str) -> None:
        self._load_blobs()[sha256] = self._new_blobs[sha256] = blob

    def save(self) -> None:
        """Write new digests (merged with what another process may have written meanwhile); never raises."""
        if self.path is None or not (self._new or self._new_blobs):
            return
        try:
            on_disk = self._document()
            merged = on_disk.get("files") if isinstance(on_disk.get("files"), dict) else {}
            merged.update(self._new)
            if len(merged) > self.PRUNE_ABOVE:
                merged = {path: entry for path, entry in merged.items() if os.path.exists(path)}
            document: dict[str, Any] = {"version": self.VERSION, "files": merged}
            blobs = {**(on_disk.get("git_blobs") if isinstance(on_disk.get("git_blobs"), dict) else {}),
                     **self._new_blobs}
            if len(blobs) > self.PRUNE_ABOVE:  # keep those of contents still on record
                known = {entry[-1] for entry in merged.values() if isinstance(entry, list) and entry}
                blobs = {sha: blob for sha, blob in blobs.items() if sha in known}
            if blobs:
                document["git_blobs"] = blobs
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(document), encoding="utf-8")
            os.replace(tmp, self.path)
            self._new.clear()
            self._new_blobs.clear()
        except OSError:
            pass  # a read-only cache folder costs re-hashing next time, nothing else

    def _load(self) -> dict[str, list[Any]]:
        if self._entries is None:
            self._entries = self._read()
        return self._entries

    def _load_blobs(self) -> dict[str, str]:
        if self._blobs is None:
            self._blobs = self._read_blobs()
        return self._blobs

    def _document(self) -> dict[str, Any]:
        if self.path is None:
            return {}
        try:
            document = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(document, dict) or document.get("version") != self.VERSION:
            return {}
        return document

    def _read(self) -> dict[str, list[Any]]:
        files = self._document().get("files")
        return files if isinstance(files, dict) else {}

    def _read_blobs(self) -> dict[str, str]:
        blobs = self._document().get("git_blobs")
        return blobs if isinstance(blobs, dict) else {}
