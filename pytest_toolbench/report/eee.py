"""``--toolbench-eee=DIR``: the run exported to Every Eval Ever (``every-eval-ever`` 0.3.0, MIT, schema 0.3.0), so it
can be laid beside public leaderboard records and other harnesses' logs.

Per suite that ran, two files under ``DIR/data/<suite>/<developer>/<model>/`` (the layout of EEE's datastore):

- ``<uuid>.json``, one evaluation log (``eval.schema.json``): the model, the library (pytest-toolbench), and one
  evaluation result per figure of the suite's summary that has a value, with its counts and, where the run has one,
  its ``uncertainty``: the 95% ``confidence_interval`` the reports show (Wilson score, t, or a sampled run's
  design-based interval: ``report/stats.count_interval``) and the ``standard_error`` of the same kind (binomial
  ``sqrt(p(1-p)/n)`` for a proportion, ``sd/sqrt(n)`` for a mean over cases; none for a formula over pooled counts);
- ``<uuid>_samples.jsonl``, one line per scored case (``instance_level_eval.schema.json``): ``agentic`` with the
  parsed tool calls as the assistant's message when the case's output was read as tool calls, else ``single_turn``
  with the raw output; the verdict as ``evaluation`` (score 1 or 0, ``is_correct``).

The uuid is derived from the evaluation id (a version-4 layout, as the schema's file-name pattern asks), so the same
run exports to the same names. A case without a verdict (``not_run``) is not a sample and is left out.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from ..contract.suite import NOT_RUN
from ..run.records import CaseRecord
from ..run.summary import SuiteSummary
from .header import RunHeader
from .stats import count_interval, is_percentage

if TYPE_CHECKING:
    from .run_report import RunReport

SCHEMA_VERSION = "0.3.0"
LIBRARY = "pytest-toolbench"


def slug(text: str) -> str:
    """A path component: letters, digits, ``.``, ``_`` and ``-`` kept, any other run of characters one ``-``."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", str(text)).strip("-.") or "unknown"


def model_identity(header: RunHeader) -> tuple[str, str, str]:
    """(name, ``developer/model`` id, developer) of what answered: the model id as given (a local path by its folder
    name), the gold reference answers or the replayed outputs' folder when no model is named."""
    model = header.model_named
    backend = str(header.backend or "unknown")
    if not model:
        if backend == "gold":
            return "gold reference answers", f"{LIBRARY}/gold-reference-answers", LIBRARY
        name = f"replayed outputs: {header.replay}" if backend == "replay" else backend
        return name, f"unknown/{slug(Path(str(header.replay or backend)).name)}", "unknown"
    text = str(model)
    if text.startswith(("/", ".", "~")):  # a local checkpoint: its folder's name
        return text, f"local/{slug(Path(text).name)}", "local"
    developer, _, name = text.rpartition("/")
    developer = slug(developer) if developer else "unknown"
    return text, f"{developer}/{slug(name)}", developer


def uuid_of(text: str) -> str:
    return str(uuid.UUID(bytes=hashlib.sha256(text.encode("utf-8")).digest()[:16], version=4))


def as_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def details(values: Mapping[str, Any]) -> dict[str, str]:
    """``additional_details``: strings only, empty values left out."""
    return {key: value if isinstance(value, str) else as_text(value)
            for key, value in values.items() if value not in (None, "", [], {})}


def finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def uncertainty(metric: Any) -> dict[str, Any]:
    """The figure's 95% interval and standard error, each of the kind the reports use; {} when it has none."""
    found: dict[str, Any] = {}
    interval = count_interval(metric)
    estimate = metric.estimate
    if interval is not None and all(finite(bound) for bound in interval):
        method = (str(estimate.get("method") or "design-based") if estimate else
                  "t (mean ± t·sd/√n)" if metric.sd is not None else "Wilson score")
        found["confidence_interval"] = {"lower": float(interval[0]), "upper": float(interval[1]),
                                        "confidence_level": 0.95, "method": method}
    total = metric.total
    if not estimate and finite(total) and total >= 1 and finite(metric.value):
        if metric.sd is not None and finite(metric.sd) and total >= 2:
            found["standard_error"] = {"value": metric.sd / math.sqrt(total), "method": "analytic (sd/sqrt(n))"}
            found["standard_deviation"] = float(metric.sd)
        elif "confidence_interval" in found and metric.sd is None:  # a proportion of whole counts
            p = float(metric.value)
            found["standard_error"] = {"value": math.sqrt(p * (1 - p) / total),
                                       "method": "analytic (binomial: sqrt(p(1-p)/n))"}
        if found:
            found["num_samples"] = int(total)
    return found


