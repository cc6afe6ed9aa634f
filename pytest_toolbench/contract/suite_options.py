"""A suite's options (suite.yaml ``options:``): whether a value matches an option's schema
(:func:`option_problem`), what a schema accepts in words (:func:`accepts`), and the error for one that does not
(:class:`OptionError`)."""

from __future__ import annotations

from typing import Any, Mapping

from .errors import DataError


class OptionError(DataError):
    """A suite option whose value (a default in ``suite.yaml`` or a run's override) its schema refuses, or an
    override of an option the suite does not declare."""

    def usage_line(self) -> str:
        """The one-line usage error: an override's message names the option itself (and the file declaring it)."""
        if self.message.startswith("--toolbench-suite-option"):
            return f"pytest-toolbench: {self.message} (declared in {self.path})"
        return f"pytest-toolbench: {self}"


def option_problem(spec: Mapping[str, Any], value: Any) -> tuple[str, str] | None:
    """None when ``value`` matches the option's schema; else ("schema", why) for a schema that is not one, or
    ("value", the validator's message)."""
    import jsonschema

    validator = _option_validator(spec["schema"])
    if isinstance(validator, str):
        return "schema", validator
    if validator.is_valid(value):
        return None
    return "value", jsonschema.exceptions.best_match(validator.iter_errors(value)).message


_OPTION_VALIDATORS: dict[str, Any] = {}


def _option_validator(schema: Mapping[str, Any]) -> Any:
    """The compiled validator of an option's schema, or why it is not a schema; one per distinct schema (every
    process checks each suite's defaults once per run, workers included)."""
    import json

    import jsonschema

    key = json.dumps(schema, sort_keys=True, default=str)
    if key not in _OPTION_VALIDATORS:
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        try:
            cls.check_schema(schema)
            _OPTION_VALIDATORS[key] = cls(schema)
        except jsonschema.SchemaError as error:
            _OPTION_VALIDATORS[key] = error.message
    return _OPTION_VALIDATORS[key]


def _shown(value: Any) -> str:
    import json

    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def accepts(schema: Mapping[str, Any]) -> str:
    """What a JSON Schema accepts, in words, for the one-line error (``a list of any of clean, slight (at least 1,
    no repeats)``); a schema beyond the common forms is shown as JSON."""
    if "enum" in schema:
        return "one of " + ", ".join(_shown(v) if not isinstance(v, str) else v for v in schema["enum"])
    if "const" in schema:
        return _shown(schema["const"])
    for combinator in ("anyOf", "oneOf"):
        if combinator in schema:
            return " or ".join(accepts(part) for part in schema[combinator])
    kind = schema.get("type")
    if kind == "array":
        items = schema.get("items") or {}
        inner = accepts(items) if items else "values"
        inner = ("any of " + inner[len("one of "):]) if inner.startswith("one of ") else inner
        notes = []
        if schema.get("minItems"):
            notes.append(f"at least {schema['minItems']}")
        if "maxItems" in schema:
            notes.append(f"at most {schema['maxItems']}")
        if schema.get("uniqueItems"):
            notes.append("no repeats")
        return f"a list of {inner}" + (f" ({', '.join(notes)})" if notes else "")
    if kind in ("integer", "number"):
        words = "an integer" if kind == "integer" else "a number"
        bounds = [f">= {schema['minimum']}" if "minimum" in schema else "",
                  f"> {schema['exclusiveMinimum']}" if "exclusiveMinimum" in schema else "",
                  f"<= {schema['maximum']}" if "maximum" in schema else "",
                  f"< {schema['exclusiveMaximum']}" if "exclusiveMaximum" in schema else ""]
        bounds = [b for b in bounds if b]
        return words + (f" {' and '.join(bounds)}" if bounds else "")
    if kind == "string":
        words = "a non-empty string" if schema.get("minLength") == 1 else "a string"
        return words + (f" matching {schema['pattern']}" if "pattern" in schema else "")
    if kind == "boolean":
        return "true or false"
    if kind == "null":
        return "null"
    if isinstance(kind, list):
        return " or ".join(accepts({**schema, "type": k}) for k in kind)
    return "a value matching the schema " + _shown(schema)


#: Folders never searched for suite definitions: pytest's default ``norecursedirs`` (and hidden folders).
