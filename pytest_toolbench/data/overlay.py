"""The folder a scorer reads when some of its files were downloaded: a mirror of the user's data folder (real
folders, a symlink per file) plus a link per downloaded file, so the scorer finds every file at ``data_dir/<rel>``."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Mapping

from ..contract.errors import DataError


def build_overlay(folder: Path, provided: Mapping[str, Path], root: Path, name: str) -> Path:
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
