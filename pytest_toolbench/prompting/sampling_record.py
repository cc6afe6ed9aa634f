"""What a model backend actually sent, per suite, for the run header; and the sampling of BFCL's official path.

Why a record and not the options: the options say what was asked (``--toolbench-temperature`` unset means "each
suite's own", ``--toolbench-max-tokens`` unset means "each suite's own, else a fallback"), while a reader comparing a
run with a published one needs what every request carried: the temperature, top_p, the max_tokens (or the rule that
computed it per request), stop, whether special tokens were skipped when decoding, the seed, and any value the
engine changed on its own (vLLM raises a temperature in (0, 0.01) to 0.01 and warns once per request). The record
states each of those once per suite.

BFCL's official path (``bfcl generate`` -> ``vllm serve`` -> ``OSSHandler._query_prompting`` in
``bfcl_eval/model_handler/local_inference/base_oss_handler.py``, bfcl-eval 2026.3.23) sends ``/v1/completions`` with
``model``, ``prompt`` (the handler's text), ``temperature`` (``bfcl generate --temperature``, default 0.001) and
``max_tokens = min(4096, max_context_length - len(tokenizer.tokenize(prompt)) - 2)`` (1000 when the prompt does not
fit), plus ``stop_token_ids``/``skip_special_tokens`` only for a handler that sets them (GLM, MiniCPM-FC). No
``top_p``, no ``seed``: the server's defaults apply, i.e. vLLM's ``SamplingParams`` defaults overridden by the
checkpoint's ``generation_config.json`` (``vllm serve --generation-config auto``, vLLM's default:
``ModelConfig.get_diff_sampling_param``), and the completions defaults ``skip_special_tokens=True``,
``spaces_between_special_tokens=True``.

Pure data; imports nothing heavy.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

#: vLLM's ``SamplingParams.__post_init__`` (vllm/sampling_params.py, ``_MAX_TEMP``): a temperature strictly between 0
#: and this is raised to it, on every platform (BFCL's 0.001 becomes 0.01), with a warning per request.
VLLM_MIN_TEMPERATURE = 1e-2

#: The generation-config keys ``vllm serve`` takes as request defaults (``ModelConfig.get_diff_sampling_param``);
#: ``max_new_tokens`` is among them upstream but BFCL always sends ``max_tokens``.
SERVER_DEFAULT_KEYS = ("repetition_penalty", "presence_penalty", "frequency_penalty", "temperature", "top_k", "top_p",
                       "min_p")

#: What the completions endpoint decodes with when the request does not say (vLLM's ``CompletionRequest``).
SERVER_DECODING = {"skip_special_tokens": True, "spaces_between_special_tokens": True}


def read_generation_config(model: str, engine_args: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The checkpoint's ``generation_config.json`` as ``vllm serve`` reads it by default, or {} (no file, a Hub id not
    in the local cache, or ``generation_config=vllm`` among the engine arguments, which turns the defaults off)."""
    engine_args = engine_args or {}
    source = engine_args.get("generation_config", "auto")
    if source == "vllm":
        return {}
    folder = Path(model if source == "auto" else str(source)).expanduser()
    path: Path | None = folder / "generation_config.json" if folder.is_dir() else None
    if path is None and source == "auto":
        try:
            from huggingface_hub import try_to_load_from_cache
        except ImportError:
            return {}
        found = try_to_load_from_cache(model, "generation_config.json", revision=engine_args.get("revision"))
        path = Path(found) if isinstance(found, str) else None
    if path is None or not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def server_defaults(generation_config: Mapping[str, Any]) -> dict[str, Any]:
    """The sampling defaults a ``vllm serve`` of this checkpoint applies to a request that leaves them out."""
    return {key: generation_config[key] for key in SERVER_DEFAULT_KEYS if generation_config.get(key) is not None}


def official_sampling(temperature: float, max_tokens: int, generation_config: Mapping[str, Any],
                      handler_extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``SamplingParams`` keyword arguments equal to what BFCL's official path gets from its server: the
    checkpoint's defaults, then the temperature and max_tokens BFCL sends, the handler's own extras, the server's
    decoding defaults; no seed."""
    params: dict[str, Any] = dict(server_defaults(generation_config))
    params.update(temperature=temperature, max_tokens=max_tokens)
    params.update(SERVER_DECODING)
    params.update(handler_extra or {})
    return params


def engine_changes(params: Mapping[str, Any]) -> dict[str, Any]:
    """What vLLM itself changes in these parameters (keyword -> the value it uses)."""
    temperature = params.get("temperature")
    if isinstance(temperature, (int, float)) and 0 < temperature < VLLM_MIN_TEMPERATURE:
        return {"temperature": VLLM_MIN_TEMPERATURE}
    return {}


class SamplingRecord:
    """Per suite: the requests counted, each sampling key's value (or the distinct values seen), max_tokens as the
    range sent and the rule that computed it, and each value the engine changed, once."""

    #: keys whose absence from a request is worth stating ("not sent": the server's default applies)
    STATED = ("temperature", "top_p", "top_k", "repetition_penalty", "max_tokens", "stop", "stop_token_ids",
              "skip_special_tokens", "seed")

    def __init__(self) -> None:
        self._suites: dict[str, dict[str, Any]] = {}

    def add(self, suite: str, params: Mapping[str, Any], *, max_tokens_rule: str | None = None,
            changed: Mapping[str, Any] | None = None, notes: Mapping[str, str] | None = None) -> None:
        entry = self._suites.setdefault(suite, {"requests": 0, "values": {}, "max_tokens": None, "rule": None,
                                                "changed": {}, "notes": {}})
        entry["requests"] += 1
        for key, value in params.items():
            if key == "max_tokens":
                low, high = entry["max_tokens"] or (value, value)
                entry["max_tokens"] = (min(low, value), max(high, value))
                continue
            seen = entry["values"].setdefault(key, [])
            if value not in seen:
                seen.append(value)
        for key in self.STATED:
            if key not in params:
                seen = entry["values"].setdefault(key, [])
                if "not sent" not in seen:
                    seen.append("not sent")
        if max_tokens_rule:
            entry["rule"] = max_tokens_rule
        for key, value in (changed or {}).items():
            entry["changed"][key] = {"sent": params.get(key), "used": value}
        entry["notes"].update(notes or {})

    def __bool__(self) -> bool:
        return bool(self._suites)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for suite, entry in sorted(self._suites.items()):
            shown: dict[str, Any] = {"requests": entry["requests"]}
            for key, seen in entry["values"].items():
                if seen == ["not sent"] and key not in self.STATED:
                    continue
                shown[key] = seen[0] if len(seen) == 1 else seen
            if entry["max_tokens"] is not None:
                low, high = entry["max_tokens"]
                shown["max_tokens"] = low if low == high else {"min": low, "max": high}
            if entry["rule"]:
                shown["max_tokens_rule"] = entry["rule"]
            if entry["changed"]:
                shown["changed_by_engine"] = {
                    key: {**change, "why": "vLLM raises a temperature in (0, 0.01) to 0.01 (sampling_params.py)"}
                    if key == "temperature" else change for key, change in entry["changed"].items()}
            if entry["notes"]:
                shown["notes"] = dict(entry["notes"])
            out[suite] = shown
        return out
