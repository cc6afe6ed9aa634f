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

Files that may not be redistributed are declared ``{git_blob and/or sha256, source, download: true}`` in
``data.files`` (``download_entries``): they are not expected in a user's data folder. When a data folder is in use and
such a file is missing there, it is fetched from ``source`` (an http(s) URL, or a path relative to
``upstream.base_url``) into ``<cache>/downloads/<suite>/<pin>/<rel>`` (``<pin>``: the declared git blob, else the
sha256), checked (``git_blob``: the sha1 of ``b"blob <size>\0" + content``, what ``git hash-object`` prints) and
kept only if it matches; a later run reuses it after checking its sha256 through ``HashCache`` against the one
recorded when it was verified. A file served as a Git LFS pointer whose git blob is the pinned one is followed to its
LFS media URL (``LFS_MEDIA``) and the object checked against the pointer's ``oid sha256`` and ``size``. The scorer
then reads ``<cache>/data-overlay/<suite>-<digest>/``: a mirror of the user's folder (real folders, a symlink per
file) plus links to the downloaded files, so it finds every file at ``data_dir/<rel>``. A download entry present in
the user's folder is checked the same way instead (``verify``). A missing file that cannot be fetched (downloads
turned off, no network, HTTP error, checksum mismatch) is one ``DataError`` naming the file, the URL, the expected
(and the received) checksum and where to put the file by hand. Without any data folder, a suite is downloaded whole
(listed files from ``base_url``, download entries from their sources) when it can be; else the shipped samples are
used, as for every suite, with the loud notice (and the reason).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import sys
import tempfile
import urllib.error
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping

from ..contract.definition import SuiteDefinition
from ..contract.errors import DataError

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


def resolve(definition: SuiteDefinition, data_dir: str | None, origin: str, download_root: Path,
            allow_download: bool, hashes: HashCache | None = None) -> DataSource:
    """Where the data come from; a folder is returned unchecked (``verify`` checks it), a download verified.

    With download entries, a folder lacking some of them becomes an overlay with their verified copies (a
    ``DataError`` when one cannot be had); without a folder, the whole suite is downloaded or the samples used.
    ``download_root`` is ``<cache>/data``; download entries go to ``<cache>/downloads``, overlays to
    ``<cache>/data-overlay``."""
    hashes = hashes or HashCache(None)
    entries = download_entries(definition)
    if data_dir:
        folder = Path(data_dir) / definition.data_folder
        if folder.is_dir():
            source = DataSource(folder, "folder", f"{folder} (from {origin})")
            if entries:
                source = _complete(source, definition, entries, Path(data_dir), origin, download_root.parent,
                                   allow_download, hashes)
            return source
    if entries:
        return _download_whole(definition, entries, data_dir, download_root, allow_download, hashes)
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

    Download entries present at ``source.path`` are checked by their git blob and/or sha256 (their digests join the
    others); missing ones are left to ``resolve``. Content pinned only by the git blob of its Git LFS pointer is
    checked against that pointer when ``resolve`` learned it; before ``resolve`` ran (the run's early check, a
    folder named by the ``pytest_toolbench_data_dir`` hook) it is recorded as UNCHECKED instead of failing.
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
    entries = download_entries(definition)
    problems: dict[str, str] = {}  # download entries present and wrong
    unchecked: list[str] = []  # present, pinned by an LFS pointer's git blob that is not known here
    if entries:
        _verify_entries(source, definition.name, entries, hashes, digests, problems, unchecked)
    if not bad and not problems and not unchecked:
        return source, digests
    folder = Path(source.given_folder) if source.given_folder else source.path
    if not allow_unverified:
        if bad:
            raise mismatch_error(folder, definition, digests, bad)
        if problems:
            first = sorted(problems)[0]
            more = f" ({len(problems) - 1} more download files differ)" if len(problems) > 1 else ""
            raise DataError(folder / first, problems[first] + more)
    differ = bad + sorted(problems)
    note = ""
    if differ:
        note = (f"; UNVERIFIED: {len(differ)} of {len(definition.data_files) + len(entries)} files differ from the "
                f"sha256 sums of suite.yaml (--toolbench-data-unverified)")
    if unchecked:
        note += (f"; UNCHECKED: {', '.join(unchecked)} (suite.yaml pins a Git LFS pointer that could not be "
                 f"fetched to check this content against)")
    return replace(source, description=source.description + note, unverified=tuple(differ + unchecked)), digests


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
    if source.given_folder:
        unlisted = _unlisted_in_overlay(source, definition, read, hashes)
    root = os.path.realpath(source.path)
    listed = {os.path.realpath(source.path / rel) for rel in definition.data_files}
    for opened in dict.fromkeys(read) if not source.given_folder else ():
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
        digest = _sha256(Path(real))
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
            sha, blob = _digests(Path(os.path.realpath(file)))
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


