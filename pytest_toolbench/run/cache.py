"""Content-addressed generation cache (SQLite, WAL), committed chunk by chunk so a killed run loses little.

The key is a sha256 over everything that determines the answer: the backend's fingerprint (model, revision or
weight hashes, chat-template hash, sampling parameters, mode, parser) and the rendered request (messages, tools,
max_tokens). A changed prompt therefore never silently reuses an old answer.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..contract.errors import ToolbenchError
from ..contract.suite import SIMULATED_USER, Generation, Request
from .cache_layout import CacheLayout

SCHEMA = """
CREATE TABLE IF NOT EXISTS generations (
    key TEXT PRIMARY KEY,
    generation TEXT NOT NULL,
    created REAL NOT NULL
)
"""




def request_payload(fingerprint: Mapping[str, Any], request: Request) -> dict[str, Any]:
    """What :func:`request_key` hashes (as sorted-key JSON)."""
    if request.simulates and SIMULATED_USER in fingerprint:
        fingerprint = fingerprint[SIMULATED_USER]
    else:
        fingerprint = {k: v for k, v in fingerprint.items() if k != SIMULATED_USER}
    payload = {
        "fingerprint": fingerprint,
        "messages": list(request.messages),
        "tools": list(request.tools) if request.tools is not None else None,
        "max_tokens": request.max_tokens,
    }
    if request.simulates:
        payload["simulates"] = request.simulates
    if request.native_messages is not None:  # absent otherwise, so every older key stays valid
        payload["native_messages"] = list(request.native_messages)
    if request.functions is not None:  # the docs a renderer writing its own tools block reads (BFCL's FC handlers)
        payload["functions"] = list(request.functions)
    if request.temperature is not None:  # likewise: only a suite with its own temperature changes its keys
        payload["temperature"] = request.temperature
    if request.context_reserve:
        payload["context_reserve"] = request.context_reserve
    if request.sample:  # --toolbench-repeat's later samples; sample 0 keeps the key a run without it has
        payload["sample"] = request.sample
    return payload


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _encoded(text: str) -> bytes:
    # surrogatepass: a lone surrogate fed back from a model's output still hashes (other keys are unchanged)
    return text.encode("utf-8", "surrogatepass")


def request_key(fingerprint: Mapping[str, Any], request: Request) -> str:
    """A simulated user's turn is keyed by the user model when one is configured, any other request by the run's
    model; so adding ``--toolbench-user-model`` leaves every other cached answer valid."""
    return hashlib.sha256(_encoded(_dumps(request_payload(fingerprint, request)))).hexdigest()


class ConversationKeys:
    """:func:`request_key` of each step of many conversations, each conversation's earlier messages serialized and
    hashed once: a step's messages extend the previous step's, and in the sorted-key JSON that is hashed every field
    before ``messages`` is the same within a conversation, so the hash state after the earlier messages is kept and
    only the new ones are added (sha256 hashes a stream; ``hashlib``'s ``copy``). Whatever does not extend the
    previous step (a changed head, an edited earlier message) is hashed in full. Same keys as :func:`request_key`."""

    def __init__(self, fingerprint: Mapping[str, Any]):
        self.fingerprint = fingerprint
        # conversation -> (text before the messages, the messages hashed so far, hash state after them)
        self.state: dict[Any, tuple[str, list[Any], Any]] = {}

    def key(self, conversation: Any, request: Request) -> str:
        payload = request_payload(self.fingerprint, request)
        messages = payload.pop("messages")
        names = sorted(payload)
        # json.dumps of a dict with sort_keys and the default separators: "{" + '"key": value' joined by ", " + "}"
        head = "{" + "".join(f"{_dumps(k)}: {_dumps(payload[k])}, " for k in names if k < "messages") + \
            '"messages": ['
        tail = "]" + "".join(f", {_dumps(k)}: {_dumps(payload[k])}" for k in names if k > "messages") + "}"
        known = self.state.get(conversation)
        if known is not None and known[0] == head and len(known[1]) <= len(messages) and \
                all(a is b or a == b for a, b in zip(known[1], messages)):
            hashed, state = known[1], known[2].copy()
        else:
            hashed, state = [], hashlib.sha256(_encoded(head))
        for number in range(len(hashed), len(messages)):
            state.update(_encoded((", " if number else "") + _dumps(messages[number])))
        self.state[conversation] = (head, list(messages), state.copy())
        state.update(_encoded(tail))
        return state.hexdigest()

    def forget(self, conversation: Any) -> None:
        self.state.pop(conversation, None)


class CacheError(ToolbenchError):
    """The generation cache cannot be used as asked; the message names the file and what to do about it."""


#: What a cache does with a file that is not a readable SQLite cache (see ``GenerationCache``).
ON_CORRUPT = ("move", "raise", "ignore")


def _reason(error: BaseException) -> str:
    text = str(error) or type(error).__name__
    return text if isinstance(error, sqlite3.Error) else f"{type(error).__name__}: {text}"


def _is_corrupt(error: sqlite3.Error) -> bool:
    name = getattr(error, "sqlite_errorname", None)  # Python 3.11+
    if name:
        return name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB"))
    return type(error) is sqlite3.DatabaseError  # "file is not a database", "database disk image is malformed"


def encode_generation(generation: Generation) -> str:
    """ASCII JSON: any text a model produced (lone surrogates, NULs, invalid UTF-8 decoded with escapes) is stored
    as ``\\uXXXX`` escapes and read back unchanged; SQLite never sees a string UTF-8 cannot encode."""
    return json.dumps(generation.to_json(), ensure_ascii=True)


def decode_generation(text: str) -> Generation:
    return Generation.from_json(json.loads(text))


class GenerationCache:
    """One SQLite file, ``CacheLayout.at(folder).generations``, opened so that a bad file never ends a run unexplained.

    * ``readonly``: this process never writes (xdist workers, ``--toolbench-offline``). A read-only file or folder
      (a cache restored in CI) is read in place; a WAL database whose ``-shm`` file cannot be created there is read
      as an immutable file, or from a private copy when its ``-wal`` journal still holds answers.
    * ``on_corrupt``: a file that is not a readable SQLite cache (truncated, garbage) is ``"move"``-d aside to
      ``<name>.corrupt-<timestamp>`` and a fresh cache started (single process, xdist controller), ``"raise"``-s one
      ``CacheError`` naming the file (``--toolbench-offline``: nothing could replace it), or is ``"ignore"``-d
      (xdist workers: the controller already reported it).
    * A write that fails (read-only file or folder, disk full, a lock never released) loses nothing: the generations
      stay in ``unsaved``, ``get`` and ``missing`` see them, and ``notes`` says once that the file could not be written.

    ``notes`` holds one line per thing the user should know (no "toolbench:" prefix); the session prints them.
    """

    def __init__(self, folder: Path | str, readonly: bool = False, on_corrupt: str = "move"):
        if on_corrupt not in ON_CORRUPT:
            raise ValueError(f"on_corrupt must be one of {ON_CORRUPT}, got {on_corrupt!r}")
        self.path = CacheLayout.at(folder).generations
        self.readonly = readonly
        self.notes: list[str] = []
        #: Why this cache's file cannot be written, once known (None: writable as far as is known).
        self.write_error: str | None = None
        #: Generated in this run but not in the file: kept so they are still scored.
        self.unsaved: dict[str, Generation] = {}
        self._db: sqlite3.Connection | None = None
        self._overlays: list[sqlite3.Connection] = []
        self._tempdir: str | None = None
        self._write_noted = False
        if readonly:
            self._open_readonly(on_corrupt)
        else:
            self._open_writable(on_corrupt)

    # -- opening ---------------------------------------------------------------------------------------------------
    def _open_writable(self, on_corrupt: str) -> None:
        db = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=60)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(SCHEMA)
            db.commit()
            _validate(db)
        except sqlite3.Error as error:
            if db is not None:
                db.close()
            if _is_corrupt(error):
                self._unusable(error, on_corrupt)
            else:  # a read-only file or folder: read what is there, keep new answers in memory
                self.write_error = self._why_unwritable(error)
                self._open_readonly(on_corrupt)
            return
        except OSError as error:  # the folder cannot be created
            if db is not None:
                db.close()
            self.write_error = f"cannot create {self.path.parent}: {error.strerror or error}"
            self._open_readonly(on_corrupt)
            return
        self._db = db

    def _open_readonly(self, on_corrupt: str) -> None:
        if not self.path.exists():
            return
        uri = self.path.resolve().as_uri()
        db = None
        try:
            try:
                db = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=60)
                has_table = _validate(db)
            except sqlite3.Error as error:
                if db is not None:
                    db.close()
                    db = None
                if _is_corrupt(error):
                    raise
                # A WAL database needs its -shm file, which a read-only folder cannot hold: read without it.
                db = self._open_without_shm(uri)
                has_table = _validate(db)
        except (sqlite3.Error, OSError) as error:
            if db is not None:
                db.close()
            self._unusable(error, on_corrupt, corrupt=isinstance(error, sqlite3.Error) and _is_corrupt(error))
            return
        if has_table:
            self._db = db
        else:
            db.close()

    def _open_without_shm(self, uri: str) -> sqlite3.Connection:
        wal = Path(f"{self.path}-wal")
        if not wal.exists() or wal.stat().st_size == 0:
            # Nothing outside the main file: immutable skips locking and the -shm file altogether.
            return sqlite3.connect(f"{uri}?immutable=1", uri=True)
        # Committed answers still sit in the -wal journal, which immutable would ignore: read a private copy.
        self._tempdir = tempfile.mkdtemp(prefix="toolbench-cache-")
        copy = Path(self._tempdir) / self.path.name
        shutil.copyfile(self.path, copy)
        shutil.copyfile(wal, f"{copy}-wal")
        return sqlite3.connect(copy, timeout=60)

    def _unusable(self, error: BaseException, on_corrupt: str, corrupt: bool = True) -> None:
        what = "is corrupt" if corrupt else "cannot be read"
        reason = _reason(error)
        if on_corrupt == "raise":
            fix = ("restore a good copy, or run without --toolbench-offline to move it aside and generate afresh"
                   if corrupt else "make it readable, or point --toolbench-cache to another folder")
            raise CacheError(f"the generation cache {self.path} {what} ({reason}): {fix}") from None
        if on_corrupt == "move" and corrupt:
            aside = self._move_aside()
            if isinstance(aside, Path):
                self.notes.append(f"the generation cache {self.path} {what} ({reason}); moved it aside to {aside} "
                                  "and started a fresh one")
                self._open_writable("ignore")
                return
            reason = f"{reason}; moving it aside failed: {aside}"
        # Read nothing from it; whatever this run generates is kept in memory (and said so when it happens).
        self.write_error = f"it {what}"
        self.notes.append(f"the generation cache {self.path} {what} ({reason}); this run reads nothing from it: "
                          "delete it, or point --toolbench-cache to another folder")

    def _why_unwritable(self, error: BaseException) -> str:
        """SQLite's reason, and which of file and folder refuses writes when that is the cause (SQLite only says
        "unable to open database file" when it cannot create its journal files)."""
        reason = _reason(error)
        name = getattr(error, "sqlite_errorname", "") or ""
        if not name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_AUTH")):
            return reason
        try:
            with tempfile.TemporaryFile(dir=self.path.parent):
                pass
        except OSError as denied:
            return f"{reason}: its folder is read-only ({denied.strerror or denied})"
        try:
            if self.path.exists():
                with open(self.path, "ab"):  # appends nothing
                    pass
        except OSError as denied:
            return f"{reason}: the file is read-only ({denied.strerror or denied})"
        return reason

    def _move_aside(self) -> Path | str:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        aside = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
        number = 1
        while aside.exists():
            number += 1
            aside = self.path.with_name(f"{self.path.name}.corrupt-{stamp}-{number}")
        try:
            os.replace(self.path, aside)
            # The journal files belong to the bad file: left here they would be replayed into the fresh cache.
            for suffix in ("-wal", "-shm", "-journal"):
                side = Path(f"{self.path}{suffix}")
                if side.exists():
                    os.replace(side, Path(f"{aside}{suffix}"))
        except OSError as error:
            return f"{type(error).__name__}: {error.strerror or error}"
        return aside

    def add_overlay(self, path: Path | str) -> bool:
        """Also read answers from another cache file (one an xdist controller wrote with ``save_unsaved``)."""
        path = Path(path)
        if not path.exists():
            return False
        try:
            db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=60)
            if not _validate(db):
                db.close()
                return False
        except sqlite3.Error as error:
            self.notes.append(f"the generations kept in {path} cannot be read ({_reason(error)})")
            return False
        self._overlays.append(db)
        return True

    def save_unsaved(self, path: Path | str) -> bool:
        """Write ``unsaved`` to a separate file (for xdist workers); False, with a note, when that fails too."""
        path = Path(path)
        try:
            db = sqlite3.connect(path, timeout=60)
            try:
                db.execute(SCHEMA)
                now = time.time()
                db.executemany("INSERT OR REPLACE INTO generations (key, generation, created) VALUES (?, ?, ?)",
                               [(key, encode_generation(gen), now) for key, gen in self.unsaved.items()])
                db.commit()
            finally:
                db.close()
        except (sqlite3.Error, OSError, ValueError, TypeError) as error:
            self.notes.append(f"the {len(self.unsaved)} generations that are not in {self.path} could not be handed "
                              f"to the xdist workers through {path} ({_reason(error)}); their cases fail as missing")
            return False
        return True

    # -- reading ---------------------------------------------------------------------------------------------------
    def _readers(self) -> list[sqlite3.Connection]:
        return ([self._db] if self._db is not None else []) + self._overlays

    def _read_error(self, error: sqlite3.Error) -> CacheError:
        fix = ("move it aside (or delete it) and generate again" if _is_corrupt(error) else
               "check that no other process holds it locked, or point --toolbench-cache to another folder")
        return CacheError(f"the generation cache {self.path} cannot be read ({_reason(error)}): {fix}")

    def get(self, key: str) -> Generation | None:
        if key in self.unsaved:
            return self.unsaved[key]
        for db in self._readers():
            try:
                row = db.execute("SELECT generation FROM generations WHERE key = ?", (key,)).fetchone()
            except sqlite3.Error as error:
                raise self._read_error(error) from None
            if row:
                return decode_generation(row[0])
        return None

    def missing(self, keys: Iterable[str]) -> set[str]:
        keys = set(keys) - self.unsaved.keys()
        for db in self._readers():
            if not keys:
                break
            present: set[str] = set()
            ordered = sorted(keys)
            try:
                for start in range(0, len(ordered), 500):
                    chunk = ordered[start:start + 500]
                    marks = ",".join("?" * len(chunk))
                    present.update(r[0] for r in db.execute(
                        f"SELECT key FROM generations WHERE key IN ({marks})", chunk))
            except sqlite3.Error as error:
                raise self._read_error(error) from None
            keys -= present
        return keys

    # -- writing ---------------------------------------------------------------------------------------------------
    @property
    def writable(self) -> bool:
        return not self.readonly and self._db is not None and self.write_error is None

    def put_many(self, items: Iterable[tuple[str, Generation]]) -> None:
        """Store and commit at once: this is the unit a crash can lose. Never raises for a write that fails: the
        generations are then kept in ``unsaved`` (and ``notes`` says why the file could not be written)."""
        rows = list(items)
        if not rows:
            return
        if self.writable:
            try:
                now = time.time()
                self._db.executemany(
                    "INSERT OR REPLACE INTO generations (key, generation, created) VALUES (?, ?, ?)",
                    [(key, encode_generation(gen), now) for key, gen in rows])
                self._db.commit()
                return
            except (sqlite3.Error, ValueError, TypeError) as error:
                try:
                    self._db.rollback()
                except sqlite3.Error:
                    pass
                self.write_error = self._why_unwritable(error)
        self.unsaved.update(rows)
        if not self.readonly and not self._write_noted:
            self._write_noted = True
            self.notes.append(
                f"the generation cache {self.path} could not be written ({self.write_error}); this run's new "
                "generations are kept in memory and scored, but not saved: make it writable (or free disk space), "
                "or point --toolbench-cache to a writable folder")

    def __len__(self) -> int:
        if self._db is None:
            return len(self.unsaved)
        return self._db.execute("SELECT COUNT(*) FROM generations").fetchone()[0] + len(self.unsaved)

    def close(self) -> None:
        for db in self._readers():
            db.close()
        self._db = None
        self._overlays = []
        if self._tempdir is not None:
            shutil.rmtree(self._tempdir, ignore_errors=True)
            self._tempdir = None


def _validate(db: sqlite3.Connection) -> bool:
    """Read enough to find a truncated or garbage file now, not in the middle of the run; True if the table exists.
    (SQLite reports a file shorter than its header's page count as malformed on the first read.)"""
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "generations" not in tables:
        return False
    db.execute("SELECT COUNT(*) FROM generations").fetchone()
    return True
