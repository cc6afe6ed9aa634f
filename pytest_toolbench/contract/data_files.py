"""Reading benchmark data files with JSON Schema validation.

Every file is validated when it is loaded, so a malformed file fails once with the file, the line and the field
(``DataError``), never later as a confusing ``KeyError`` inside a scorer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator, Mapping

from .errors import DataError


_VALIDATORS: dict[int, tuple[Any, Any]] = {}


def _validator(schema: Mapping[str, Any]):
    """One compiled validator per schema object (schemas are module constants, so ``id`` is a stable key)."""
    entry = _VALIDATORS.get(id(schema))
    if entry is None or entry[0] is not schema:
        import jsonschema

        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        if len(_VALIDATORS) > 256:  # schemas built on the fly would otherwise accumulate
            _VALIDATORS.clear()
        entry = _VALIDATORS[id(schema)] = (schema, cls(schema))
    return entry[1]


def validate(instance: Any, schema: Mapping[str, Any], path: Path | str, line: int | None = None) -> None:
    """Raise ``DataError`` naming the first offending field (as a JSON path) if ``instance`` breaks ``schema``."""
    validator = _validator(schema)
    if validator.is_valid(instance):  # the common case, several times cheaper than collecting errors
        return
    error = next(iter(sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))), None)
    if error is not None:
        field = "/".join(str(p) for p in error.absolute_path) or "<root>"
        raise DataError(path, error.message, line=line, field=field)


def load_jsonl(path: Path | str, schema: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """Read a JSON Lines file (blank lines skipped), validating each record against ``schema``."""
    return [record for _, record in iter_jsonl(path, schema)]


def iter_jsonl(path: Path | str, schema: Mapping[str, Any] | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, record)`` of a JSON Lines file (blank lines skipped), each record validated against
    ``schema``, for readers whose own later checks must name the line too."""
    path = Path(path)
    if not path.is_file():
        raise DataError(path, "file not found")
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                # Without its line break: a line cut short would otherwise be reported at "line 2 column 1" (json
                # skips the break as whitespace first), not at the column where the record stops.
                record = json.loads(line.rstrip("\r\n"))
            except json.JSONDecodeError as exc:
                raise DataError(path, f"invalid JSON ({exc.msg.removesuffix(' at')} at column {exc.colno})",
                                line=number) from None
            if schema is not None:
                validate(record, schema, path, line=number)
            yield number, record


def load_json(path: Path | str, schema: Mapping[str, Any] | None = None) -> Any:
    """Read a whole-file JSON document, validating it against ``schema``."""
    path = Path(path)
    if not path.is_file():
        raise DataError(path, "file not found")
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(path, f"invalid JSON ({exc.msg.removesuffix(' at')} at column {exc.colno})", line=exc.lineno) from None
    if schema is not None:
        _validate_document(document, schema, path)
    return document


def _validate_document(document: Any, schema: Mapping[str, Any], path: Path) -> None:
    """Validate a JSON array/object file; for arrays, report the offending element's index as its 'line'."""
    try:
        validate(document, schema, path)
    except DataError as error:
        if isinstance(document, list) and error.field and error.field.split("/")[0].isdigit():
            index, _, rest = error.field.partition("/")
            raise DataError(path, f"{error.message} (record {index})", line=None, field=rest or "<record>") from None
        raise
