"""Tools over a database, as τ²-bench's ``environment/toolkit.py``, ``environment/tool.py`` and
``environment/environment.py`` define them (read there, written here; no upstream code is imported).

- A tool is a method marked with :func:`is_tool` and its kind (``read``, ``write``, ``generic``, ``think``); a write
  tool mutates the database (upstream's ``mutates_state`` default: ``kind == "write"``), and only those are
  re-executed when a trajectory is replayed (1.0.1's ``set_state``).
- The schema the agent is shown is derived from the method's signature and Google-style docstring, as upstream's
  ``Tool.openai_schema`` does through pydantic: the description is the short description (plus ``\\n\\n`` and the long
  one when there is one), the parameters a JSON schema in pydantic's layout (keys sorted, ``title`` from the name,
  ``$defs`` for records).
- A tool's result is ``Environment.to_json_str`` of what it returns; an exception is ``Error: <message>``.
- The database hash is ``sha256(json.dumps(db, sort_keys=True, default=str))`` of the canonical records.
"""

from __future__ import annotations

import copy
import hashlib
import inspect
import json
import re
from collections.abc import MutableMapping
from typing import Any, Callable, Mapping

from .models import (ANY, DATE, DATETIME, REQUIRED, AnyOf, Choice, DictOf, ListOf, Lit, Model, NamedEnum, Opt,
                     coerce)

TOOL_KINDS = ("read", "write", "generic", "think")


class ModelOrDict:
    """``Model | dict`` in a signature (``List[FlightInfo | dict]``): the schema's ``anyOf`` of both."""

    def __init__(self, model: Model):
        self.model = model


def is_tool(kind: str = "read", mutates_state: bool | None = None) -> Callable:
    assert kind in TOOL_KINDS, kind

    def mark(function: Callable) -> Callable:
        function.__tau2_tool__ = kind
        function.__tau2_mutates__ = (kind == "write") if mutates_state is None else mutates_state
        return function

    return mark


# ---------------------------------------------------------------------------------------------------- docstrings

_SECTIONS = ("Args", "Arguments", "Parameters", "Returns", "Return", "Yields", "Raises", "Exceptions", "Example",
             "Examples", "Attributes")


def parse_docstring(doc: str | None) -> dict[str, Any]:
    """A Google-style docstring: ``short``, ``long`` and the ``params`` descriptions (docstring_parser's reading)."""
    text = inspect.cleandoc(doc or "")
    header = re.compile(r"^(" + "|".join(_SECTIONS) + r"):\s*$", re.MULTILINE)
    match = header.search(text)
    description = text[: match.start()] if match else text
    short, long = description, ""
    if "\n" in description:
        short, long = description.split("\n", 1)
    short, long = short.strip(), long.strip()
    params: dict[str, str] = {}
    for section in header.finditer(text):
        if section.group(1) not in ("Args", "Arguments", "Parameters"):
            continue
        nxt = header.search(text, section.end())
        body = text[section.end(): nxt.start() if nxt else len(text)]
        lines = [line for line in body.split("\n")]
        indent = None
        current = None
        for line in lines:
            if not line.strip():
                continue
            depth = len(line) - len(line.lstrip())
            if indent is None:
                indent = depth
            entry = re.match(r"^(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s?(.*)$", line.strip())
            if depth == indent and entry:
                current = entry.group(1)
                params[current] = entry.group(3).strip()
            elif current is not None:
                params[current] = (params[current] + "\n" + line.strip()).strip()
    return {"short": short or None, "long": long or None, "params": params}


# ---------------------------------------------------------------------------------------------------- schemas

def _title(name: str) -> str:
    return name.title().replace("_", " ")


def _sorted(schema: Any) -> Any:
    """pydantic's key order: every schema object's keys sorted, except the names under ``properties``."""
    if isinstance(schema, dict):
        out = {}
        for key in sorted(schema):
            value = schema[key]
            if key in ("properties", "$defs"):
                out[key] = {k: _sorted(v) for k, v in (value.items() if key == "properties"
                                                        else sorted(value.items()))}
            else:
                out[key] = _sorted(value)
        return out
    if isinstance(schema, list):
        return [_sorted(item) for item in schema]
    return schema


