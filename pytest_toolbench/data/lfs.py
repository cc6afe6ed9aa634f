"""Git LFS pointers (spec v1): telling a pointer file from content, and where GitHub serves the object a pointer
names (``LFS_MEDIA``). A file pinned by the git blob of its pointer is followed to its object and checked against
the pointer's ``oid sha256`` and ``size``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

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


@dataclass(frozen=True)
class LfsPointer:
    oid: str  # sha256 of the object
    size: int
    text: str


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


def pointer_in_file(path: Path) -> LfsPointer | None:
    """The Git LFS pointer a (small) file holds, else None (also when it cannot be read)."""
    try:
        if path.stat().st_size > LFS_POINTER_MAX:
            return None
        return parse_lfs_pointer(path.read_bytes())
    except OSError:
        return None
