"""Files a suite may not redistribute: the ``download: true`` entries of ``suite.yaml``'s ``data.files``
(``{git_blob and/or sha256, source, download: true}``), which the run needs and at which URL, and whether some content
is an entry's (``judge``: ``sha256`` pins the content; ``git_blob``, what ``git hash-object`` prints, pins the
content or its Git LFS pointer)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from ..contract.definition import SuiteDefinition
from .lfs import LfsPointer


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


def judge(entry: DownloadEntry, sha: str, size: int, blob: Callable[[], str],
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
