"""BFCL's eight multi-turn tool classes, loaded from the pinned official wheel (never installed, never copied).

The classes (GorillaFileSystem, MathAPI, MessageAPI, TwitterAPI, TicketAPI, TradingBot, TravelAPI,
VehicleControlAPI) are Apache-2.0 and ship in ``bfcl_eval-2026.3.23-py3-none-any.whl`` under
``bfcl_eval/eval_checker/multi_turn_eval/func_source_code/``. They need only the standard library, ``mpmath`` and
their sibling ``long_context`` module, so each module's source is read from the verified wheel and run as a module
object of its upstream name that is never registered: bfcl-eval's dependencies are not needed, nothing named
``bfcl_eval`` enters ``sys.modules`` (a user's own bfcl-eval install is untouched), the sibling import is served
from the same wheel, and names in messages and reprs are upstream's.

Where the wheel is looked for, in order: ``$TOOLBENCH_BFCL_EVAL_WHEEL``; ``<data root>/bfcl-eval/`` (the layout of the
shared data: ``<root>/bfcl`` is the suite's folder); ``$TOOLBENCH_DATA/bfcl-eval/``; the download folder
``~/.cache/pytest-toolbench/bfcl-eval/``, where a missing wheel is fetched from PyPI. Every copy is checked against
:data:`WHEEL_SHA256` before it is read; a mismatch or a wheel that cannot be had is one :class:`SimulatorsUnavailable`
naming the file, the URL, the checksums and where to put a copy by hand.
"""

from __future__ import annotations

import builtins
import copy
import hashlib
import json
import os
import threading
import types
import urllib.request
import zipfile
from pathlib import Path
from typing import Any, Iterable

from pytest_toolbench.contract.errors import ToolbenchError
from pytest_toolbench.scorer_lib import embedding_models

WHEEL = "bfcl_eval-2026.3.23-py3-none-any.whl"
WHEEL_SHA256 = "3bb6dfa5f0c68ad403c9ec50b00db2bb3b4cc9b38ab1ff33f48fe30d853d3a0a"
PYPI_JSON = "https://pypi.org/pypi/bfcl-eval/2026.3.23/json"
DOWNLOAD_FOLDER = Path("~/.cache/pytest-toolbench/bfcl-eval").expanduser()
SOURCE_FOLDER = "bfcl_eval/eval_checker/multi_turn_eval/func_source_code/"
UPSTREAM_PACKAGE = SOURCE_FOLDER[:-1].replace("/", ".")

#: ``constants/executable_backend_config.py``: class -> module (file) in ``func_source_code``.
CLASS_MODULES = {
    "GorillaFileSystem": "gorilla_file_system",
    "MathAPI": "math_api",
    "MessageAPI": "message_api",
    "TwitterAPI": "posting_api",
    "TicketAPI": "ticket_api",
    "TradingBot": "trading_bot",
    "TravelAPI": "travel_booking",
    "VehicleControlAPI": "vehicle_control",
}
#: ``STATELESS_CLASSES``: instantiated without ``_load_scenario``.
STATELESS_CLASSES = frozenset({"MathAPI"})


class SimulatorsUnavailable(ToolbenchError):
    """The official wheel with the simulator classes cannot be found, fetched or verified."""


_lock = threading.RLock()
_classes: dict[str, type] | None = None
#: a failed download, kept so that each later lookup that finds no local copy fails at once (a local copy found
#: later, e.g. beside another run's data, is still used)
_fetch_failure: SimulatorsUnavailable | None = None
_verified: dict[tuple[str, int, int], bool] = {}


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _is_verified(path: Path) -> bool:
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if key not in _verified:
        _verified[key] = _sha256(path) == WHEEL_SHA256
    return _verified[key]


def candidate_paths(data_dirs: Iterable[Path | str] = ()) -> list[Path]:
    """Where a copy of the wheel may be, in the order they are tried."""
    found = []
    explicit = os.environ.get("TOOLBENCH_BFCL_EVAL_WHEEL")
    if explicit:
        found.append(Path(explicit))
    for folder in data_dirs:
        found.append(Path(folder).parent / "bfcl-eval" / WHEEL)
    if os.environ.get("TOOLBENCH_DATA"):
        found.append(Path(os.environ["TOOLBENCH_DATA"]) / "bfcl-eval" / WHEEL)
    found.append(DOWNLOAD_FOLDER / WHEEL)
    return found