# -- download entries (``download: true``): fetched at run time, verified, cached ------------------------------
NO_DOWNLOAD_ENV = "TOOLBENCH_NO_DOWNLOAD"
LFS_POINTER_MAX = 1024  # bytes; Git LFS pointers are about 130
LFS_VERSION = b"version https://git-lfs.github.com/spec/v1\n"  # a pointer's first line (Git LFS spec v1)
#: Where a Git LFS object is served, from the URL of its pointer: (pattern on that URL, media URL template). GitHub's
#: raw URLs serve the pointer of an LFS file; media.githubusercontent.com serves the object at the same ref and path.
LFS_MEDIA: list[tuple[str, str]] = [
    (r"^https://raw\.githubusercontent\.com/(?P<owner>[^/]+)/(?P<repo>[^/]+)/(?P<ref_path>.+)$",
     "https://media.githubusercontent.com/media/{owner}/{repo}/{ref_path}"),
    (r"^https://github\.com/(?P<owner>[^/]+)/(?P<repo>[^/]+)/raw/(?P<ref_path>.+)$",
     "https://media.githubusercontent.com/media/{owner}/{repo}/{ref_path}"),
]
_RECORD = ".toolbench-download.json"  # in a pin folder: rel -> what was verified when it was fetched


@dataclass(frozen=True)
class DownloadEntry:
    """A ``data.files`` entry with ``download: true``."""

    rel: str
    source: str
    url: str  # "" when source is relative and suite.yaml has no upstream.base_url
    git_blob: str | None
    sha256: str | None

    @property
    def pin(self) -> str:
        return self.git_blob or self.sha256 or ""

    @property
    def expected(self) -> str:
        pins = [f"git blob {self.git_blob}" if self.git_blob else "", f"sha256 {self.sha256}" if self.sha256 else ""]
        return " and ".join(p for p in pins if p)


@dataclass(frozen=True)
class LfsPointer:
    oid: str  # sha256 of the object
    size: int
    text: str


def selected_download(definition: SuiteDefinition, rel: str) -> bool:
    """Whether the run needs the download entry ``rel``: always, unless ``data.selected_by`` makes the entries
    under its folder depend on a suite option listing the files to run (T-Eval's ``files``)."""
    selected_by = definition.raw["data"].get("selected_by")
    if not selected_by:
        return True
    folder = selected_by["folder"].rstrip("/") + "/" if selected_by["folder"] else ""
    if not rel.startswith(folder):
        return True
    chosen = (definition.raw.get("options") or {}).get(selected_by["option"])
    if not isinstance(chosen, (list, tuple)):
        return True
    return rel[len(folder):] in {str(name) for name in chosen}


def download_entries(definition: SuiteDefinition) -> list[DownloadEntry]:
    """The ``download: true`` entries of ``data.files`` the run needs (see :func:`selected_download`), sorted by
    path, with their URL."""
    base = definition.upstream.get("base_url", "")
    entries = []
    for rel, entry in sorted(definition.raw["data"].get("files", {}).items()):
        if not (isinstance(entry, dict) and entry.get("download") is True):
            continue
        if not selected_download(definition, rel):
            continue
        source = entry["source"]
        if re.match(r"^https?://", source):
            url = source
        else:
            url = base.rstrip("/") + "/" + source.lstrip("/") if base else ""
        entries.append(DownloadEntry(rel, source, url, entry.get("git_blob"), entry.get("sha256")))
    return entries