def evaluation_result(suite: SuiteSummary, metric: Any, source: dict[str, Any]) -> dict[str, Any] | None:
    if not finite(metric.value):
        return None
    percentage = is_percentage(metric)
    config: dict[str, Any] = {
        "evaluation_description": metric.formula or metric.name, "metric_id": f"{suite.name}.{slug(metric.name)}",
        "metric_name": metric.name, "metric_kind": "accuracy" if percentage else "mean",
        "metric_unit": "proportion" if percentage else (metric.unit or "points"),
        "lower_is_better": metric.better == "lower", "score_type": "continuous",
        "min_score": 0.0 if percentage else None, "max_score": 1.0 if percentage else None,
        "additional_details": details({"group": metric.group, "better": metric.better,
                                       "incomplete": metric.incomplete, "scope": metric.scope})}
    score: dict[str, Any] = {"score": float(metric.value),
                             "details": details({"correct": metric.correct, "total": metric.total})}
    found = uncertainty(metric)
    if found:
        score["uncertainty"] = found
    return {"evaluation_result_id": f"{suite.name}.{slug(metric.name)}",
            "evaluation_name": f"{suite.name}.{metric.name}", "source_data": source, "metric_config": config,
            "score_details": score}


def tool_calls(decoded: Any) -> list[tuple[str, dict[str, str]]] | None:
    """The parsed output as (name, arguments) calls, or None when it is not a list of calls in a known shape:
    ``{"name"|"api_name"|"api": ..., "arguments"|"parameters"|"args": {...}}``, OpenAI's ``{"function": {...}}``
    or BFCL's ``{name: {arguments}}``; nested lists (a conversation's turns) are flattened."""
    if not isinstance(decoded, list):
        return None
    calls: list[tuple[str, dict[str, str]]] = []
    for item in decoded:
        if isinstance(item, list):
            inner = tool_calls(item)
            if inner is None:
                return None
            calls += inner
            continue
        if not isinstance(item, Mapping):
            return None
        if isinstance(item.get("function"), Mapping):
            item = item["function"]
        name = next((item[key] for key in ("name", "api_name", "api") if isinstance(item.get(key), str)), None)
        arguments: Any = next((item[key] for key in ("arguments", "parameters", "args") if key in item), None)
        if name is None and len(item) == 1:
            name, arguments = next(iter(item.items()))
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except ValueError:
                arguments = {"arguments": arguments}
        if not isinstance(name, str) or not isinstance(arguments, (Mapping, type(None))):
            return None
        calls.append((name, {str(key): value if isinstance(value, str) else as_text(value)
                             for key, value in (arguments or {}).items()}))
    return calls


def sample(record: CaseRecord, evaluation_id: str, model_id: str) -> dict[str, Any]:
    """One case as an instance-level record."""
    prompts = record.prompts
    raw_input = as_text(prompts) if prompts else f"{record.suite} case {record.case_id}"
    expected = record.expected
    reference = [] if expected is None else [expected if isinstance(expected, str) else as_text(expected)]
    calls = tool_calls(record.decoded)
    extracted = record.output if record.decoded is None else as_text(record.decoded)
    line: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION, "evaluation_id": evaluation_id, "model_id": model_id,
        "evaluation_name": record.suite,
        "sample_id": record.case_id + (f"#{record.sample}" if record.sample is not None else ""),
        "sample_hash": hashlib.sha256(f"{record.suite}\n{record.case_id}".encode("utf-8")).hexdigest(),
        "input": {"raw": raw_input, "reference": reference},
    }
    if calls:
        line["interaction_type"] = "agentic"
        line["output"] = None
        line["messages"] = [
            {"turn_idx": 0, "role": "user", "content": raw_input},
            {"turn_idx": 1, "role": "assistant", "content": record.output,
             "tool_calls": [{"id": f"call_{index}", "name": name, "arguments": arguments}
                            for index, (name, arguments) in enumerate(calls)]}]
    else:
        line["interaction_type"] = "single_turn"
        line["output"] = {"raw": [record.output]}
    line["answer_attribution"] = [{"turn_idx": 1 if calls else 0, "source": "messages" if calls else "output.raw",
                                   "extracted_value": extracted, "extraction_method": f"{record.suite} decoder",
                                   "is_terminal": True}]
    line["evaluation"] = {"score": 1.0 if record.passed else 0.0, "is_correct": bool(record.passed),
                          "num_turns": 2 if calls else 1, "tool_calls_count": len(calls) if calls else 0}
    line["error"] = None if record.passed else record.error_type
    line["metadata"] = details({"category": record.category, "error_type": record.error_type,
                                "finish_reason": record.finish_reason, "nodeid": record.nodeid,
                                "known_defect": record.known_defect, "labels": dict(record.labels)})
    return line