def find_wheel(data_dirs: Iterable[Path | str] = (), *, download: bool = True) -> Path:
    """A verified copy of the pinned wheel (fetched from PyPI into the download folder when none is found)."""
    for path in candidate_paths(data_dirs):
        if path.is_file():  # the first copy found decides: a wrong one is an error, never silently skipped
            if _is_verified(path):
                return path
            raise SimulatorsUnavailable(
                f"{path} is not the pinned {WHEEL}: sha256 {_sha256(path)}, expected {WHEEL_SHA256}. "
                f"Replace it with the file from PyPI (bfcl-eval 2026.3.23).")
    if not download:
        raise SimulatorsUnavailable(f"{WHEEL} not found (looked in {', '.join(map(str, candidate_paths(data_dirs)))})")
    global _fetch_failure
    if _fetch_failure is not None:  # one attempt at the network per process
        raise _fetch_failure
    try:
        return _fetch()
    except SimulatorsUnavailable as error:
        _fetch_failure = error
        raise


def _fetch() -> Path:
    target = DOWNLOAD_FOLDER / WHEEL
    url = PYPI_JSON
    try:
        with urllib.request.urlopen(PYPI_JSON, timeout=20) as reply:
            release = json.load(reply)
        url = next(item["url"] for item in release["urls"] if item["filename"] == WHEEL)
        DOWNLOAD_FOLDER.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(".part")
        with urllib.request.urlopen(url, timeout=60) as reply, open(partial, "wb") as handle:
            for block in iter(lambda: reply.read(1 << 20), b""):
                handle.write(block)
    except Exception as error:  # noqa: BLE001 - no network, HTTP error, an unexpected index page
        raise SimulatorsUnavailable(
            f"BFCL's multi-turn simulator classes need {WHEEL} (sha256 {WHEEL_SHA256}); it was not found next to the "
            f"data (<data root>/bfcl-eval/) and fetching it from {url} failed ({type(error).__name__}: {error}). "
            f"Download it by hand into {DOWNLOAD_FOLDER} or set TOOLBENCH_BFCL_EVAL_WHEEL.") from None
    received = _sha256(partial)
    if received != WHEEL_SHA256:
        partial.unlink(missing_ok=True)
        raise SimulatorsUnavailable(f"{url}: sha256 {received}, expected {WHEEL_SHA256}; the file was not kept")
    partial.replace(target)
    return target


#: Stand-ins for the two imports of the memory classes' base module that would pull in bfcl-eval's own package:
#: ``overrides.final`` (a marker decorator without behaviour) and the three id predicates of ``bfcl_eval.utils``,
#: used only by the snapshot files, which this suite keeps in memory instead (see :mod:`..agentic.conversation`).
def _shim_modules() -> dict[str, types.ModuleType]:
    overrides = types.ModuleType("overrides")
    overrides.final = overrides.override = lambda function: function

    def snapshot_files_are_not_used(*_: Any, **__: Any) -> Any:
        raise RuntimeError("memory snapshots are kept in memory by pytest-toolbench, not in result folders")

    utils = types.ModuleType("bfcl_eval.utils")
    for name in ("get_directory_structure_by_id", "is_first_memory_prereq_entry", "is_memory_prereq"):
        setattr(utils, name, snapshot_files_are_not_used)
    return {"overrides": overrides, "bfcl_eval.utils": utils}


def verified_sentence_transformers() -> types.ModuleType:
    """``sentence_transformers`` as the official modules see it: the installed package, except that
    ``SentenceTransformer(name, ...)`` of a model with a verified local copy (:mod:`pytest_toolbench.scorer_lib.embedding_models`)
    loads that copy by path, offline. ``memory_vector.py``'s module-level ``SentenceTransformer("all-MiniLM-L6-v2",
    device="cpu")`` thus loads the Hub repository's files, sha256-checked, with upstream's arguments, instead of
    fetching them by name (the only deviation: where the same files come from). Without a verified copy installed
    the name goes to sentence-transformers unchanged, as upstream; a copy that does not verify raises
    :class:`~pytest_toolbench.scorer_lib.embedding_models.ModelCopyError`."""
    import sentence_transformers as installed

    class VerifiedSentenceTransformers(types.ModuleType):
        def __getattr__(self, attribute: str) -> Any:
            return getattr(installed, attribute)

    def SentenceTransformer(model_name_or_path: Any = None, *args: Any, **kwargs: Any) -> Any:  # noqa: N802
        verified = embedding_models.local_path(model_name_or_path) if isinstance(model_name_or_path, str) else None
        if verified is None:
            return installed.SentenceTransformer(model_name_or_path, *args, **kwargs)
        return installed.SentenceTransformer(str(verified), *args, **{**kwargs, "local_files_only": True})

    module = VerifiedSentenceTransformers("sentence_transformers")
    module.SentenceTransformer = SentenceTransformer
    return module


