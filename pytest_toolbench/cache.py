"""Content-addressed generation cache (SQLite, WAL), committed chunk by chunk so a killed run loses little.

The key is a sha256 over everything that determines the answer: the backend's fingerprint (model, revision or
weight hashes, chat-template hash, sampling parameters, mode, parser) and the rendered request (messages, tools,
max_tokens). A changed prompt therefore never silently reuses an old answer.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from pathlib import Path
from typing import Any, Iterable, Mapping

from .suite import Generation, Request

SCHEMA = """
CREATE TABLE IF NOT EXISTS generations (
    key TEXT PRIMARY KEY,
    generation TEXT NOT NULL,
    created REAL NOT NULL
)
"""


#: The fingerprint entry describing a separate simulated-user model (``--toolbench-user-model``).
SIMULATED_USER = "simulated_user"


def request_key(fingerprint: Mapping[str, Any], request: Request) -> str:
    """A simulated user's turn is keyed by the user model when one is configured, any other request by the run's
    model; so adding ``--toolbench-user-model`` leaves every other cached answer valid."""
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
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class GenerationCache:
    FILENAME = "generations.sqlite"

    def __init__(self, folder: Path | str, readonly: bool = False):
        self.path = Path(folder) / self.FILENAME
        self.readonly = readonly
        if readonly:
            self._db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True) if self.path.exists() else None
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=60)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(SCHEMA)
            self._db.commit()

    def get(self, key: str) -> Generation | None:
        if self._db is None:
            return None
        row = self._db.execute("SELECT generation FROM generations WHERE key = ?", (key,)).fetchone()
        return Generation.from_json(json.loads(row[0])) if row else None

    def missing(self, keys: Iterable[str]) -> set[str]:
        keys = set(keys)
        if self._db is None or not keys:
            return keys
        present: set[str] = set()
        ordered = sorted(keys)
        for start in range(0, len(ordered), 500):
            chunk = ordered[start:start + 500]
            marks = ",".join("?" * len(chunk))
            present.update(r[0] for r in self._db.execute(
                f"SELECT key FROM generations WHERE key IN ({marks})", chunk))
        return keys - present

    def put_many(self, items: Iterable[tuple[str, Generation]]) -> None:
        """Store and commit at once: this is the unit a crash can lose."""
        if self.readonly:
            raise RuntimeError("the generation cache is read-only in this process")
        now = time.time()
        self._db.executemany(
            "INSERT OR REPLACE INTO generations (key, generation, created) VALUES (?, ?, ?)",
            [(key, json.dumps(gen.to_json(), ensure_ascii=False), now) for key, gen in items])
        self._db.commit()

    def __len__(self) -> int:
        if self._db is None:
            return 0
        return self._db.execute("SELECT COUNT(*) FROM generations").fetchone()[0]

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
