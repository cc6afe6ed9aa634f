"""BFCL v4's format-sensitivity category: 200 single-turn entries under each of 26 system-prompt formats.

Upstream (bfcl-eval 2026.3.23 = gorilla commit 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8, ``bfcl_eval/``):

- ``utils.py``: ``get_all_format_sensitivity_configs`` (4 return formats x tool-call tag or not x 3 function-doc
  formats, plaintext classic; then a markdown and an experimental variant of the default), and
  ``load_format_sensitivity_test_cases``: the ids listed in ``BFCL_v4_format_sensitivity.json``, per category in the
  file's order and, within one, in the data file's order, each entry under every config, numbered as they come:
  ``format_sensitivity_<n>:<config>:<original id>`` (n = entry index x 26 + config index). The entries are loaded
  with the language hint, and ``load_dataset_entry("format_sensitivity")`` adds it once more for generation, so the
  function descriptions a model sees end with the Python hint twice.
- ``model_handler/utils.py``: ``formulate_system_prompt`` (the config's templates of
  ``constants/default_prompts.py``, the docs as JSON, XML or Python stubs: ``_generate_function_doc_xml``,
  ``_generate_function_doc_python``), placed by ``system_prompt_pre_processing_chat_model`` as for every prompting
  entry (the config read from the id).
- ``eval_checker/eval_runner.py``: ``format_sensitivity_runner``: each entry decoded in its config's return format and
  tag (``_evaluate_single_ast_entry``, Python), checked by the AST checker with the ORIGINAL id as the category (so
  ``parallel`` / ``multiple`` entries are checked as such); accuracy per config, and across the configs' accuracies
  Max Delta = (max - min) x 100, Std Dev = ``statistics.stdev`` x 100 and Variance = ``statistics.variance`` x 100^2,
  each rounded to 2 decimals (0.0 with fewer than two configs). The category is non-scoring
  (``NON_SCORING_CATEGORY``): it is in no Overall.
- ``_llm_response_generation.py``: FC models skip the category (prompting rows only).

The configs and the system prompt each one gives are ``format_prompts.py``.
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable, Sequence

from pytest_toolbench.contract.data_files import load_json, load_jsonl
from pytest_toolbench.contract.suite import NOT_SCORED, Case, Metric, Request
from .decoders.formats import decode_format
from .format_prompts import CONFIGS, Config, system_prompt
from .gold import concrete_calls, render_calls
from .prompt import hinted_functions, native_tools, python_literal

CATEGORY = "format_sensitivity"
ID_FILE = "BFCL_v4_format_sensitivity.json"
#: entries per format in the pinned data (the id file lists 200)
ENTRIES = 200


def split_id(case_id: str) -> tuple[str, str, str] | None:
    """``format_sensitivity_<n>``, the config and the original id ("" in a case id of this suite, which leaves it
    out) of a format-sensitivity id, or None."""
    parts = case_id.split(":")
    if len(parts) not in (2, 3) or not parts[0].startswith(CATEGORY + "_"):
        return None
    return parts[0], parts[1], parts[2] if len(parts) == 3 else ""


def case_id_of(upstream_id: str) -> str:
    """This suite's case id of an upstream format-sensitivity id (``format_sensitivity_<n>:<config>:<original
    id>``, as `bfcl generate` writes it): the id without its original id. The number alone is unique (upstream
    numbers the 5,200 entries in one sequence); leaving the original id out keeps a category's name out of the
    pytest node name, so ``-k simple_python`` selects that category, not the format items built from its entries
    (``-k format_sensitivity`` / ``-m format_sensitivity`` select these). Any other id is returned as it is."""
    parts = split_id(upstream_id)
    return f"{parts[0]}:{parts[1]}" if parts is not None else upstream_id


# -- loading ------------------------------------------------------------------------------------------------------


def load_format_cases(data_dir: Path, answer_schema: dict, prompt_schema: dict) -> list[Case]:
    """The 5,200 cases (see the module docstring); none when the id file is absent (the shipped samples)."""
    id_file = data_dir / ID_FILE
    if not id_file.is_file():
        return []
    listed = load_json(id_file)
    cases: list[Case] = []
    index = 0
    for category, ids in listed.items():
        if not ids:
            continue
        wanted = set(ids)
        prompts = load_jsonl(data_dir / f"BFCL_v4_{category}.json", prompt_schema)
        answers = load_jsonl(data_dir / "possible_answer" / f"BFCL_v4_{category}.json", answer_schema)
        # upstream filters the ground truth by id (filter_entries_by_id), then pairs by position
        by_id = {answer["id"]: answer for answer in answers}
        for prompt in prompts:
            if prompt["id"] not in wanted:
                continue
            for config in CONFIGS:
                upstream_id = f"{CATEGORY}_{index}:{config}:{prompt['id']}"
                cases.append(Case(
                    case_id=case_id_of(upstream_id),
                    category=CATEGORY,
                    payload={"id": upstream_id, "original_id": prompt["id"], "original_category": category,
                             "config": config, "question": prompt["question"], "function": prompt["function"],
                             "ground_truth": by_id[prompt["id"]]["ground_truth"]},
                    keywords=Config.parse(config).keywords(),
                ))
                index += 1
    return cases


# -- requests -----------------------------------------------------------------------------------------------------


def generation_functions(case: Case) -> list[dict]:
    """The docs a model is shown: the Python hint added twice (see the module docstring)."""
    return hinted_functions(hinted_functions(case.payload["function"], "simple_python"), "simple_python")


def build_request(case: Case) -> Request:
    """``system_prompt_pre_processing_chat_model`` with the case's config (prompting only: upstream skips FC
    models, so ``tools`` are the category's native tools for a request that still names them)."""
    payload = case.payload
    functions = generation_functions(case)
    messages = [dict(message) for message in payload["question"][0]]
    prompt = system_prompt(payload["config"], functions)
    if messages and messages[0]["role"] == "system":
        messages[0]["content"] = prompt + "\n\n" + messages[0]["content"]
    else:
        messages.insert(0, {"role": "system", "content": prompt})
    return Request(messages=messages, tools=native_tools(payload["function"], "simple_python"),
                   native_messages=[dict(message) for message in payload["question"][0]], functions=functions)