def kind_schema(kind: Any, defs: dict[str, Any]) -> dict[str, Any]:
    if kind is ANY:
        return {}
    if kind is str:
        return {"type": "string"}
    if kind is int:
        return {"type": "integer"}
    if kind is float:
        return {"type": "number"}
    if kind is bool:
        return {"type": "boolean"}
    if kind is dict:
        return {"additionalProperties": True, "type": "object"}
    if isinstance(kind, Opt):
        return {"anyOf": [kind_schema(kind.inner, defs), {"type": "null"}]}
    if isinstance(kind, Lit):
        json_type = {str: "string", int: "integer", bool: "boolean"}[type(kind.values[0])]
        if len(kind.values) == 1:
            return {"const": kind.values[0], "type": json_type}
        return {"enum": list(kind.values), "type": json_type}
    if isinstance(kind, ListOf):
        return {"items": kind_schema(kind.inner, defs), "type": "array"}
    if isinstance(kind, DictOf):
        return {"additionalProperties": kind_schema(kind.inner, defs), "type": "object"}
    if kind is DATE or kind is DATETIME:
        return {"format": "date" if kind is DATE else "date-time", "type": "string"}
    if isinstance(kind, NamedEnum):
        defs.setdefault(kind.name, {"enum": list(kind.values), "title": kind.name, "type": "string"})
        return {"$ref": f"#/$defs/{kind.name}"}
    if isinstance(kind, AnyOf):
        return {"anyOf": [kind_schema(inner, defs) for inner in kind.kinds]}
    if isinstance(kind, ModelOrDict):
        return {"anyOf": [kind_schema(kind.model, defs), {"additionalProperties": True, "type": "object"}]}
    if isinstance(kind, Choice):
        return {"anyOf": [kind_schema(model, defs) for model in kind.models]}
    if isinstance(kind, Model):
        if kind.name not in defs:
            defs[kind.name] = None  # reserve (recursion)
            defs[kind.name] = model_schema(kind, defs)
        return {"$ref": f"#/$defs/{kind.name}"}
    raise TypeError(f"no schema for {kind!r}")


def field_schema(kind: Any, default: Any, description: str | None, name: str, defs: dict) -> dict[str, Any]:
    schema = dict(kind_schema(kind, defs))
    if description is not None:
        schema["description"] = description
    if "$ref" not in schema:
        schema["title"] = _title(name)
    if default is not REQUIRED:
        schema["default"] = default
    return schema


def model_schema(model: Model, defs: dict) -> dict[str, Any]:
    properties = {name: field_schema(kind, default, description, name, defs)
                  for name, kind, default, description in model.fields}
    schema: dict[str, Any] = {"properties": properties, "title": model.name, "type": "object"}
    required = [name for name, _, default, _ in model.fields if default is REQUIRED]
    if required:
        schema["required"] = required
    if model.doc:
        schema["description"] = model.doc
    if model.forbid_extra:
        schema["additionalProperties"] = False  # upstream's BaseModelNoExtra (extra="forbid")
    return schema


class Tool:
    """One tool of a toolkit: its name, kind, the bound method, and the schema the agent is shown."""

    def __init__(self, name: str, method: Callable):
        self.name = name
        self.method = method
        self.kind = method.__tau2_tool__
        self.mutates_state = method.__tau2_mutates__
        self.doc = parse_docstring(method.__doc__)

    @property
    def description(self) -> str:
        short, long = self.doc["short"], self.doc["long"]
        if not short:
            return self.name
        return short if not long else short + "\n\n" + long

    def parameters(self) -> dict[str, Any]:
        defs: dict[str, Any] = {}
        fields = []
        for name, parameter in inspect.signature(self.method).parameters.items():
            kind = ANY if parameter.annotation is parameter.empty else parameter.annotation
            default = REQUIRED if parameter.default is parameter.empty else parameter.default
            fields.append((name, kind, default, self.doc["params"].get(name)))
        schema = model_schema(Model("parameters", tuple(fields)), defs)
        if "required" not in schema:
            schema["required"] = []
            del schema["required"]
        if defs:
            schema["$defs"] = defs
        return _sorted(schema)

    def openai_schema(self) -> dict[str, Any]:
        return {"type": "function", "function": {"name": self.name, "description": self.description,
                                                  "parameters": self.parameters()}}


class ToolKit:
    """The tools of one side (agent or user) over its database (a canonical dict of ``db_model``)."""

    db_model: Model

    def __init__(self, db: Mapping[str, Any]):
        self.db = coerce(self.db_model, db)

    @classmethod
    def tool_names(cls) -> list[str]:
        names = []
        for klass in reversed(cls.__mro__):
            for name, member in vars(klass).items():
                if callable(member) and hasattr(member, "__tau2_tool__") and name not in names:
                    names.append(name)
        return names

    def tools(self) -> dict[str, Tool]:
        return {name: Tool(name, getattr(self, name)) for name in self.tool_names()}

    def has_tool(self, name: str) -> bool:
        return name in self.tool_names()

    def mutates_state(self, name: str) -> bool:
        return getattr(getattr(self, name), "__tau2_mutates__", True)

    def use_tool(self, tool_name: str, **kwargs: Any) -> Any:
        if tool_name not in self.tool_names():
            raise ValueError(f"Tool '{tool_name}' not found.")
        return getattr(self, tool_name)(**kwargs)

    def update_db(self, update: Mapping[str, Any] | None) -> None:
        """``update_pydantic_model_with_dict``: a deep merge of ``update`` into the records, then re-validated."""
        merged = _deep_merge(copy.deepcopy(plain_db(self.db)), update or {})
        self.db = coerce(self.db_model, merged)

    def db_hash(self) -> str:
        return hashlib.sha256(db_json(self.db).encode()).hexdigest()


