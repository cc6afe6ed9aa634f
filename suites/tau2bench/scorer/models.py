"""A database record's shape, as τ²-bench's pydantic data models give it (``domains/<domain>/data_model.py``).

Upstream keeps every database as pydantic models and hashes ``model_dump()``; tool results are
``json.dumps(model_dump())``. What that fixes, and what is reproduced here on plain dicts:

- the field order of each record (a subclass keeps its parent's fields first, in the parent's order), which is the
  key order of a tool's result text;
- the value types after pydantic's lax coercion (a ``float`` field read as ``100`` dumps as ``100.0``; an ``int``
  field given ``2.0`` or ``"2"`` holds ``2``), which the database hash sees;
- fields absent from the data taking their defaults (``None``), and keys a model does not declare dropped.

A type is one of: ``str``, ``int``, ``float``, ``bool``, ``ANY``, :class:`Opt`, :class:`ListOf`, :class:`DictOf`,
:class:`Lit`, :class:`NamedEnum`, :class:`AnyOf`, ``DATE``, ``DATETIME``, :class:`Choice` (a union told apart by
a literal field, as pydantic's smart union picks it) or a :class:`Model`. :func:`coerce` turns JSON into the
canonical value, raising :class:`Invalid` where pydantic raises a ``ValidationError`` (the message is ours:
pydantic's text is not reproduced, see the suite README).
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Any, Mapping

REQUIRED = object()
ANY = "any"


class Invalid(ValueError):
    """A value a model's field refuses (pydantic's ValidationError)."""


@dataclass(frozen=True)
class Opt:
    inner: Any


@dataclass(frozen=True)
class ListOf:
    inner: Any


@dataclass(frozen=True)
class DictOf:
    inner: Any


@dataclass(frozen=True)
class Lit:
    values: tuple


@dataclass(frozen=True)
class NamedEnum:
    """A ``str`` enum of upstream (``LineStatus``): its values, held as the plain strings; the schema refers to it by
    name under ``$defs``, as pydantic does."""

    name: str
    values: tuple


@dataclass(frozen=True)
class AnyOf:
    """``Union[A, B]`` of plain kinds (``Union[NetworkModePreference, str]``): the first that takes the value."""

    kinds: tuple


#: ``datetime.date`` and ``datetime.datetime`` fields, held as ``str()`` of the value upstream's model holds
#: (``2025-02-25``, ``2025-01-20 14:30:00``): what its ``json.dumps(..., default=str)`` writes in hashes and results.
DATE = "date"
DATETIME = "datetime"


@dataclass(frozen=True)
class Choice:
    """``Union[A, B, ...]`` of models told apart by the literal field ``key``."""

    key: str
    models: tuple


@dataclass(frozen=True)
class Model:
    """A pydantic model: its name (the schema's title), its fields in order ``(name, type, default, description)``
    and its docstring (the schema's description), or None."""

    name: str
    fields: tuple = ()
    doc: str | None = None
    forbid_extra: bool = False

    def extend(self, name: str, fields: tuple, doc: str | None = None) -> "Model":
        """A subclass: the parent's fields first (a redefined one keeps its place and takes the new type)."""
        own = {f[0]: f for f in fields}
        merged = [own.pop(f[0], f) for f in self.fields]
        merged.extend(f for f in fields if f[0] in own)
        return Model(name, tuple(merged), doc)

    def field_names(self) -> list[str]:
        return [f[0] for f in self.fields]


def F(name: str, kind: Any, default: Any = REQUIRED, description: str | None = None) -> tuple:
    return (name, kind, default, description)


def coerce(kind: Any, value: Any, where: str = "") -> Any:
    """The canonical value of ``value`` as a field of type ``kind`` (a new object; the input is not changed)."""
    if kind is ANY:
        return value
    if kind is str:
        if isinstance(value, str):
            return value
        raise Invalid(f"{where}: Input should be a valid string")
    if kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        if isinstance(value, str) and value.lower() in _BOOL_TEXT:
            return _BOOL_TEXT[value.lower()]
        raise Invalid(f"{where}: Input should be a valid boolean")
    if kind is int:
        if isinstance(value, bool):
            return int(value)
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str):
            try:
                return int(value.strip())
            except ValueError:
                pass
        raise Invalid(f"{where}: Input should be a valid integer")
    if kind is float:
        if isinstance(value, (int, float)):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value.strip())
            except ValueError:
                pass
        raise Invalid(f"{where}: Input should be a valid number")
    if isinstance(kind, Opt):
        return None if value is None else coerce(kind.inner, value, where)
    if kind is DATE or kind is DATETIME:
        return _coerce_date(kind, value, where)
    if isinstance(kind, NamedEnum):
        if isinstance(value, str) and value in kind.values:
            return value
        raise Invalid(f"{where}: Input should be " + ", ".join(repr(v) for v in kind.values))
    if isinstance(kind, AnyOf):
        for inner in kind.kinds:
            try:
                return coerce(inner, value, where)
            except Invalid:
                continue
        raise Invalid(f"{where}: Input matches none of the union's members")
    if isinstance(kind, Lit):
        if value in kind.values and type(value) is type(kind.values[0]):
            return value
        raise Invalid(f"{where}: Input should be " + " or ".join(repr(v) for v in kind.values))
    if isinstance(kind, ListOf):
        if not isinstance(value, (list, tuple)):
            raise Invalid(f"{where}: Input should be a valid list")
        return [coerce(kind.inner, item, f"{where}.{i}") for i, item in enumerate(value)]
    if isinstance(kind, DictOf):
        if not isinstance(value, Mapping):
            raise Invalid(f"{where}: Input should be a valid dictionary")
        return {key: coerce(kind.inner, item, f"{where}.{key}") for key, item in value.items()}
    if isinstance(kind, Choice):
        if isinstance(value, Mapping):
            for model in kind.models:
                literal = dict((f[0], f[1]) for f in model.fields)[kind.key]
                if value.get(kind.key) in literal.values:
                    return coerce(model, value, where)
        raise Invalid(f"{where}: Input should be one of " + ", ".join(m.name for m in kind.models))
    if isinstance(kind, Model):
        if not isinstance(value, Mapping):
            raise Invalid(f"{where}: Input should be a valid dictionary or instance of {kind.name}")
        if kind.forbid_extra:
            extra = set(value) - set(kind.field_names())
            if extra:
                raise Invalid(f"{where}: Extra inputs are not permitted ({', '.join(sorted(extra))})")
        out = {}
        for name, sub, default, _ in kind.fields:
            if name in value:
                out[name] = coerce(sub, value[name], f"{where}.{name}" if where else name)
            elif default is REQUIRED:
                raise Invalid(f"{kind.name}: {where + '.' if where else ''}{name}: Field required")
            else:
                out[name] = default() if callable(default) else default
        return out
    raise TypeError(f"unknown field type {kind!r}")


def _coerce_date(kind: str, value: Any, where: str) -> str:
    """pydantic's date / datetime parsing of an ISO text (or a ``date``/``datetime``), as ``str()`` of the result."""
    if isinstance(value, datetime.datetime):
        parsed: Any = value
    elif isinstance(value, datetime.date):
        parsed = datetime.datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        try:
            parsed = datetime.datetime.fromisoformat(value.strip())
        except ValueError:
            raise Invalid(f"{where}: Input should be a valid {kind}") from None
    else:
        raise Invalid(f"{where}: Input should be a valid {kind}")
    if kind is DATE:
        if parsed.time() != datetime.time(0) or parsed.tzinfo is not None:
            raise Invalid(f"{where}: Datetimes provided to dates should have zero time")
        return str(parsed.date())
    return str(parsed)


_BOOL_TEXT = {"true": True, "false": False, "1": True, "0": False, "yes": True, "no": False, "on": True,
              "off": False, "t": True, "f": False, "y": True, "n": False}
