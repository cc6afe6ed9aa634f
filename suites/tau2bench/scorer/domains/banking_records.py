"""banking_knowledge's database and the helpers its tools share (upstream 1.0.1 ``domains/banking_knowledge/
data_model.py`` ``TransactionalDB``, ``db_query.py``, ``utils.py`` and the helpers at the top of ``tools.py``; read
there, written here).

- **Database**: 23 tables (17 in ``db.json``, the rest empty until a tool writes them), each ``{"data": {id: record},
  "notes": str}``; records are free-form dicts (pydantic's ``Dict[str, Dict[str, Any]]``), so the hash is
  ``sha256(json.dumps(db, sort_keys=True, default=str))`` of the tables in that shape, absent tables included.
- **Queries**: ``query_database_tool``'s text (``Found N record(s) in 'table':``, each record's fields as
  ``str()`` of the value), constraints as JSON (``field__op``: ``eq``, ``ne``, ``gt``, ``gte``, ``lt``, ``lte``,
  ``contains``, ``startswith``, ``endswith``, ``in``, ``nin``; an unknown op is ``eq``; a comparison that raises
  ``TypeError``/``ValueError`` does not match). The lookups build that JSON by formatting the argument into a
  string, as upstream, so an argument with a quote is ``Error: Invalid JSON: ...`` there and here.
- **Ids**: deterministic, the first bytes of ``sha256`` of a seed naming the record (``utils.py``'s generators).
- **Clock**: fixed at 2025-11-14 03:40:00 (today ``11/14/2025``).
"""

import datetime
import hashlib
import inspect
import json
import operator
import re

from ..models import ANY, DictOf, F, Model
from ..toolkit import ToolKit

TABLES = ("users", "accounts", "debit_cards", "referrals", "credit_card_applications", "user_discoverable_tools",
          "user_discoverable_tool_calls", "verification_history", "credit_card_transaction_history",
          "cash_back_disputes", "bank_account_transaction_history", "credit_card_accounts",
          "agent_discoverable_tools", "task_config", "human_transfer_requests", "transaction_disputes",
          "credit_card_orders", "debit_card_orders", "credit_card_closure_reasons", "credit_card_account_flags",
          "credit_limit_increase_requests", "payment_history", "debit_card_disputes")
#: the tables ``query_database_tool`` knows, in its order (``_load_databases``)
QUERYABLE = ("users", "accounts", "referrals", "credit_card_applications", "user_discoverable_tools",
             "user_discoverable_tool_calls", "agent_discoverable_tools", "task_config", "verification_history",
             "credit_card_transaction_history", "cash_back_disputes", "bank_account_transaction_history",
             "credit_card_accounts", "human_transfer_requests", "transaction_disputes", "credit_card_orders",
             "credit_card_closure_reasons", "credit_card_account_flags", "debit_cards", "debit_card_orders",
             "debit_card_disputes", "credit_limit_increase_requests", "payment_history")


def _empty_table() -> dict:
    return {"data": {}, "notes": ""}


TABLE = Model("DatabaseTable", (F("data", DictOf(DictOf(ANY)), dict), F("notes", str, "")))
BANKING_DB = Model("TransactionalDB", tuple(F(name, TABLE, _empty_table) for name in TABLES),
                   forbid_extra=True)

NOW = datetime.datetime(2025, 11, 14, 3, 40, 0)
TODAY = datetime.date(2025, 11, 14)
TODAY_STR = TODAY.strftime("%m/%d/%Y")


# ------------------------------------------------------------------------------------------------------- queries

_OPS = {
    "eq": operator.eq, "ne": operator.ne, "gt": operator.gt, "gte": operator.ge, "lt": operator.lt,
    "lte": operator.le,
    "contains": lambda a, b: b in a if a is not None else False,
    "startswith": lambda a, b: str(a).startswith(str(b)) if a is not None else False,
    "endswith": lambda a, b: str(a).endswith(str(b)) if a is not None else False,
    "in": lambda a, b: a in b,
    "nin": lambda a, b: a not in b,
}


