"""Which domains are implemented, and their environments built over the data folder's databases.

A database is read, validated and made canonical once per process and data folder; every environment gets its
own copy of it, each table a copy-on-access :class:`~..toolkit.Table` over the shared canonical records (upstream
builds each environment from the file: the same values, without re-reading 7 MB per environment)."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Callable

from pytest_toolbench.contract.errors import DataError

from ..environment import Environment
from ..models import DictOf, coerce
from ..toolkit import Table, TableBase
from . import airline, banking, banking_env, banking_user, mock, retail, telecom, telecom_env, telecom_user
from .banking_policy import DEFAULT as BANKING_DEFAULT_RETRIEVAL

try:  # Python 3.11+; on 3.10 the tomli package, when installed, is the same reader
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    try:
        import tomli as tomllib
    except ModuleNotFoundError:
        tomllib = None

#: domain -> (agent toolkit, its database file, user toolkit or None, the user's database file or None)
DOMAINS = {
    "airline": (airline.AirlineTools, "db.json", None, None),
    "retail": (retail.RetailTools, "db.json", None, None),
    "telecom": (telecom.TelecomTools, "db.toml", telecom_user.TelecomUserTools, "user_db.toml"),
    "mock": (mock.MockTools, "db.json", mock.MockUserTools, "user_db.json"),
    # the user's toolkit works on the agent's database (banking_env)
    "banking_knowledge": (banking.BankingTools, "db.json", banking_user.BankingUserTools, None),
}
#: the domains whose environment is not the plain one
ENVIRONMENTS = {"telecom": telecom_env.TelecomEnvironment}


def unreadable(domain: str) -> str | None:
    """Why this Python cannot read the domain's databases (checked when the cases load), or None."""
    if DOMAINS[domain][1].endswith(".toml") and tomllib is None:
        return (f"the {domain} domain's databases are TOML, which needs Python 3.11+ (tomllib) or the tomli "
                f"package; deselect {domain} with the domains option")
    return None


def _read_db(path: str) -> dict:
    """A database file: JSON, or TOML (telecom; upstream reads it with the ``toml`` package: the files hold only
    strings, numbers, booleans, tables and arrays of tables, which ``tomllib`` reads the same)."""
    if path.endswith(".toml"):
        if tomllib is None:  # refused when the cases load (``unreadable``); here only if called directly
            raise DataError(Path(path), "reading TOML needs Python 3.11+ (tomllib) or the tomli package")
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


@functools.lru_cache(maxsize=8)
def _canonical(path: str, kit: type) -> tuple[dict, str]:
    """The shared tables (``DictOf`` fields) and the JSON text of the other fields."""
    raw = _read_db(path)
    db = coerce(kit.db_model, raw)
    kinds = {name: kind for name, kind, _, _ in kit.db_model.fields}
    tables = {name: TableBase(value) for name, value in db.items() if isinstance(kinds[name], DictOf)}
    rest = {name: value for name, value in db.items() if name not in tables}
    return tables, json.dumps(rest)


def _fresh(kit: type, path: Path):
    tables, rest = _canonical(str(path), kit)
    others = json.loads(rest)
    instance = kit.__new__(kit)
    instance.db = {name: Table(tables[name]) if name in tables else others[name]
                   for name, _, _, _ in kit.db_model.fields}
    return instance


def environment_factory(domain: str, domain_dir: Path, task: dict | None = None,
                        retrieval: str | None = None) -> Callable[..., Environment]:
    """``make_env(solo_mode=False)``: a fresh environment of ``domain`` over the files in ``domain_dir``
    (banking_knowledge: for ``task``, whose gold actions decide which reads are logged, with the ``retrieval``
    configuration's tools)."""
    tools, db_file, user_tools, user_db_file = DOMAINS[domain]
    if domain == "banking_knowledge":
        def make_banking(solo_mode: bool = False) -> Environment:
            return banking_env.make_banking_env(_fresh(tools, domain_dir / db_file), user_tools.__new__(user_tools),
                                                domain_dir, task, retrieval or BANKING_DEFAULT_RETRIEVAL, solo_mode)

        return make_banking

    def make_env(solo_mode: bool = False) -> Environment:
        user = _fresh(user_tools, domain_dir / user_db_file) if user_tools is not None else None
        environment = ENVIRONMENTS.get(domain, Environment)
        return environment(domain, _fresh(tools, domain_dir / db_file), user, solo_mode=solo_mode)

    return make_env