def documents(report: "RunReport") -> Iterable[tuple[Path, dict[str, Any], list[dict[str, Any]]]]:
    """Per suite: (its folder under the export, the aggregate log, the sample lines)."""
    header = report.run_header
    name, model_id, developer = model_identity(header)
    retrieved = f"{header.finished:.3f}" if finite(header.finished) else "0"
    backend = str(header.backend or "unknown")
    sampling = header.sampling
    generated = not header.reference_or_replayed
    by_suite: dict[str, list[CaseRecord]] = {}
    for record in sorted(report.records, key=lambda r: (r.suite, r.order, r.sample or 0)):
        if record.error_type != NOT_RUN:
            by_suite.setdefault(record.suite, []).append(record)
    for suite in report.summary.suites:
        evaluation_id = f"{suite.name}/{model_id}/{retrieved}"
        folder = Path("data") / slug(suite.name) / developer / slug(model_id.rpartition("/")[2])
        source = {"dataset_name": suite.title, "source_type": "other",
                  "additional_details": details({key: suite.data_source.get(key)
                                                 for key in ("description", "kind", "data_sha256")})}
        results = [result for metric in suite.metrics
                   if (result := evaluation_result(suite, metric, source)) is not None]
        args = {key: sampling.get(key) for key in ("temperature", "top_p", "top_k")
                if generated and finite(sampling.get(key))}
        if generated and isinstance(sampling.get("max_tokens"), int) and sampling["max_tokens"] >= 1:
            args["max_tokens"] = sampling["max_tokens"]
        if args:
            for result in results:
                result["generation_config"] = {"generation_args": args,
                                               "additional_details": details({"mode": header.mode})}
        log = {
            "schema_version": SCHEMA_VERSION, "evaluation_id": evaluation_id, "retrieved_timestamp": retrieved,
            "source_metadata": {"source_name": LIBRARY, "source_type": "evaluation_run",
                                "source_organization_name": LIBRARY, "evaluator_relationship": "third_party",
                                "additional_details": details({"backend": backend, "mode": header.mode,
                                                               "replay": header.replay})},
            "model_info": {"name": name, "id": model_id, "developer": developer,
                           "additional_details": {"deployment_type": {"vllm": "self_deployed",
                                                                      "openai": "externally_managed"}.get(
                                                      backend, "unknown"),
                                                  "model_availability": "unknown", "backend": backend}},
            "eval_library": {"name": LIBRARY, "version": str(header.plugin or "unknown"),
                             "additional_details": details({"suite": suite.name, "title": suite.title})},
            "evaluation_results": results,
        }
        if finite(header.started):
            log["evaluation_timestamp"] = f"{header.started:.3f}"
        lines = [sample(record, evaluation_id, model_id) for record in by_suite.get(suite.name, [])]
        yield folder, log, lines


class EeeWriter:
    """The built-in writer of ``--toolbench-eee`` (``report/writers.py``): ``path`` is the export's folder."""

    name = "eee"
    what = "Every Eval Ever export"

    def __init__(self, path: Path):
        self.path = path

    def write(self, report: "RunReport") -> Path:
        for folder, log, lines in documents(report):
            stem = uuid_of(log["evaluation_id"])
            text = "".join(json.dumps(line, ensure_ascii=False, allow_nan=False) + "\n" for line in lines)
            log["detailed_evaluation_results"] = {
                "format": "jsonl", "file_path": f"{folder.as_posix()}/{stem}_samples.jsonl",
                "hash_algorithm": "sha256", "checksum": hashlib.sha256(text.encode("utf-8")).hexdigest(),
                "total_rows": len(lines)}
            target = self.path / folder
            target.mkdir(parents=True, exist_ok=True)
            (target / f"{stem}_samples.jsonl").write_text(text, encoding="utf-8")
            (target / f"{stem}.json").write_text(json.dumps(log, ensure_ascii=False, indent=2, allow_nan=False)
                                                 + "\n", encoding="utf-8")
        return self.path