def record_matches(record: dict, constraints: dict) -> bool:
    for key, expected in constraints.items():
        name, op = key.rsplit("__", 1) if "__" in key else (key, "eq")
        try:
            if not _OPS.get(op, operator.eq)(record.get(name), expected):
                return False
        except (TypeError, ValueError):
            return False
    return True


def query_db(db: dict, table: str, return_ids: bool = False, limit=None, **constraints) -> list:
    if table not in QUERYABLE:
        return []
    results = []
    for record_id, record in db[table]["data"].items():
        if record_matches(record, constraints):
            results.append((record_id, record) if return_ids else record)
            if limit is not None and len(results) >= limit:
                break
    return results


def add_to_db(db: dict, table: str, record_id: str, record: dict) -> bool:
    if table not in db:
        return False
    data = db[table]["data"]
    if record_id in data:
        return False
    data[record_id] = record
    return True


def update_record(db: dict, table: str, record_id: str, updates: dict):
    data = db[table]["data"] if table in db else None
    if data is None or record_id not in data:
        return False, None
    for name, value in updates.items():
        data[record_id][name] = value
    return True, data[record_id]


def query_database_tool(db: dict, table: str, constraints: str = "{}") -> str:
    try:
        if table not in QUERYABLE:
            return f"Error: Database '{table}' not found. Available: {list(QUERYABLE)}"
        try:
            parsed = json.loads(constraints) if constraints else {}
        except json.JSONDecodeError as error:
            return f"Error: Invalid JSON: {error}"
        results = query_db(db, table, return_ids=True, **parsed)
        if not results:
            return f"No records found in '{table}'."
        lines = [f"Found {len(results)} record(s) in '{table}':\n"]
        for rank, (record_id, record) in enumerate(results, 1):
            lines.append(f"{rank}. Record ID: {record_id}")
            lines.extend(f"   {name}: {value}" for name, value in record.items())
            lines.append("")
        return "\n".join(lines)
    except Exception as error:  # upstream reports any failure (e.g. a constraint key that is not a str) as text
        return f"Error querying database: {str(error)}"


# ----------------------------------------------------------------------------------------------------------- ids

