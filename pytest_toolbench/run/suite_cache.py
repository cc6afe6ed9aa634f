"""The loaded-suite cache: a suite's cases as its loader built them, kept between runs.

Loading a suite means reading and validating every data file with JSON Schema, which is most of a collection's time
(and every xdist worker does it again). The result is kept under the plugin's cache folder, keyed by everything the
loader's output depends on:

- the suite definition (the bytes of ``suite.yaml``);
- the data: the sha256 of every file ``suite.yaml`` lists, as verified this run (or, for the shipped samples, of
  every sample file), and the sums of any unlisted files the loader read last time, checked again on use;
- the code: the sha256 of every Python file of the plugin and of the scorer's own package or module;
- the Python version and the data's resolved location.

Any change to one of them is a miss, and the suite is loaded (and validated) from its files again. The entries are
pickles, because a loader may build any Python value (tuples, sets) and a JSON round trip could change what a scorer
sees; the folder is the run's own cache, trusted like ``.pytest_cache``.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Mapping

#: 2: cases carry no run settings in their payloads (``data_dir``, ``tl_failures``: the suite's context, bound at
#: every load, holds them) and are stored unbound.
FORMAT = 2
#: the plugin's package folder (this file is ``<package>/run/suite_cache.py``)
PACKAGE_ROOT = Path(__file__).parent.parent
_CODE_HASHES: dict[str, str] = {}


def code_sha256(module_file: str | None) -> str | None:
    """The sha256 of the plugin's Python files and the scorer's own files (its package, or its module); None when
    the scorer is not a module with a file (an object registered by a conftest), which is then never cached."""
    roots = [PACKAGE_ROOT]
    if not module_file:
        return None
    own = Path(module_file)
    roots.append(own.parent if own.name == "__init__.py" else own)
    key = "|".join(str(root) for root in roots)
    if key not in _CODE_HASHES:
        digest = hashlib.sha256()
        for root in roots:
            files = sorted(root.rglob("*.py")) if root.is_dir() else [root]
            for file in files:
                digest.update(str(file.relative_to(root.parent)).encode("utf-8", "surrogateescape"))
                digest.update(hashlib.sha256(file.read_bytes()).digest())
        _CODE_HASHES[key] = digest.hexdigest()
    return _CODE_HASHES[key]


class SuiteCache:
    """One pickle per suite (the newest key wins), in ``folder``; every failure to read or write is a miss."""

    def __init__(self, folder: Path | None):
        self.folder = folder

    def key(self, definition_path: Path, source_kind: str, source_path: Path, data_digests: Mapping[str, str],
            code: str) -> str:
        digest = hashlib.sha256()
        for part in (str(FORMAT), sys.version, code, source_kind, str(source_path)):
            digest.update(part.encode("utf-8", "surrogateescape") + b"\0")
        digest.update(Path(definition_path).read_bytes() + b"\0")
        for rel, sha in sorted(data_digests.items()):
            digest.update(f"{rel}\0{sha}\0".encode("utf-8", "surrogateescape"))
        return digest.hexdigest()

    def _file(self, name: str) -> Path:
        return self.folder / f"{name}.pickle"  # type: ignore[operator]

    def get(self, name: str, key: str, still_valid: Callable[[Mapping[str, str]], bool]) -> Any | None:
        """The cached value for ``key``; ``still_valid(unlisted)`` re-checks the unlisted files it depended on."""
        if self.folder is None:
            return None
        try:
            with self._file(name).open("rb") as handle:
                entry = pickle.load(handle)
        except Exception:  # absent, truncated, written by another version: load from the files
            return None
        if not isinstance(entry, dict) or entry.get("key") != key or not still_valid(entry.get("unlisted") or {}):
            return None
        return entry.get("value")

    def get_index(self, name: str, key: str, still_valid: Callable[[Mapping[str, str]], bool]) -> Any | None:
        """The small index stored beside the entry (case ids, categories, keywords), read without the payloads."""
        return self.get(f"{name}.index", key, still_valid)

    def put(self, name: str, key: str, value: Any, unlisted: Mapping[str, str], index: Any = None) -> None:
        # The entry first, then its index: an index never vouches for an entry that is not there.
        self._write(name, {"key": key, "unlisted": dict(unlisted), "value": value})
        if index is not None:
            self._write(f"{name}.index", {"key": key, "unlisted": dict(unlisted), "value": index})

    def _write(self, name: str, entry: dict) -> None:
        if self.folder is None:
            return
        tmp = None
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            blob = pickle.dumps(entry, protocol=pickle.HIGHEST_PROTOCOL)
            handle, tmp = tempfile.mkstemp(dir=self.folder, prefix=f".{name}-", suffix=".tmp")
            with os.fdopen(handle, "wb") as out:
                out.write(blob)
            os.replace(tmp, self._file(name))
        except Exception:  # a read-only cache folder, an unpicklable payload: the next run loads again
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
