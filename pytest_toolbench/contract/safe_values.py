"""Values made safe for every channel a record travels (the JSON file, the HTML payload, the xdist transport): the
rules of ``run.records``'s policy for a single value or text, kept in the contract layer so that every layer (the
backends too) cuts and escapes text the one same way. ``run.records`` applies them to whole records and re-exports
them.

- ints outside the signed 64-bit range become strings (``"12345…67890 (5000 digits)"`` when long);
- ``nan``/``inf``/``-inf`` become the strings ``"nan"``, ``"inf"``, ``"-inf"``;
- strings keep their text; lone surrogates are written as their ``\\udXXX`` escape text, and a string longer than its
  limit is cut with ``… [cut: N characters in all]``;
- containers deeper than :data:`MAX_DEPTH` levels end in ``"… [nested deeper than 40 levels]"``; a structure with
  more than :data:`MAX_NODES` values ends in ``"… [cut: more than 20000 values]"``;
- anything else (sets, tuples, bytes, objects) becomes a list or its bounded ``str``.
"""

from __future__ import annotations

import json
import math
from typing import Any, Mapping

MAX_DEPTH = 40
MAX_NODES = 20_000
#: Per-field limits in characters: the raw output is kept whole up to this size (a 5 MB answer is cut, with the cut
#: shown); explanations and decoded values are for reading.
OUTPUT_LIMIT = 200_000
TEXT_LIMIT = 20_000
LEAF_LIMIT = 10_000
#: a failed test's message: the explanation and the start of the output (see :func:`fail_message`)
MESSAGE_LIMIT = 30_000

INT64_BOUND = 1 << 63
_NOTE_ROOM = 64
_SAFE_STR_BITS = 12_000  # about 3,600 decimal digits: below Python's 4,300-digit str() limit


def utf8_text(text: str) -> str:
    """``text`` encodable as UTF-8: its lone surrogates (which no UTF-8 channel, and no tokenizer, takes) written as
    their ``\\udXXX`` escape text; any other text as it is."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def safe_text(text: str, limit: int = TEXT_LIMIT) -> str:
    """``text`` encodable as UTF-8 (lone surrogates as escape text) and at most ``limit`` characters (+ the note)."""
    if not isinstance(text, str):
        text = _bounded_str(text)
    total = len(text)
    cut = total > limit + _NOTE_ROOM  # the room keeps a cut text (limit + its note) as it is: idempotent
    if cut:
        text = text[:limit]
    text = utf8_text(text)
    if cut:
        text += f"… [cut: {total:,} characters in all]"
    return text


def _int_value(value: int) -> Any:
    if -INT64_BOUND <= value < INT64_BOUND:
        return value
    if value.bit_length() <= _SAFE_STR_BITS:
        digits = str(value)
        count = len(digits.lstrip("-"))
        return digits if len(digits) <= 60 else f"{digits[:30]}…{digits[-10:]} ({count} digits)"
    approx = int(value.bit_length() * math.log10(2)) + 1
    return f"{'-' if value < 0 else ''}<an int of about {approx:,} digits>"


def _bounded_str(value: Any) -> str:
    try:
        text = str(value)
    except Exception as error:  # a str() that raises (or recurses) says so instead of losing the record
        text = f"<unprintable {type(value).__name__}: {type(error).__name__}>"
    return text


class _Budget:
    def __init__(self, nodes: int):
        self.nodes = nodes


def safe_value(value: Any, leaf_limit: int = LEAF_LIMIT, max_depth: int = MAX_DEPTH,
               max_nodes: int = MAX_NODES) -> Any:
    """A JSON-safe copy of ``value`` under the rules in the module docstring (never raises, never recurses deeper
    than ``max_depth``)."""
    return _safe(value, 0, leaf_limit, max_depth, _Budget(max_nodes))


def _safe(value: Any, depth: int, leaf_limit: int, max_depth: int, budget: _Budget) -> Any:
    budget.nodes -= 1
    if budget.nodes < 0:
        return "… [cut: more than %d values]" % MAX_NODES
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return _int_value(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return value
    if isinstance(value, str):
        return safe_text(value, leaf_limit)
    if isinstance(value, (bytes, bytearray)):
        return safe_text(bytes(value).decode("utf-8", "backslashreplace"), leaf_limit)
    if isinstance(value, Mapping) or isinstance(value, (list, tuple, set, frozenset)):
        if depth >= max_depth:
            return f"… [nested deeper than {max_depth} levels]"
        if isinstance(value, Mapping):
            out: dict[str, Any] = {}
            for key, item in value.items():
                if budget.nodes < 0:
                    out["…"] = "[cut: more than %d values]" % MAX_NODES
                    break
                name = key if isinstance(key, str) else json.dumps(_safe(key, depth + 1, 200, max_depth, budget))
                out[safe_text(name, 200)] = _safe(item, depth + 1, leaf_limit, max_depth, budget)
            return out
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
        result = []
        for item in items:
            if budget.nodes < 0:
                result.append("… [cut: more than %d values]" % MAX_NODES)
                break
            result.append(_safe(item, depth + 1, leaf_limit, max_depth, budget))
        return result
    return safe_text(_bounded_str(value), leaf_limit)
