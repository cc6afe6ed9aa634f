"""Which domains are implemented, and their environments built over the data folder's databases.

A database is read, validated and made canonical once per process and data folder (the canonical JSON text is
kept), and every environment gets its own fresh copy of it (``json.loads`` of that text: upstream builds each
environment from the file too)."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Callable

from ..environment import Environment
from ..models import coerce
from . import airline, mock

#: domain -> (agent toolkit, its database file, user toolkit or None, the user's database file or None)
DOMAINS = {
    "airline": (airline.AirlineTools, "db.json", None, None),
    "mock": (mock.MockTools, "db.json", mock.MockUserTools, "user_db.json"),
}
#: Domains upstream has that this suite does not implement yet.
NOT_IMPLEMENTED = ("retail", "telecom", "banking_knowledge")


@functools.lru_cache(maxsize=8)
def _canonical_text(path: str, kit: type) -> str:
    with open(path, encoding="utf-8") as handle:
        raw = json.load(handle)
    return json.dumps(coerce(kit.db_model, raw))


def _fresh(kit: type, path: Path):
    instance = kit.__new__(kit)
    instance.db = json.loads(_canonical_text(str(path), kit))
    return instance


def environment_factory(domain: str, domain_dir: Path) -> Callable[..., Environment]:
    """``make_env(solo_mode=False)``: a fresh environment of ``domain`` over the files in ``domain_dir``."""
    tools, db_file, user_tools, user_db_file = DOMAINS[domain]

    def make_env(solo_mode: bool = False) -> Environment:
        user = _fresh(user_tools, domain_dir / user_db_file) if user_tools is not None else None
        return Environment(domain, _fresh(tools, domain_dir / db_file), user, solo_mode=solo_mode)

    return make_env