def _deep_merge(target: dict, update: Mapping) -> dict:
    for key, value in update.items():
        if isinstance(value, Mapping) and isinstance(target.get(key), dict):
            _deep_merge(target[key], value)
        else:
            target[key] = copy.deepcopy(value)
    return target


def dict_hash(data: Any) -> str:
    """upstream ``get_dict_hash``: sha256 of ``json.dumps(data, sort_keys=True, default=str)``."""
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()


def to_json_str(result: Any) -> str:
    """upstream ``Environment.to_json_str``: a string as it is, anything else ``json.dumps`` of its dump (numbers
    and booleans inside containers as their ``str``)."""
    def process(value: Any) -> Any:
        if isinstance(value, str) or value is None:
            return value
        if isinstance(value, (bool, int, float)):
            return str(value)
        if isinstance(value, list):
            return [process(item) for item in value]
        if isinstance(value, tuple):
            return tuple(process(item) for item in value)
        if isinstance(value, Record):
            return value.dump()
        if isinstance(value, dict):
            return {key: process(item) for key, item in value.items()}
        raise ValueError(f"Unsupported type: {type(value)}")

    if isinstance(result, str):
        return result
    return json.dumps(process(result), default=str)


class Record:
    """A record a tool returns (upstream returns the pydantic model itself): dumped as it is, without the
    number-to-string conversion ``to_json_str`` applies to bare values."""

    def __init__(self, data: Mapping[str, Any]):
        self.data = data

    def dump(self) -> Any:
        return copy.deepcopy(self.data)


class Table(MutableMapping):
    """One top-level table of a database (``flights``, ``users``, ...), copy-on-access over records shared by every
    environment of the process: a record is decoded from its canonical JSON text the first time it is read, and
    the table's part of the hash reuses the shared sorted text of every record never read. Behaves as the dict
    upstream's model holds (same keys, same order, new keys last)."""

    def __init__(self, base: "TableBase"):
        self._base = base
        self._own: dict[str, Any] = {}
        self._order = list(base.texts)
        self._gone: set[str] = set()

    def __contains__(self, key: object) -> bool:
        return key in self._own or (key in self._base.texts and key not in self._gone)

    def __getitem__(self, key: str) -> Any:
        if key in self._own:
            return self._own[key]
        if key in self._base.texts and key not in self._gone:
            value = self._own[key] = json.loads(self._base.texts[key])
            return value
        raise KeyError(key)

    def __setitem__(self, key: str, value: Any) -> None:
        if key not in self:
            self._order.append(key)
        self._gone.discard(key)
        self._own[key] = value

    def __delitem__(self, key: str) -> None:
        if key not in self:
            raise KeyError(key)
        self._own.pop(key, None)
        self._gone.add(key)
        self._order.remove(key)

    def __iter__(self):
        return iter(list(self._order))

    def __len__(self) -> int:
        return len(self._order)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Table) and other._base is self._base and not self._own and not other._own \
                and self._gone == other._gone:
            return True
        return isinstance(other, Mapping) and dict(self.items()) == dict(other.items())

    def sorted_json(self) -> str:
        """``json.dumps(table, sort_keys=True, default=str)``, built from the shared texts of unread records."""
        parts = []
        for key in sorted(self._order):
            text = (json.dumps(self._own[key], sort_keys=True, default=str) if key in self._own
                    else self._base.sorted_texts[key])
            parts.append(f"{json.dumps(key)}: {text}")
        return "{" + ", ".join(parts) + "}"

    def text_of(self, key: str) -> str | None:
        """The record's sorted JSON text (None when absent), without decoding a record never read."""
        if key in self._own:
            return json.dumps(self._own[key], sort_keys=True, default=str)
        return self._base.sorted_texts[key] if key in self else None

    def plain(self) -> dict[str, Any]:
        return {key: self[key] for key in self._order}


class TableBase:
    """The shared, read-only canonical records of one table: each as JSON text in field order (decoded on access)
    and with sorted keys (for the hash)."""

    def __init__(self, records: Mapping[str, Any]):
        self.texts = {key: json.dumps(value) for key, value in records.items()}
        self.sorted_texts = {key: json.dumps(value, sort_keys=True, default=str) for key, value in records.items()}


def db_json(db: Mapping[str, Any]) -> str:
    """``json.dumps(db, sort_keys=True, default=str)`` of a database whose tables may be :class:`Table`\\ s."""
    if not any(isinstance(value, Table) for value in db.values()):
        return json.dumps(db, sort_keys=True, default=str)
    parts = []
    for key in sorted(db):
        value = db[key]
        text = value.sorted_json() if isinstance(value, Table) else json.dumps(value, sort_keys=True, default=str)
        parts.append(f"{json.dumps(key)}: {text}")
    return "{" + ", ".join(parts) + "}"


def plain_db(db: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value.plain() if isinstance(value, Table) else value for key, value in db.items()}