class _OfficialModules:
    """Modules of ``func_source_code`` run from the wheel on first use; their imports of sibling modules are served
    from the same wheel, every other import by Python's own import system."""

    def __init__(self, wheel: Path):
        self.wheel = wheel
        self.loaded: dict[str, types.ModuleType] = {}
        self.shims = _shim_modules()
        self.sentence_transformers: types.ModuleType | None = None  # imported by memory_vector only
        self.builtins = dict(vars(builtins), __import__=self._import)

    def _import(self, name, globals=None, locals=None, fromlist=(), level=0):
        if name.startswith(UPSTREAM_PACKAGE + "."):
            return self.get(name[len(UPSTREAM_PACKAGE) + 1:])
        if name in self.shims:
            return self.shims[name]
        if name == "sentence_transformers" and level == 0:
            if self.sentence_transformers is None:
                self.sentence_transformers = verified_sentence_transformers()
            return self.sentence_transformers
        return builtins.__import__(name, globals, locals, fromlist, level)

    def get(self, name: str) -> types.ModuleType:
        if name not in self.loaded:
            member = SOURCE_FOLDER + name + ".py"
            with zipfile.ZipFile(self.wheel) as archive:
                source = archive.read(member).decode("utf-8")
            module = types.ModuleType(f"{UPSTREAM_PACKAGE}.{name}")
            module.__file__ = f"{self.wheel}/{member}"
            module.__dict__["__builtins__"] = self.builtins
            exec(compile(source, module.__file__, "exec"), module.__dict__)  # pinned, verified upstream source
            self.loaded[name] = module
        return self.loaded[name]


_modules: _OfficialModules | None = None


def official_module(name: str, data_dirs: Iterable[Path | str] = ()) -> types.ModuleType:
    """One module of ``func_source_code`` (e.g. ``memory_kv``), run from the verified wheel once per process. Its
    third-party imports (``rank_bm25``, ``sentence_transformers``...) must be installed: ImportError otherwise.
    Until a wheel is found, each call looks for one near its own ``data_dirs`` (a failed lookup must not hide the copy
    beside the data that a later call names); the download is tried once per process (:func:`find_wheel`)."""
    global _modules
    with _lock:
        if _modules is None:
            _modules = _OfficialModules(find_wheel(data_dirs))
        return _modules.get(name)


def wheel_problem(data_dirs: Iterable[Path | str] = ()) -> str | None:
    """Why the official classes cannot be loaded here (the wheel cannot be found, fetched or verified), or None."""
    try:
        official_module("long_context", data_dirs)
    except SimulatorsUnavailable as error:
        return str(error)
    return None


def simulator_classes(data_dirs: Iterable[Path | str] = ()) -> dict[str, type]:
    """The eight classes by name (loaded once per process)."""
    global _classes
    if _classes is None:
        _classes = {name: getattr(official_module(module, data_dirs), name) for name, module in CLASS_MODULES.items()}
    return _classes


def new_instances(involved_classes: list[str], initial_config: dict, category: str,
                  data_dirs: Iterable[Path | str] = ()) -> dict[str, Any]:
    """Fresh instances of an entry's classes, in ``involved_classes`` order, loaded as upstream's
    ``execute_multi_turn_func_call`` does: each class without arguments, then (stateful classes)
    ``_load_scenario(deepcopy(initial_config.get(name, {})), long_context=...)``."""
    classes = simulator_classes(data_dirs)
    long_context = "long_context" in category or "composite" in category
    instances = {}
    for name in involved_classes:
        instance = classes[name]()
        if name not in STATELESS_CLASSES:
            instance._load_scenario(copy.deepcopy(initial_config.get(name, {})), long_context=long_context)
        instances[name] = instance
    return instances
