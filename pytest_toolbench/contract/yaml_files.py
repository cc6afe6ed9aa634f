"""YAML files validated with JSON Schema: errors name the file, the line of the offending field and the field."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import yaml

from .data_files import validate
from .errors import DataError

_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(path: Path, schema: Mapping[str, Any]) -> Any:
    """Parse a YAML file and validate it; errors name the file, the line of the offending field and the field."""
    text = path.read_text(encoding="utf-8")
    try:
        document = yaml.load(text, Loader=_SAFE_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise DataError(path, f"invalid YAML: {getattr(exc, 'problem', exc)}",
                        line=mark.line + 1 if mark else None) from None
    try:
        validate(document, schema, path)
    except DataError as error:
        raise DataError(path, error.message, line=_line_of(text, error.field), field=error.field) from None
    return document


def _line_of(text: str, field_path: str | None) -> int | None:
    """Find the line of a JSON-path field in YAML source, walking composed nodes (they keep their marks)."""
    node = yaml.compose(text)
    if node is None:
        return None
    line = node.start_mark.line + 1
    for part in (field_path or "").split("/"):
        if part in ("", "<root>"):
            continue
        if isinstance(node, yaml.MappingNode):
            match = next(((k, v) for k, v in node.value if k.value == part), None)
            if match is None:
                break
            line, node = match[0].start_mark.line + 1, match[1]
        elif isinstance(node, yaml.SequenceNode) and part.isdigit() and int(part) < len(node.value):
            node = node.value[int(part)]
            line = node.start_mark.line + 1
        else:
            break
    return line
