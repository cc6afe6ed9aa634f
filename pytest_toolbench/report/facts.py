"""The run header every report shows: what answered, how it was prompted and parsed, on which data, with what."""

from __future__ import annotations

import time
from typing import Any, Mapping

from ..run.summary import RunSummary


def _package_version(name: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return None


def report_title(summary: RunSummary | None, options: Any = None) -> str:
    """The one title of a run's reports (HTML page and Markdown comment alike)."""
    if summary is None:
        return f"pytest-toolbench: {getattr(options, 'model', None) or getattr(options, 'backend', '?')}"
    return f"pytest-toolbench: {dict(run_facts(summary, options))['Model']}"


def generation_figures(header: Mapping[str, Any]) -> str | None:
    """How much was generated, how long it took and how fast it ran (engine backends), in one line: the requests,
    prompt and generated tokens, tokens per second, wall seconds of generation and the engine's start-up."""
    figures = header.get("generation")
    if not isinstance(figures, Mapping):
        return None
    requests = figures.get("requests", figures.get("generated")) or 0
    cached = figures.get("cached") or 0
    text = (f"{requests:,} requests, {figures.get('prompt_tokens') or 0:,} prompt + "
            f"{figures.get('output_tokens') or 0:,} generated tokens in {figures.get('generation_s') or 0:.1f} s")
    if figures.get("prompt_tokens_per_s") is not None:
        text += (f" ({figures['prompt_tokens_per_s']:,.0f} prompt tok/s, "
                 f"{figures.get('output_tokens_per_s') or 0:,.1f} generated tok/s)")
    if figures.get("rounds"):
        text += f", {figures['rounds']} rounds"
    if cached:
        text += f"; {cached:,} from the cache"
    startup = figures.get("engine_startup_s")
    text += f"; engine start-up {startup:.1f} s" if startup is not None else "; no engine start-up"
    return text


def run_facts(summary: RunSummary, options: Any = None) -> list[tuple[str, str]]:
    header: Mapping[str, Any] = summary.header
    fingerprint: Mapping[str, Any] = header.get("fingerprint") or {}
    backend = header.get("backend") or "?"
    model = header.get("model") or fingerprint.get("model")
    if not model:
        model = {"gold": "none (gold reference answers)", "replay": f"replayed outputs: {header.get('replay')}"
                 }.get(backend, "?")
    mode = header.get("mode") or "?"
    parser = fingerprint.get("tool_parser") or getattr(options, "tool_parser", None)
    if not parser:
        parser = "detected from the chat template" if mode == "native" else "none (prompt mode: the suite's decoder)"
    sources = sorted({s.data_source.get("description", "?") for s in summary.suites})
    versions = [f"pytest-toolbench {header.get('plugin', '?')}", f"pytest {header.get('pytest', '?')}",
                f"Python {header.get('python', '?')}"]
    for name, value in sorted((fingerprint.get("versions") or {}).items()):
        if value:
            versions.append(f"{name} {value}")
    facts = [("Model", str(model)), ("Backend", str(backend)), ("Mode", str(mode)), ("Tool parser", str(parser)),
             ("Data", "; ".join(sources) or "?")]
    sampling = header.get("sampling") or {}
    if sampling and backend not in ("gold", "replay"):
        shown = {**sampling, "temperature": "each suite's" if sampling.get("temperature", 0) is None
                 else sampling.get("temperature")}
        facts.append(("Sampling", ", ".join(f"{k}={v}" for k, v in shown.items() if v is not None)))
    prompt_format = fingerprint.get("prompt_format") or {}
    if prompt_format.get("suites"):
        described = [f"{suite}: {entry.get('renderer')}" for suite, entry in sorted(prompt_format["suites"].items())]
        facts.append(("Prompt format", "; ".join(described + ["other suites: chat-template"])))
    if header.get("replay_mode"):
        facts.append(("Replay mode", str(header["replay_mode"])))
    if header.get("user_simulator"):
        facts.append(("Simulated user", header["user_simulator"]))
    if header.get("limit"):
        facts.append(("Limit", f"first {header['limit']} cases per category (debugging: the figures do NOT "
                               "estimate the full benchmark; for a smoke tier use --toolbench-sample)"))
    if header.get("sample"):
        sample = header["sample"]
        drawn = sample["count"] if sample.get("count") is not None else f"{100 * sample['fraction']:g}%"
        facts.append(("Sample", f"--toolbench-sample={drawn}, seed {sample['seed']}: stratified random sample; "
                                "every figure is an estimate of the full benchmark's with its 95% interval"))
    generation = generation_figures(header)
    if generation:
        facts.append(("Generation", generation))
    facts.append(("Versions", ", ".join(versions)))
    if header.get("started") and header.get("finished"):
        started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(header["started"]))
        facts.append(("Run", f"{started}, {header['finished'] - header['started']:.1f}s"))
    return facts