def deterministic_id(seed: str, length: int = 16) -> str:
    return hashlib.sha256(seed.encode()).digest()[: length // 2].hex()


def verification_id(user_id: str, time_verified: str) -> str:
    return f"{user_id}_{time_verified.replace(' ', '_').replace(':', '').replace('-', '')}"


def user_tool_id(tool_name: str) -> str:
    return deterministic_id(f"user_discoverable_tool:{tool_name}")


def user_tool_call_id(tool_name: str, arguments: dict) -> str:
    return deterministic_id(f"user_discoverable_tool_call:{tool_name}:{json.dumps(arguments, sort_keys=True)}")


def agent_tool_id(tool_name: str) -> str:
    return deterministic_id(f"agent_discoverable_tool:{tool_name}")


def application_id(card_type, customer_name, annual_income, rho_bank_subscription=False) -> str:
    return deterministic_id(f"credit_card:{card_type}:{customer_name}:{annual_income}:{rho_bank_subscription}")


def prefixed_id(prefix: str, seed: str) -> str:
    """``txn_``, ``dsp_``, ``ccord_``, ``clsr_``, ``ccflag_``, ``cli_``, ``btxn_``, ``dcord_``, ``dbc_`` ids."""
    return f"{prefix}_{deterministic_id(seed, length=12)}"


# -------------------------------------------------------------------------------------- discoverable tools' docs

_ARGS = re.compile(r"\n\s*Args:\s*\n")
_RETURNS = re.compile(r"\n\s*Returns:\s*\n")
_ARG = re.compile(r"^\s*(\w+)\s*(?:\(([^)]+)\))?\s*:\s*(.+?)$", re.MULTILINE)


def discoverable_info(function) -> dict:
    """``parse_discoverable_tool_docstring``: description, parameters (type, description, required) and the
    success message (the first line of ``Returns:``)."""
    parts = _ARGS.split(inspect.getdoc(function) or "", maxsplit=1)
    parameters, success = {}, "Action completed successfully."
    if len(parts) > 1:
        sections = _RETURNS.split(parts[1], maxsplit=1)
        if len(sections) > 1:
            success = sections[1].strip().split("\n")[0].strip()
        for match in _ARG.finditer(sections[0]):
            type_info = match.group(2) or "string"
            kind = re.sub(r",?\s*optional", "", type_info, flags=re.IGNORECASE).strip() or "string"
            parameters[match.group(1)] = {"type": kind, "description": match.group(3).strip(),
                                          "required": "optional" not in type_info.lower()}
    return {"name": function.__name__, "description": parts[0].strip(), "parameters": parameters,
            "success_message": success}


def format_discoverable(info: dict) -> str:
    lines = [f"  - {name}: {spec.get('type', 'string')}{' (required)' if spec.get('required', True) else ' (optional)'}"
             f" - {spec.get('description', '')}" for name, spec in info.get("parameters", {}).items()]
    params = "\n".join(lines) if lines else "  (no parameters)"
    return f"Tool: {info['name']}\nDescription: {info['description']}\nParameters:\n{params}"


def parse_balance(value) -> float:
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        return float(value.replace("$", "").replace(",", ""))
    return 0.0


def account_balance(account: dict) -> float:
    return parse_balance(account.get("current_holdings", account.get("balance", 0)))


def discoverable_tool(kind: str = "read", mutates_state: bool | None = None):
    """upstream's ``is_discoverable_tool``: a tool (callable by name, as upstream's ``use_tool`` allows) that the
    agent's tool list leaves out; its docstring is what unlocking it shows."""

    def mark(function):
        function.__tau2_tool__ = kind
        function.__tau2_mutates__ = (kind == "write") if mutates_state is None else mutates_state
        function.__tau2_discoverable__ = True
        return function

    return mark


def found(result: str) -> bool:
    """upstream's test of a lookup's text: neither ``No records found`` nor ``No results found`` in it."""
    return "No records found" not in result and "No results found" not in result


def lookup(db: dict, table: str, field: str, value) -> str:
    """A lookup as upstream writes it: the constraint JSON formatted from the value (a quote in it breaks it)."""
    return query_database_tool(db, table, f'{{"{field}": "{value}"}}')


def history(title: str, tool: str, header: str, result: str, none_text: str) -> str:
    """The history tools' text: title, the tool executed, a header, then the lookup's records or ``none_text``."""
    return "\n".join([title, "", f"Executed: {tool}", header, result if found(result) else none_text])


def title_words(text: str) -> str:
    return text.replace("_", " ").title()


class DiscoverableKit(ToolKit):
    """A toolkit with discoverable tools: callable by name, left out of the tools the agent (or user) is shown."""

    def tools(self) -> dict:
        return {name: tool for name, tool in super().tools().items()
                if not getattr(tool.method, "__tau2_discoverable__", False)}

    @classmethod
    def discoverable_names(cls) -> frozenset:
        return frozenset(name for name in dir(cls) if getattr(getattr(cls, name), "__tau2_discoverable__", False))


def name_methods_as(cls: type, upstream: str) -> None:
    """Give the tools of ``cls`` upstream's qualified names (``KnowledgeTools.freeze_debit_card_3892`` in
    ``tau2.domains.banking_knowledge.tools``), which Python's own errors print (a missing or unexpected argument,
    arguments that are not a mapping), so those texts come out as upstream's."""
    for klass in cls.__mro__:
        if klass.__name__ in ("KBSearchMixin", "GrepMixin", "KBSearchBm25AllToolsMixin"):
            continue
        for name, member in vars(klass).items():
            if callable(member) and hasattr(member, "__tau2_tool__"):
                member.__qualname__ = f"{upstream}.{name}"
                member.__module__ = "tau2.domains.banking_knowledge.tools"
