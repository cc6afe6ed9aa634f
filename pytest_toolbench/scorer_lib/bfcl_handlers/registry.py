"""BFCL's open-model leaderboard rows: registry name -> the handler that prompts and decodes it, and its mode.

Data: ``registry.json`` beside this module, every entry of ``local_inference_model_map`` in
``bfcl_eval/constants/model_config.py`` of bfcl-eval 2026.3.23 (gorilla 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8),
frozen by ``scripts/make_bfcl_registry.py`` from the pinned wheel (the file records the wheel's and the source's
sha256). A row is what ``bfcl generate --model <name>`` builds: ``model_handler(model_name=<model_name>,
registry_name=<name>, is_fc_model=<is_fc_model>)``; ``bfcl evaluate`` checks its decoded calls with
``underscore_to_dot``.

Two facts of the upstream that a user must know when naming a row:

- every local handler derives from ``OSSHandler``, whose ``inference`` always takes the *prompting* path (one text
  prompt to the completions endpoint, the handler's own ``_format_prompt``); ``is_fc_model`` does not change how a
  local model is queried. What makes a row "FC" is its handler: an FC handler writes the tools block itself (e.g.
  QwenFCHandler's ``# Tools`` system block) and parses its own call markup. ``is_fc_model`` still matters upstream for
  format-sensitivity entries (skipped for FC rows) and is reported here as ``mode``.
- the rows ``meta-llama/Llama-3.2-*-FC``, ``Llama-3.3-70B-Instruct-FC`` and the Llama 4 ``-FC`` rows use the
  *prompting* ``LlamaHandler`` (BFCL's system prompt, Python-call replies) although flagged FC; only the Llama 3.1
  ``-FC`` rows use ``LlamaHandler_3_1``. ``mistralai/Ministral-8B-Instruct-2410`` uses ``MistralFCHandler`` although
  flagged prompting. Reproduced as they are.

Interface (stable; ``--toolbench-bfcl-model`` and the run header build on it):

- :func:`bfcl_row` ``(name: str) -> BfclRow``: the row of a registry name (exact, as ``bfcl generate --model``
  spells it); :class:`UnknownBfclRow` (a ``KeyError`` and ``ValueError``) names the closest rows otherwise.
- :func:`bfcl_rows` ``() -> tuple[BfclRow, ...]``: every row, in the upstream file's order.
- :func:`rows_for_checkpoint` ``(model: str) -> tuple[BfclRow, ...]``: the rows whose Hugging Face id
  (``model_name``) is ``model`` (case-insensitive), e.g. both ``Qwen/Qwen3-8B`` and ``Qwen/Qwen3-8B-FC``.
- :data:`REGISTRY_SOURCE`: where the data come from (for a header).
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, fields
from functools import lru_cache
from pathlib import Path
from typing import Any

REGISTRY_FILE = Path(__file__).with_name("registry.json")

#: Handlers of ``local_inference_model_map`` that are not local (they call an API and have no prompt text here).
API_HANDLERS = frozenset({"OpenAICompletionsHandler"})


@dataclass(frozen=True)
class BfclRow:
    """One leaderboard row of an open model, as ``model_config.py`` declares it."""

    name: str  #: registry name, ``--model`` of ``bfcl generate`` (e.g. ``Qwen/Qwen3-8B-FC``)
    model_name: str  #: the Hugging Face id the handler is built with (e.g. ``Qwen/Qwen3-8B``)
    display_name: str  #: the leaderboard's label (e.g. ``Qwen3-8B (FC)``)
    url: str
    org: str
    license: str
    handler: str  #: the upstream handler class (e.g. ``QwenFCHandler``)
    is_fc_model: bool
    underscore_to_dot: bool  #: the checker compares names with the ground truth's dots as underscores

    @property
    def mode(self) -> str:
        """``"FC"`` or ``"prompting"``, as the row is flagged upstream (see the module docstring)."""
        return "FC" if self.is_fc_model else "prompting"

    @property
    def local(self) -> bool:
        """Whether a local handler writes this row's prompt text (False: an API handler, nothing to render)."""
        return self.handler not in API_HANDLERS

    def to_json(self) -> dict[str, Any]:
        return {**{f.name: getattr(self, f.name) for f in fields(self)}, "mode": self.mode}


class UnknownBfclRow(KeyError, ValueError):
    """A registry name that is not a row of ``local_inference_model_map``; the message names the closest rows."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


@lru_cache(maxsize=1)
def _document() -> dict[str, Any]:
    return json.loads(REGISTRY_FILE.read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def bfcl_rows() -> tuple[BfclRow, ...]:
    """Every open-model row, in the order of the upstream file."""
    return tuple(BfclRow(**row) for row in _document()["rows"])


@lru_cache(maxsize=1)
def _by_name() -> dict[str, BfclRow]:
    return {row.name: row for row in bfcl_rows()}


def bfcl_row(name: str) -> BfclRow:
    """The row of a registry name, spelled as ``bfcl generate --model`` takes it."""
    found = _by_name().get(name)
    if found is not None:
        return found
    names = list(_by_name())
    folded = {n.lower(): n for n in names}
    close = [folded[n] for n in difflib.get_close_matches(name.lower(), list(folded), n=3, cutoff=0.6)]
    hint = f"; closest: {', '.join(close)}" if close else ""
    raise UnknownBfclRow(f"{name!r} is not an open-model row of BFCL (bfcl-eval 2026.3.23 model_config.py, "
                         f"{len(names)} rows){hint}")


def rows_for_checkpoint(model: str) -> tuple[BfclRow, ...]:
    """The rows built on the Hugging Face id ``model`` (both modes where the board has both)."""
    key = model.lower()
    return tuple(row for row in bfcl_rows() if row.model_name.lower() == key)


#: Where the rows come from, for a run header.
REGISTRY_SOURCE = "bfcl-eval 2026.3.23 (gorilla 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8) model_config.py"