# -- scoring ------------------------------------------------------------------------------------------------------


def decode(case: Case, text: str) -> Any:
    config = Config.parse(case.payload["config"])
    return decode_format(text, config.return_format, config.tool_call_tag)


# -- gold ---------------------------------------------------------------------------------------------------------


def _calls(case: Case) -> list[tuple[str, list[tuple[str, Any]]]]:
    """The ground truth as concrete calls (the first acceptable value of each parameter, as :mod:`.gold`)."""
    return [(name, [(parameter, value) for parameter, value, _ in arguments])
            for name, arguments in concrete_calls(case.payload["ground_truth"], case.payload["function"])]


def _xml_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def _xml_typed(value: Any) -> tuple[str, str]:
    """A value as (type attribute, text) that ``convert_value_by_type`` reads back as the value."""
    if isinstance(value, bool):
        return "boolean", "true" if value else "false"
    if isinstance(value, int):
        return "integer", str(value)
    if isinstance(value, float):
        return "float", repr(value)
    if isinstance(value, str):
        return "string", value
    if value is None:
        return "null", ""
    return ("dict" if isinstance(value, dict) else "array"), python_literal(value)


def gold_output(case: Case) -> str:
    """The ground truth written in the case's return format (and tag), as a model following the prompt would."""
    config = Config.parse(case.payload["config"])
    calls = _calls(case)
    if config.return_format == "python":
        text = render_calls(case.payload["ground_truth"], case.payload["function"], "python")
    elif config.return_format == "json":
        text = json.dumps([{"function": name, "parameters": dict(arguments)} for name, arguments in calls])
    elif config.return_format == "verbose_xml":
        text = "<functions>" + "".join(
            f'<function name="{_xml_escape(name)}"><params>' + "".join(
                '<param name="{}" value="{}" type="{}"/>'.format(_xml_escape(key), _xml_escape(_xml_typed(v)[1]),
                                                                 _xml_typed(v)[0]) for key, v in arguments)
            + "</params></function>" for name, arguments in calls) + "</functions>"
    else:
        text = "<functions>" + "".join(
            f'<function name="{_xml_escape(name)}">' + "".join(
                '<param name="{}" type="{}">{}</param>'.format(_xml_escape(key), _xml_typed(v)[0],
                                                               _xml_escape(_xml_typed(v)[1])) for key, v in arguments)
            + "</function>" for name, arguments in calls) + "</functions>"
    return f"<TOOLCALL>{text}</TOOLCALL>" if config.tool_call_tag else text


