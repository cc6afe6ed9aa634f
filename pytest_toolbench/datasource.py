"""Where a suite's data comes from: a given folder, a verified download at a pinned commit, or the shipped samples.

The resolution order is: ``--toolbench-data``/ini/``TOOLBENCH_DATA``; a previous verified download in the cache;
a fresh download from the upstream repository at the commit pinned in ``suite.yaml`` (each file checked against its
sha256); and only then the small samples shipped with the suite, which the run header and summary flag loudly.

A local folder is checked against the sha256 sums of ``suite.yaml`` (``data.files``): a file that differs or is
missing is one ``DataError`` naming it, unless ``--toolbench-data-unverified`` (then the source records which files
differ). Every source carries ``data_sha256``, one digest of the data a suite's figures rest on: the sha256 of the
``sha256sum``-style manifest (``"<sha256>  <relative path>\\n"`` per file, sorted by path) of its listed files plus
any file the loader read that ``data.files`` does not list (reported as ``unlisted``); for the samples, of every
sample file. Digests are remembered by (real path, size, mtime, ctime, inode) in ``<cache>/data-sha256.json``
(``HashCache``), so an unchanged file is hashed once, not on every run and in every xdist worker.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
import tempfile
import urllib.error
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from .definition import SuiteDefinition
from .errors import DataError

DOWNLOAD_TIMEOUT_S = 20
UNVERIFIED_FIX = "point --toolbench-data at an unmodified copy, or pass --toolbench-data-unverified"


@dataclass(frozen=True)
class DataSource:
    path: Path
    kind: str  # "folder", "download", "samples"
    description: str

    @property
    def is_sample(self) -> bool:
        return self.kind == "samples"

    info: tuple[tuple[str, str], ...] = ()  # the benchmark's own notes on this data (run_info), e.g. prompt variant
    data_sha256: str = ""  # one digest of the files the figures rest on (see the module docstring); "" if none
    unverified: tuple[str, ...] = ()  # listed files that differ from (or are missing against) suite.yaml's sums
    unlisted: tuple[str, ...] = ()  # files the loader read that suite.yaml's data.files does not list

    def to_json(self) -> dict[str, Any]:
        return {"path": str(self.path), "kind": self.kind, "description": self.description, "info": dict(self.info),
                "data_sha256": self.data_sha256, "unverified": list(self.unverified),
                "unlisted": list(self.unlisted)}


def resolve(definition: SuiteDefinition, data_dir: str | None, origin: str, download_root: Path,
            allow_download: bool, hashes: HashCache | None = None) -> DataSource:
    """Where the data come from; a folder is returned unchecked (``verify`` checks it), a download verified."""
    hashes = hashes or HashCache(None)
    if data_dir:
        folder = Path(data_dir) / definition.data_folder
        if folder.is_dir():
            return DataSource(folder, "folder", f"{folder} (from {origin})")
    upstream = definition.upstream
    if definition.data_files and upstream.get("base_url"):
        target = download_root / definition.name / upstream["commit"]
        listed = manifest_sha256({rel: digest for rel, (digest, _) in definition.data_files.items()})
        if _verified(target, definition, hashes):
            return DataSource(target, "download", f"{upstream['repository']}@{upstream['commit'][:12]} (cached)",
                              data_sha256=listed)
        if allow_download and _download(target, definition):
            return DataSource(target, "download", f"{upstream['repository']}@{upstream['commit'][:12]} (downloaded)",
                              data_sha256=listed)
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


def _verified(target: Path, definition: SuiteDefinition, hashes: HashCache) -> bool:
    return target.is_dir() and all(hashes.sha256(target / rel) == digest
                                   for rel, (digest, _) in definition.data_files.items())


def manifest_sha256(digests: Mapping[str, str]) -> str:
    """One digest for a set of files: sha256 of ``"<sha256>  <path>\\n"`` lines sorted by path (what
    ``sha256sum`` prints), so ``(cd DIR && sha256sum FILES | sort -k2) | sha256sum`` reproduces it (LC_ALL=C)."""
    text = "".join(f"{digest}  {rel}\n" for rel, digest in sorted(digests.items()))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# -- checking a local folder against suite.yaml ----------------------------------------------------------------
def verify(source: DataSource, definition: SuiteDefinition, hashes: HashCache,
           allow_unverified: bool) -> tuple[DataSource, dict[str, str]]:
    """Check a ``folder`` source's listed files against the sums of ``suite.yaml``.

    Returns the source (with ``unverified`` set when ``allow_unverified`` let differences through) and the actual
    digest of each listed file present. A difference without ``allow_unverified`` raises one ``DataError`` naming
    the first differing file, both digests and the fix. Other kinds pass through: a download is verified when it
    is fetched or reused, and the samples are not the benchmark's data.
    """
    if source.kind != "folder":
        return source, {}
    digests: dict[str, str] = {}
    bad: list[str] = []
    for rel, (expected, _) in sorted(definition.data_files.items()):
        actual = hashes.sha256(source.path / rel)
        if actual is not None:
            digests[rel] = actual
        if actual != expected:
            bad.append(rel)
    if not bad:
        return source, digests
    if not allow_unverified:
        raise mismatch_error(source.path, definition, digests, bad)
    note = (f"; UNVERIFIED: {len(bad)} of {len(definition.data_files)} files differ from the sha256 sums of "
            f"suite.yaml (--toolbench-data-unverified)")
    return replace(source, description=source.description + note, unverified=tuple(bad)), digests


def mismatch_error(folder: Path, definition: SuiteDefinition, digests: Mapping[str, str],
                   bad: list[str]) -> DataError:
    first = bad[0]
    expected = definition.data_files[first][0]
    actual = digests.get(first)
    what = (f"sha256 {actual[:16]}... differs from {expected[:16]}... in suite.yaml of suite '{definition.name}'"
            if actual is not None else f"missing, but listed in suite.yaml of suite '{definition.name}'")
    more = ""
    if len(bad) > 1:
        shown = ", ".join(bad[1:4]) + (", ..." if len(bad) > 4 else "")
        more = f" ({len(bad) - 1} more listed files differ: {shown})"
    return DataError(folder / first, f"{what}{more}: {UNVERIFIED_FIX}")


def seal(source: DataSource, definition: SuiteDefinition, digests: Mapping[str, str], read: Iterable[str],
         hashes: HashCache) -> DataSource:
    """After loading: name the files read but not listed, and set ``data_sha256``."""
    if source.kind == "samples":
        files = {}
        root = source.path
        if root.is_dir():
            for path in sorted(root.rglob("*")):
                rel = path.relative_to(root)
                if path.is_file() and not any(part.startswith(".") or part == "__pycache__" for part in rel.parts):
                    digest = hashes.sha256(path)
                    if digest is not None:
                        files[rel.as_posix()] = digest
        return replace(source, data_sha256=manifest_sha256(files) if files else "")
    if source.kind != "folder":
        return source
    unlisted: dict[str, str] = {}
    root = os.path.realpath(source.path)
    listed = {os.path.realpath(source.path / rel) for rel in definition.data_files}
    for opened in dict.fromkeys(read):
        real = os.path.realpath(opened)
        if real in listed or not real.startswith(root.rstrip(os.sep) + os.sep):
            continue
        rel = Path(os.path.relpath(real, root)).as_posix()
        if rel in unlisted:
            continue
        digest = hashes.sha256(Path(real))
        if digest is not None:
            unlisted[rel] = digest
    files = {**digests, **unlisted}
    return replace(source, data_sha256=manifest_sha256(files) if files else "", unlisted=tuple(sorted(unlisted)))


# -- which files a loader reads --------------------------------------------------------------------------------
_reads: list[str] | None = None
_audit_installed = False


def _audit(event: str, args: tuple[Any, ...]) -> None:
    # Runs for every audit event of the process (hooks cannot be removed): return at once unless recording.
    if _reads is None or event != "open":
        return
    try:
        target = args[0]
        if isinstance(target, (str, bytes, os.PathLike)):
            _reads.append(os.fsdecode(target))
    except Exception:  # an audit hook must never break the operation it watches
        pass


@contextmanager
def recording_reads(enabled: bool = True) -> Iterator[list[str]]:
    """Record the paths this process opens inside the block (a ``sys.addaudithook`` hook, installed once, on the
    first enabled use: from then on every audit event of the process costs one early-returning call, ~0.2 us)."""
    global _reads, _audit_installed
    if not enabled:
        yield []
        return
    if not _audit_installed:
        sys.addaudithook(_audit)
        _audit_installed = True
    previous, _reads = _reads, []
    try:
        yield _reads
    finally:
        _reads = previous


# -- the digest cache ------------------------------------------------------------------------------------------
class HashCache:
    """sha256 of files, remembered by (real path, size, mtime_ns, ctime_ns, inode) in a small JSON file.

    A file whose size, times or inode changed is hashed again; one that did not is never re-read. Several
    processes (xdist workers) may share the file: each merges its new digests into what is on disk and replaces it
    atomically, so the worst a race can do is make a later run hash a file once more. ``path=None``: memory only.
    """

    VERSION = 1
    PRUNE_ABOVE = 5000  # entries; above it, those whose file is gone are dropped when saving

    def __init__(self, path: Path | None):
        self.path = path
        self.hashed = 0  # files this object had to read (cache misses)
        self._entries: dict[str, list[Any]] | None = None
        self._new: dict[str, list[Any]] = {}

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
        digest = _sha256(Path(real))
        self.hashed += 1
        self._entries[real] = self._new[real] = [*key, digest]  # type: ignore[index]
        return digest

    def save(self) -> None:
        """Write new digests (merged with what another process may have written meanwhile); never raises."""
        if self.path is None or not self._new:
            return
        try:
            merged = self._read()
            merged.update(self._new)
            if len(merged) > self.PRUNE_ABOVE:
                merged = {path: entry for path, entry in merged.items() if os.path.exists(path)}
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps({"version": self.VERSION, "files": merged}), encoding="utf-8")
            os.replace(tmp, self.path)
            self._new.clear()
        except OSError:
            pass  # a read-only cache folder costs re-hashing next time, nothing else

    def _load(self) -> dict[str, list[Any]]:
        if self._entries is None:
            self._entries = self._read()
        return self._entries

    def _read(self) -> dict[str, list[Any]]:
        if self.path is None:
            return {}
        try:
            document = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(document, dict) or document.get("version") != self.VERSION:
            return {}
        files = document.get("files")
        return files if isinstance(files, dict) else {}


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
