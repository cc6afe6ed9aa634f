"""suite.yaml's schema in words: the field table of the docs (:func:`schema_table`), every place a field may be
(:func:`field_locations`), and the error for a field in the wrong place that says where it belongs
(:func:`misplaced_field_error`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator, Mapping

import yaml

from .errors import DataError
from .suite_options import accepts
from .suite_schema import SUITE_SCHEMA
from .yaml_files import _SAFE_LOADER, _line_of

def field_locations(schema: Mapping[str, Any] = SUITE_SCHEMA, at: tuple[str, ...] = ()
                    ) -> Iterator[tuple[tuple[str, ...], Mapping[str, Any]]]:
    """Every mapping of fixed fields in the schema: ``(where, its schema)``, ``where`` a path of field names in which
    ``-`` stands for each entry of a list and ``<name>`` for each key of a mapping of free keys."""
    if not isinstance(schema, Mapping):
        return
    if "properties" in schema:
        yield at, schema
        for key, sub in schema["properties"].items():
            yield from field_locations(sub, (*at, key))
    if isinstance(schema.get("items"), Mapping):
        yield from field_locations(schema["items"], (*at, "-"))
    if isinstance(schema.get("additionalProperties"), Mapping):
        yield from field_locations(schema["additionalProperties"], (*at, "<name>"))
    for branch in (*schema.get("oneOf", ()), *schema.get("anyOf", ())):
        if "properties" in branch:  # the alternatives' fields are those of the mapping they describe
            yield from ((at, sub) for where, sub in field_locations(branch, at) if where == at)


def schema_table(schema: Mapping[str, Any] = SUITE_SCHEMA) -> str:
    """The suite.yaml reference, as the Markdown table docs/adding-a-suite.md shows (a test keeps the two equal):
    one row per field, written as a path (``data.upstream.commit``; ``[]`` for each entry of a list, ``<name>`` for
    each key of a mapping of free keys), whether it is required where its parent is present, what value it takes,
    and what it is."""
    rows = ["| field | required | value | what it is |", "|---|---|---|---|"]

    def walk(node: Mapping[str, Any], prefix: str) -> None:
        required = set(node.get("required", ()))
        forms = [branch["required"] for branch in node.get("oneOf", ()) if set(branch) == {"required"}]
        for key, sub in node.get("properties", {}).items():
            path = f"{prefix}{key}"
            need = "required" if key in required else "optional"
            if any(key in form for form in forms):
                need = " or ".join(" + ".join(f"`{k}`" for k in form) for form in forms) + ": one of these"
            rows.append(f"| `{path}` | {need} | {_value_words(sub)} | {_cell(sub.get('description', ''))} |")
            _descend(sub, path)

    def _descend(sub: Mapping[str, Any], path: str) -> None:
        if "properties" in sub:
            walk(sub, f"{path}.")
        elif isinstance(sub.get("items"), Mapping) and "properties" in sub["items"]:
            walk(sub["items"], f"{path}[].")
        elif isinstance(sub.get("additionalProperties"), Mapping) and "properties" in sub["additionalProperties"]:
            entry = sub["additionalProperties"]
            rows.append(f"| `{path}.<name>` | optional | {_value_words(entry)} | {_cell(entry.get('description', ''))} |")
            walk(entry, f"{path}.<name>.")

    walk(schema, "")
    return "\n".join(rows)


def _value_words(schema: Mapping[str, Any]) -> str:
    kind = schema.get("type")
    if kind == "object":
        return "a mapping"
    if kind == "array" and isinstance(schema.get("items"), Mapping) and schema["items"].get("type") == "object":
        return "a list of mappings" + (f" (at least {schema['minItems']})" if schema.get("minItems") else "")
    if not schema.get("type") and not schema.get("enum") and "const" not in schema:
        return "any value"
    import re

    words = accepts(schema).replace("a list of a string", "a list of strings")
    return _cell(re.sub(r"matching (\S+)", r"matching `\1`", words))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def where_words(where: tuple[str, ...]) -> str:
    """A schema location in YAML words: ``'data:'``, ``'data: upstream:'``, ``each entry of 'markers:'``."""
    if not where:
        return "the top level"
    if where[-1] == "-":
        return f"each entry of {where_words(where[:-1])}"
    return "'" + ": ".join(where) + ":'"


def misplaced_field_error(path: Path) -> DataError | None:
    """For a suite.yaml holding a field where the schema does not allow it, the error that says where it belongs
    (``'upstream' is not a top-level field; it belongs under 'data:'``) or which allowed name it resembles; None
    when the document has no such field (its first schema error is then reported as it is)."""
    import difflib

    import jsonschema

    text = path.read_text(encoding="utf-8")
    try:
        document = yaml.load(text, Loader=_SAFE_LOADER)
    except yaml.YAMLError:
        return None
    validator = jsonschema.Draft202012Validator(SUITE_SCHEMA)
    unknown = [error for error in validator.iter_errors(document) if error.validator == "additionalProperties"
               and error.validator_value is False and isinstance(error.instance, dict)]
    if not unknown:
        return None
    error = min(unknown, key=lambda e: (len(e.absolute_path), [str(p) for p in e.absolute_path]))
    allowed = set(error.schema.get("properties", {}))
    key = str(sorted(set(error.instance) - allowed, key=list(error.instance).index)[0])
    at = tuple("-" if isinstance(p, int) else str(p) for p in error.absolute_path)
    here = tuple(str(p) for p in error.absolute_path)
    locations = list(field_locations())
    # the same location in schema words: keys of a mapping of free keys (options: <name>:) read as "<name>"
    schema_at = next((where for where, sub in locations if sub is error.schema), at)
    if not schema_at:
        what = f"'{key}' is not a top-level field"
    elif schema_at[-1] == "-":
        what = f"'{key}' is not a field of an entry of {where_words(schema_at[:-1])}"
    else:
        what = f"'{key}' is not a field of {where_words(schema_at)}"
    belongs = [where for where, sub in locations if key in sub.get("properties", {}) and where != schema_at]
    if belongs:
        places = sorted(dict.fromkeys(belongs), key=len)
        hint = "it belongs under " + " or ".join(where_words(where) for where in places)
    else:
        close = difflib.get_close_matches(key, sorted(allowed), n=1, cutoff=0.6)
        anywhere = {name: where for where, sub in locations for name in sub.get("properties", {})}
        elsewhere = difflib.get_close_matches(key, sorted(anywhere), n=1, cutoff=0.75)
        if close:
            hint = f"did you mean '{close[0]}'?"
        elif elsewhere:
            hint = f"did you mean '{elsewhere[0]}' (under {where_words(anywhere[elsewhere[0]])})?"
        else:
            hint = "the fields allowed here are " + ", ".join(sorted(allowed))
    field = "/".join((*here, key))
    found = DataError(path, f"{what}; {hint}", line=_line_of(text, field))
    found.field = field  # for callers; the message itself already names the field and where it belongs
    return found