def git_blob_of(content: bytes) -> str:
    """What ``git hash-object`` prints for these bytes: sha1 of ``b"blob <size>\\0" + content``."""
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


def _digests(path: Path) -> tuple[str, str]:
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
        return _digests(path)
    return sha256.hexdigest(), sha1.hexdigest()


def parse_lfs_pointer(data: bytes) -> LfsPointer | None:
    """A Git LFS pointer file (spec v1: ``version``, ``oid sha256:<hex>``, ``size <n>`` lines), else None."""
    if len(data) > LFS_POINTER_MAX or not data.startswith(LFS_VERSION):
        return None
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        return None
    fields = dict(line.split(" ", 1) for line in text.splitlines() if " " in line)
    oid = re.fullmatch(r"sha256:([0-9a-f]{64})", fields.get("oid", ""))
    size = fields.get("size", "")
    if oid is None or not size.isdigit():
        return None
    return LfsPointer(oid.group(1), int(size), text)


def lfs_media_url(pointer_url: str) -> str | None:
    """Where the LFS object of the pointer served at ``pointer_url`` is served (``LFS_MEDIA``), or None."""
    for pattern, template in LFS_MEDIA:
        match = re.match(pattern, pointer_url)
        if match:
            return template.format(**match.groupdict())
    return None


def _pointer_in(path: Path) -> LfsPointer | None:
    try:
        if path.stat().st_size > LFS_POINTER_MAX:
            return None
        return parse_lfs_pointer(path.read_bytes())
    except OSError:
        return None


def _judge(entry: DownloadEntry, sha: str, size: int, blob: Callable[[], str],
           pointer: LfsPointer | None) -> tuple[bool | None, str]:
    """Whether content (its sha256, size and a way to its git blob id) is the entry's: True; False with what it is;
    None when only the Git LFS pointer named by the entry's git blob could tell and it is not known.

    ``sha256``, when declared, pins the content itself. ``git_blob`` pins the content, or the Git LFS pointer of it.
    """
    if entry.sha256 and sha != entry.sha256:
        return False, f"sha256 {sha}"
    if not entry.git_blob:
        return True, ""
    actual = blob()
    if actual == entry.git_blob:
        return True, ""
    if pointer is not None:
        if sha == pointer.oid and size == pointer.size:
            return True, ""
        return False, (f"sha256 {sha} ({size} bytes), not the Git LFS object (sha256 {pointer.oid}, {pointer.size} "
                       f"bytes) that the pointer with git blob {entry.git_blob} names")
    if entry.sha256:
        return True, ""  # the sha256 matched: the git blob is then the LFS pointer's
    return None, f"git blob {actual} (sha256 {sha})"


def _verify_entries(source: DataSource, suite: str, entries: list[DownloadEntry], hashes: HashCache,
                    digests: dict[str, str], problems: dict[str, str], unchecked: list[str]) -> None:
    """``verify`` for download entries present at ``source.path``; missing ones are ``resolve``'s to fetch."""
    pointers = {rel: LfsPointer(oid, size, "") for rel, oid, size in source.lfs_pointers}
    unsettled = dict(source.unsettled)
    downloaded = set(source.downloaded)
    for entry in entries:
        path = source.path / entry.rel
        sha = hashes.sha256(path)
        if sha is None:
            continue
        digests[entry.rel] = sha
        size = os.stat(path).st_size
        verdict, got = _judge(entry, sha, size, lambda: hashes.git_blob(path) or "", pointers.get(entry.rel))
        where = "the downloaded copy" if entry.rel in downloaded else "the file"
        if verdict and entry.git_blob and _pointer_in(path) is not None:
            problems[entry.rel] = (f"{where} is the Git LFS pointer (git blob {entry.git_blob}), not the file it "
                                   f"points to: delete it to have the file downloaded, or save the file itself there")
            continue
        if verdict:
            continue
        if verdict is None:
            if entry.rel not in unsettled:
                unchecked.append(entry.rel)
                continue
            if unsettled[entry.rel]:
                got += (f", and suite.yaml's git blob may name its Git LFS pointer, which could not be fetched to "
                        f"check ({unsettled[entry.rel]})")
        problems[entry.rel] = (f"{where} has {got}, not the {entry.expected} of this `download: true` file in "
                               f"suite.yaml of suite '{suite}' (source {entry.url or entry.source}): delete it to "
                               f"have it downloaded, or {UNVERIFIED_FIX}")


