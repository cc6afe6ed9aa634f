"""The reference answer as model text, and the serialisation of already-parsed predictions (replay of pred files).

The gold is written as JSON in which every ``'``, ``[`` and ``]`` inside a string is a ``\\u`` escape. Upstream's
parser replaces each apostrophe with a double quote and counts brackets without regard to quotes, so the verbatim
gold text (a Python literal) fails to parse in 4 samples (3 with an apostrophe in a value, 1 with ``True``, which
is not JSON); the escaped JSON text decodes to exactly the gold list under both protocols' gates. What remains
failing under gold are the samples with a repeated API name whose calls differ (``known_defects.yaml``).
"""

from __future__ import annotations

import json
from typing import Any

from pytest_toolbench.contract.suite import Case

_ESCAPES = {"'": "\\u0027", "[": "\\u005b", "]": "\\u005d"}


def _string(text: str) -> str:
    encoded = json.dumps(text, ensure_ascii=False)
    for char, escape in _ESCAPES.items():
        encoded = encoded.replace(char, escape)
    return encoded


def dump(value: Any) -> str:
    """JSON text of ``value`` that upstream's ToolLearning parser reads back unchanged (single line, no raw
    apostrophe or bracket inside strings). Numbers and constants are written as ``json.dumps`` writes them."""
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_string(str(key))}: {dump(item)}" for key, item in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(dump(item) for item in value) + "]"
    return json.dumps(value)


def gold_output(case: Case) -> str:
    return dump(case.payload["gold"])
