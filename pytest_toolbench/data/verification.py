"""Checking a local data folder against the sha256 sums of ``suite.yaml`` (``data.files``), and the one digest of
the data a suite's figures rest on.

``verify``: a file that differs or is missing is one ``DataError`` naming it, unless ``--toolbench-data-unverified``
(then the source records which files differ). ``seal``, after loading: every source carries ``data_sha256``, the
``manifest_sha256`` of its listed files plus any file the loader read that ``data.files`` does not list (reported as
``unlisted``); for the samples, of every sample file.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Iterable, Mapping

from ..contract.definition import SuiteDefinition
from ..contract.errors import DataError
from .entries import DownloadEntry, download_entries, judge
from .hashes import HashCache, manifest_sha256
from .lfs import LfsPointer, pointer_in_file
from .source import DataSource

UNVERIFIED_FIX = "point --toolbench-data at an unmodified copy, or pass --toolbench-data-unverified"


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
    # Both sums whole: two that differ only late must not look alike.
    what = (f"sha256 {actual} differs from {expected} in suite.yaml of suite '{definition.name}'"
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
        verdict, got = judge(entry, sha, size, lambda: hashes.git_blob(path) or "", pointers.get(entry.rel))
        where = "the downloaded copy" if entry.rel in downloaded else "the file"
        if verdict and entry.git_blob and pointer_in_file(path) is not None:
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