class _Failure(Exception):
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


_downloads_allowed = downloads_allowed


def _fetch(url: str, dest: Path) -> tuple[str, str, int]:
    """Write what ``url`` serves to ``dest``; (sha256, git blob id, size). Raises ``_Failure``."""
    request = urllib.request.Request(url, headers={"User-Agent": "pytest-toolbench"})
    try:
        with urllib.request.urlopen(request, timeout=DOWNLOAD_TIMEOUT_S) as response, dest.open("wb") as out:
            for block in iter(lambda: response.read(1 << 20), b""):
                out.write(block)
    except urllib.error.HTTPError as error:
        raise _Failure(url, f"HTTP error {error.code} {error.reason}") from None
    except urllib.error.URLError as error:
        raise _Failure(url, f"no connection ({error.reason})") from None
    except TimeoutError:
        raise _Failure(url, f"no answer within {DOWNLOAD_TIMEOUT_S} s") from None
    except ValueError as error:
        raise _Failure(url, f"not a URL that can be fetched ({error})") from None
    except OSError as error:
        raise _Failure(url, f"{type(error).__name__}: {error}") from None
    sha, blob = _digests(dest)
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


def _pin_folder(cache_root: Path, definition: SuiteDefinition, entry: DownloadEntry) -> Path:
    return cache_root / "downloads" / definition.name / entry.pin


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