# -- figures ------------------------------------------------------------------------------------------------------


def metrics(results: Iterable[Any]) -> list[Metric]:
    """``format_sensitivity_runner``'s figures over the cases that ran: the category's accuracy, each config's
    accuracy (in the order the configs first occur, as upstream's dict), Max Delta, Std Dev and Variance across the
    configs' accuracies (upstream's ``statistics`` calls; its reports round them to 2 decimals of a percentage
    point, the values here are unrounded). None of them enters an Overall."""
    per_config: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    correct = total = 0
    for result in results:
        if result.category != CATEGORY or result.error_type == NOT_SCORED:
            continue
        config = (result.labels or {}).get("config")  # every verdict names it; a record without one: from the id
        if config is None:
            parts = split_id(result.case_id)
            if parts is None:
                continue
            config = parts[1]
        tally = per_config[config]
        tally[1] += 1
        total += 1
        if result.passed:
            tally[0] += 1
            correct += 1
    if not total:
        return []
    missing = [c for c in CONFIGS if c not in per_config]
    partial = "" if not missing and all(t == ENTRIES for _, t in per_config.values()) else \
        f"INCOMPLETE: {len(per_config)} of {len(CONFIGS)} formats ran, over {total} of {len(CONFIGS) * ENTRIES} cases"
    out = [Metric(CATEGORY, correct / total, correct=correct, total=total, group="category",
                  formula="correct / total over every format (non-scoring: in no Overall)")]
    accuracies = []
    for config, (right, count) in per_config.items():
        accuracies.append(right / count)
        out.append(Metric(f"{CATEGORY}:{config}", right / count, correct=right, total=count,
                          group="format_sensitivity", formula="correct / total under this prompt format"))
    several = len(accuracies) > 1
    out += [
        Metric(f"{CATEGORY}_max_delta", max(accuracies) - min(accuracies) if several else 0.0,
               group="format_sensitivity", better="lower", incomplete=partial,
               formula="max - min of the formats' accuracies (upstream: x100, rounded to 2 decimals; 0 with one "
                       "format)"),
        Metric(f"{CATEGORY}_std_dev", statistics.stdev(accuracies) if several else 0.0, group="format_sensitivity",
               better="lower", incomplete=partial,
               formula="sample standard deviation (statistics.stdev, n-1) of the formats' accuracies (upstream: x100, "
                       "rounded to 2 decimals)"),
        Metric(f"{CATEGORY}_variance", statistics.variance(accuracies) if several else 0.0,
               group="format_sensitivity", better="lower", unit="", incomplete=partial,
               formula="statistics.variance of the formats' accuracies as fractions (upstream reports it x100^2, "
                       "rounded to 2 decimals)"),
    ]
    return out


def official_figures(results: Sequence[Any]) -> dict[str, Any]:
    """The figures as upstream's score file header writes them (percentage points rounded to 2 decimals; each
    config's ``accuracy``, ``correct_count``, ``total_count``), for comparison with ``bfcl evaluate``."""
    found = {m.name: m for m in metrics(results)}
    if not found:
        return {}
    figures: dict[str, Any] = {
        "accuracy_max_delta": round(found[f"{CATEGORY}_max_delta"].value * 100, 2),
        "accuracy_variance": round(found[f"{CATEGORY}_variance"].value * 100 ** 2, 2),
        "accuracy_std": round(found[f"{CATEGORY}_std_dev"].value * 100, 2),
    }
    for name, metric in found.items():
        if name.startswith(CATEGORY + ":"):
            figures[name.split(":", 1)[1]] = {"accuracy": metric.value, "correct_count": int(metric.correct),
                                              "total_count": int(metric.total)}
    return figures


__all__ = ["CATEGORY", "CONFIGS", "Config", "build_request", "decode", "gold_output", "load_format_cases", "metrics",
           "official_figures", "split_id", "case_id_of", "system_prompt"]
