"""The model's text into the call it makes: model output is data, decoded, never evaluated."""

from __future__ import annotations

import json
from typing import Any


def decode(text: str) -> tuple[dict[str, Any], str] | None:
    """``(call, echoed text)``, or None when the output is not an echo call."""
    try:
        call = json.loads(text)
        echoed = call["arguments"]["text"]
    except (ValueError, KeyError, TypeError):
        return None
    return call, echoed
