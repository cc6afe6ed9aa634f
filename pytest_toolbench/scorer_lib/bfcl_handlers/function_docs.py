"""BFCL's function-doc conversion, once: ``bfcl_eval/model_handler/utils.py::convert_to_tool`` with
``GORILLA_TO_OPENAPI`` (``bfcl_eval/constants/type_mappings.py``), bfcl-eval 2026.3.23. The FC handlers' renderers
(Hammer, GLM, Granite, MiniCPM FC, ...) write their tools blocks from it, and the BFCL suite builds its native-mode
``tools`` with it (``suites/bfcl/scorer/prompt.py``).

Upstream's behaviour, quirks included: a parameter without a type, or with a type the mapping lacks, becomes
``string``; a ``float`` parameter gets ``format: float`` and " This is a float type value." appended to its
description (a float parameter without a description raises, as upstream's ``+=`` does); the item type of an array
(and of an array of arrays) is looked up in the mapping directly, so an unknown or missing item type raises
(:class:`FunctionDocError`, where upstream raises ``KeyError``) instead of falling back to ``string``.
"""

from __future__ import annotations

import json
import re
from typing import Any, Sequence

#: ``bfcl_eval/constants/type_mappings.py`` GORILLA_TO_OPENAPI
GORILLA_TO_OPENAPI = {
    "integer": "integer", "number": "number", "float": "number", "string": "string", "boolean": "boolean",
    "bool": "boolean", "array": "array", "list": "array", "dict": "object", "object": "object", "tuple": "array",
    "any": "string", "byte": "integer", "short": "integer", "long": "integer", "double": "number", "char": "string",
    "ArrayList": "array", "Array": "array", "HashMap": "object", "Hashtable": "object", "Queue": "array",
    "Stack": "array", "Any": "string", "String": "string", "Bigint": "integer",
}


class FunctionDocError(ValueError):
    """A function doc upstream's ``convert_to_tool`` fails on (``KeyError`` there): an unknown or missing item type,
    a float parameter without a description."""


def _cast_properties(properties: dict) -> dict:
    """``utils.py::_cast_to_openai_type``: an unknown type becomes ``string``, but an unknown item type raises (the
    mapping is indexed directly there)."""
    for value in properties.values():
        if "type" not in value:
            value["type"] = "string"
        else:
            declared = value["type"]
            if declared == "float":
                value["format"] = "float"
                value["description"] += " This is a float type value."
            value["type"] = GORILLA_TO_OPENAPI.get(declared, "string")
        if value["type"] in ("array", "object"):
            if "properties" in value:
                value["properties"] = _cast_properties(value["properties"])
            elif "items" in value:
                value["items"]["type"] = GORILLA_TO_OPENAPI[value["items"]["type"]]
                if value["items"]["type"] == "array" and "items" in value["items"]:
                    value["items"]["items"]["type"] = GORILLA_TO_OPENAPI[value["items"]["items"]["type"]]
                elif value["items"]["type"] == "object" and "properties" in value["items"]:
                    value["items"]["properties"] = _cast_properties(value["items"]["properties"])
    return properties


def convert_to_tool(functions: Sequence[Any], wrap: bool) -> list[dict]:
    """``utils.py::convert_to_tool`` for the OSSMODEL (``wrap`` False: bare docs) and OPENAI_COMPLETIONS (``wrap``:
    ``{"type": "function", "function": doc}``) styles, on a copy: dots in names become ``_``, parameters become an
    object, property types are cast (module docstring); :class:`FunctionDocError` where upstream raises."""
    tools = []
    for item in json.loads(json.dumps(list(functions))):
        item["name"] = re.sub(r"\.", "_", item["name"])
        item["parameters"]["type"] = "object"
        try:
            item["parameters"]["properties"] = _cast_properties(item["parameters"]["properties"])
        except KeyError as error:
            raise FunctionDocError(f"function doc {item['name']!r}: upstream's convert_to_tool fails on it "
                                   f"(KeyError {error})") from None
        tools.append({"type": "function", "function": item} if wrap else item)
    return tools