def _obtain(entry: DownloadEntry, definition: SuiteDefinition, cache_root: Path, allowed: bool,
            hashes: HashCache) -> tuple[Path, str, LfsPointer | None, bool]:
    """The entry's verified copy in the download cache: (path, sha256, LFS pointer or None, fetched now).

    Raises ``_Failure`` when it is not cached and cannot be fetched and verified; a wrong download is deleted.
    """
    if _placeholder(entry.sha256) and (not entry.git_blob or _placeholder(entry.git_blob)):
        # A suite whose upstream publishes no digest says so with zeros: nothing fetched could be verified.
        raise _Failure(entry.url or entry.source, "suite.yaml has only a placeholder checksum for it (no published "
                                                  "digest yet): save it by hand and run with "
                                                  "--toolbench-data-unverified, which records it as UNVERIFIED",
                       kind="refused")
    folder = _pin_folder(cache_root, definition, entry)
    hit = _cached(entry, folder, hashes)
    if hit is not None:
        return (*hit, False)
    if not entry.url:
        raise _Failure(entry.source, "no URL: the source is a relative path and suite.yaml gives no "
                                     "upstream.base_url")
    if not allowed:
        raise _Failure(entry.url, f"downloads are turned off (--toolbench-no-download or {NO_DOWNLOAD_ENV})",
                       "refused")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise _Failure(entry.url, f"the download cache {folder} cannot be written ({error})") from None
    with _locked(folder):
        hit = _cached(entry, folder, hashes)  # another process may have fetched it meanwhile
        if hit is not None:
            return (*hit, False)
        part = folder / f".{Path(entry.rel).name}.{os.getpid()}.part"
        try:
            sha, blob, size = _fetch(entry.url, part)
            pointer = _pointer_in(part)
            if pointer is not None and not (blob == entry.git_blob or pointer.oid == entry.sha256):
                raise _Failure(entry.url, f"the file served is a Git LFS pointer with git blob {blob} (for an "
                                          f"object with sha256 {pointer.oid}), not the {entry.expected} pinned",
                               "mismatch")
            if pointer is not None:
                media = lfs_media_url(entry.url)
                if media is None:
                    raise _Failure(entry.url, "the file served is a Git LFS pointer, and no LFS media URL is known "
                                              "for this host (LFS_MEDIA knows GitHub's raw URLs)")
                sha, blob, size = _fetch(media, part)
                if sha != pointer.oid or size != pointer.size:
                    raise _Failure(media, f"the Git LFS object downloaded has sha256 {sha} ({size} bytes), not the "
                                          f"sha256 {pointer.oid} ({pointer.size} bytes) of its pointer (git blob "
                                          f"{entry.git_blob or '-'}); expected {entry.expected}", "mismatch")
                if entry.sha256 and sha != entry.sha256:
                    raise _Failure(media, f"the Git LFS object downloaded has sha256 {sha}, not the sha256 "
                                          f"{entry.sha256} pinned", "mismatch")
            else:
                verdict, got = _judge(entry, sha, size, lambda: blob, None)
                if not verdict:
                    raise _Failure(entry.url, f"the file downloaded has {got}, not the {entry.expected} pinned",
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
            raise _Failure(entry.url, f"the download could not be stored in {folder} ({error})") from None
        finally:
            part.unlink(missing_ok=True)


def _fetch_error(definition: SuiteDefinition, entry: DownloadEntry, failure: _Failure, data_dir: Path,
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
              origin: str, cache_root: Path, allow_download: bool, hashes: HashCache) -> DataSource:
    """A user's data folder plus the download entries it lacks (fetched or cached), as an overlay folder; the
    shipped samples, with the reason and the hand-supply path, when one cannot be fetched; a ``DataError`` when one
    was fetched with the wrong checksum."""
    allowed = _downloads_allowed(allow_download)
    folder = source.path
    provided: dict[str, Path] = {}
    pointers: list[tuple[str, str, int]] = []
    unsettled: list[tuple[str, str]] = []
    fetched = []
    missing = [entry for entry in entries if not (folder / entry.rel).exists()]
    for entry in entries:
        if entry in missing:
            try:
                path, _, pointer, now = _obtain(entry, definition, cache_root, allowed, hashes)
            except _Failure as failure:
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
                _, _, pointer, _ = _obtain(entry, definition, cache_root, allowed, hashes)
            except _Failure as failure:
                unsettled.append((entry.rel, f"{failure.url}: {failure.what}"))
                continue
            if pointer is None:  # upstream serves the pinned blob itself: the present file simply differs
                unsettled.append((entry.rel, ""))
        if pointer is not None:
            pointers.append((entry.rel, pointer.oid, pointer.size))
    source = replace(source, lfs_pointers=tuple(pointers), unsettled=tuple(unsettled))
    if not provided:
        return source
    overlay = _overlay(folder, provided, cache_root / "data-overlay", definition.name)
    how = ", ".join(f"{rel} ({'downloaded' if rel in fetched else 'cached'})" for rel in provided)
    return replace(source, path=overlay, description=f"{source.description} + {how} from "
                                                     f"{cache_root / 'downloads' / definition.name}",
                   downloaded=tuple(provided), given_folder=str(folder))


def _download_whole(definition: SuiteDefinition, entries: list[DownloadEntry], data_dir: str | None,
                    download_root: Path, allow_download: bool, hashes: HashCache) -> DataSource:
    """No data folder: the listed files from ``base_url`` (as ``resolve`` does for every suite) and the download
    entries from their sources, all verified; when that fails, the shipped samples, saying why."""
    upstream = definition.upstream
    allowed = _downloads_allowed(allow_download)
    cache_root = download_root.parent
    pins = manifest_sha256({entry.rel: entry.pin for entry in entries})
    target = download_root / definition.name / upstream.get("commit", f"pins-{pins[:16]}")
    why = ""
    fetched = False
    shared = {rel: digest for rel, (digest, _) in definition.data_files.items()}
    if shared and not upstream.get("base_url"):
        why = "suite.yaml gives no upstream.base_url for its listed files"
    elif shared and not _verified(target, definition, hashes):
        if not allowed:
            why = f"downloads are turned off (--toolbench-no-download or {NO_DOWNLOAD_ENV})"
        elif not _download(target, definition):
            why = f"the listed files could not be fetched and verified from {upstream['base_url']}"
        else:
            fetched = True
    provided: dict[str, Path] = {}
    digests = dict(shared)
    pointers = []
    for entry in entries if not why else ():
        try:
            path, sha, pointer, now = _obtain(entry, definition, cache_root, allowed, hashes)
        except _Failure as failure:
            why = f"{entry.rel}: {failure.what} ({failure.url})"
            break
        provided[entry.rel], digests[entry.rel] = path, sha
        fetched |= now
        if pointer is not None:
            pointers.append((entry.rel, pointer.oid, pointer.size))
    if not why:
        overlay = _overlay(target, provided, cache_root / "data-overlay", definition.name)
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


def _overlay(folder: Path, provided: Mapping[str, Path], root: Path, name: str) -> Path:
    """``root/<name>-<digest>``: real folders mirroring ``folder`` (a symlink per file, so that walking it needs no
    symlink following) plus a symlink per provided file. Named by the digest of what it holds: reused while the
    folder's listing and the provided files stay the same; built aside and renamed into place (processes race)."""
    files: list[str] = []
    dirs: list[str] = []
    seen: set[str] = set()
    if folder.is_dir():
        for top, subdirs, names in os.walk(folder, followlinks=True):
            real = os.path.realpath(top)
            if real in seen:  # a symlink loop
                subdirs[:] = []
                continue
            seen.add(real)
            subdirs.sort()
            rel_top = os.path.relpath(top, folder)
            prefix = "" if rel_top == "." else Path(rel_top).as_posix() + "/"
            dirs.extend(prefix + d for d in subdirs)
            files.extend(prefix + n for n in sorted(names) if prefix + n not in provided)
    links = {rel: os.path.abspath(folder / rel) for rel in files}
    links.update({rel: os.path.abspath(path) for rel, path in provided.items()})
    for rel in provided:
        parts = rel.split("/")[:-1]
        dirs.extend("/".join(parts[:i]) for i in range(1, len(parts) + 1))
    dirs = sorted(set(dirs))
    listing = json.dumps([os.path.abspath(folder), dirs, sorted(links.items())])
    final = root / f"{name}-{hashlib.sha256(listing.encode('utf-8', 'surrogateescape')).hexdigest()[:16]}"
    if final.is_dir():
        return final
    root.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=root))
    try:
        for rel in dirs:
            (building / rel).mkdir(parents=True, exist_ok=True)
        for rel, target in links.items():
            (building / rel).parent.mkdir(parents=True, exist_ok=True)
            os.symlink(target, building / rel)
        try:
            os.rename(building, final)
        except OSError:
            if not final.is_dir():  # not another process having built it first
                raise
    except OSError as error:
        raise DataError(final, f"cannot build the data folder with the downloaded files ({error})") from None
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return final


def _unlisted_in_overlay(source: DataSource, definition: SuiteDefinition, read: Iterable[str],
                         hashes: HashCache) -> dict[str, str]:
    """``seal`` for an overlay: files read through it (or in the folder it mirrors) that ``data.files`` omits."""
    known = set(definition.data_files) | {entry.rel for entry in download_entries(definition)}
    roots = [os.path.abspath(source.path), os.path.realpath(source.given_folder)]
    unlisted: dict[str, str] = {}
    for opened in dict.fromkeys(read):
        for root, path in ((roots[0], os.path.abspath(opened)), (roots[1], os.path.realpath(opened))):
            if not path.startswith(root.rstrip(os.sep) + os.sep):
                continue
            rel = Path(os.path.relpath(path, root)).as_posix()
            if rel not in known and rel not in unlisted:
                digest = hashes.sha256(path)
                if digest is not None:
                    unlisted[rel] = digest
            break
    return unlisted
