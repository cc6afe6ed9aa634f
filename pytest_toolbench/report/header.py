"""The run header as one typed value: what the writers read of it, read once (``RunHeader.read``) instead of through
string keys in each writer.

The header itself stays the mapping the run makes (``run/context.py``) and the JSON results carry unchanged; this is
a view of it. A field the run did not record is None (or empty), as ``header.get`` gave.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


@dataclass(frozen=True)
class RunHeader:
    """What answered, how, on what, when."""

    backend: str | None = None
    #: ``--model`` as given (None: none named; the fingerprint may name the engine's)
    model: str | None = None
    mode: str | None = None
    #: the replayed results folder and how it was read (replay backend)
    replay: str | None = None
    replay_mode: str | None = None
    user_simulator: str | None = None
    #: ``--toolbench-limit`` (debugging: first N per category)
    limit: int | None = None
    #: ``--toolbench-sample``: ``{count | fraction, seed}``
    sample: Mapping[str, Any] | None = None
    #: the sampling settings (``temperature``, ``seed``, ``max_tokens``, ..., ``sent``: per suite as sent)
    sampling: Mapping[str, Any] = field(default_factory=dict)
    #: the engine's fingerprint (``model``, ``tool_parser``, ``versions``, ``prompt_format``)
    fingerprint: Mapping[str, Any] = field(default_factory=dict)
    #: the generation figures (engine backends): requests, tokens, seconds, rates, earlier runs
    generation: Mapping[str, Any] | None = None
    plugin: str | None = None
    pytest: str | None = None
    python: str | None = None
    started: float | None = None
    finished: float | None = None
    interrupted: str | None = None

    @classmethod
    def read(cls, header: Mapping[str, Any]) -> "RunHeader":
        generation = header.get("generation")
        sample = header.get("sample")
        return cls(
            backend=header.get("backend"), model=header.get("model"), mode=header.get("mode"),
            replay=header.get("replay"), replay_mode=header.get("replay_mode"),
            user_simulator=header.get("user_simulator"), limit=header.get("limit"),
            sample=sample if isinstance(sample, Mapping) and sample else None,
            sampling=_mapping(header.get("sampling")), fingerprint=_mapping(header.get("fingerprint")),
            generation=generation if isinstance(generation, Mapping) else None,
            plugin=header.get("plugin"), pytest=header.get("pytest"), python=header.get("python"),
            started=header.get("started"), finished=header.get("finished"), interrupted=header.get("interrupted"))

    @property
    def model_named(self) -> str | None:
        """The model the run names: ``--model``, else the engine fingerprint's."""
        return self.model or self.fingerprint.get("model")

    @property
    def reference_or_replayed(self) -> bool:
        """The answers are not generated in this run (gold reference answers, replayed outputs)."""
        return self.backend in ("gold", "replay")
