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
"""

from __future__ import annotations

import json
import re
import statistics
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

from pytest_toolbench.contract.data_files import load_json, load_jsonl
from pytest_toolbench.contract.suite import NOT_SCORED, Case, Metric, Request
from .decoders.formats import decode_format
from .gold import concrete_calls, render_calls
from .prompt import hinted_functions, native_tools, python_literal

CATEGORY = "format_sensitivity"
ID_FILE = "BFCL_v4_format_sensitivity.json"
#: entries per format in the pinned data (the id file lists 200)
ENTRIES = 200

_RETURN_FORMATS = ("python", "json", "verbose_xml", "concise_xml")
_DOC_FORMATS = ("python", "xml", "json")


def all_configs() -> list[str]:
    """``get_all_format_sensitivity_configs``: the 26 configs, in upstream's order."""
    configs = [f"ret_fmt={ret}&tool_call_tag={tag}&func_doc_fmt={doc}&prompt_fmt=plaintext&style=classic"
               for ret in _RETURN_FORMATS for tag in ("True", "False") for doc in _DOC_FORMATS]
    configs.append("ret_fmt=python&tool_call_tag=False&func_doc_fmt=json&prompt_fmt=markdown&style=classic")
    configs.append("ret_fmt=python&tool_call_tag=False&func_doc_fmt=json&prompt_fmt=plaintext&style=experimental")
    return configs


CONFIGS = tuple(all_configs())
_CONFIG = re.compile(r"^ret_fmt=(python|json|verbose_xml|concise_xml)&tool_call_tag=(True|False)"
                     r"&func_doc_fmt=(python|xml|json)&prompt_fmt=(plaintext|markdown)&style=(classic|experimental)$")


@dataclass(frozen=True)
class Config:
    """``parse_prompt_variation_params``."""

    return_format: str
    tool_call_tag: bool
    doc_format: str
    prompt_format: str
    style: str

    @classmethod
    def parse(cls, text: str) -> "Config":
        match = _CONFIG.match(text)
        if not match:
            raise ValueError(f"not a format-sensitivity config: {text!r}")
        ret, tag, doc, layout, style = match.groups()
        return cls(ret, tag == "True", doc, layout, style)

    def keywords(self) -> tuple[str, ...]:
        """The markers of a case under this config (``-m "format_sensitivity and ret_json and tool_call_tag"``)."""
        return (f"ret_{self.return_format}", "tool_call_tag" if self.tool_call_tag else "no_tool_call_tag",
                f"doc_{self.doc_format}", f"prompt_{self.prompt_format}", f"style_{self.style}")


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


# -- the system prompt --------------------------------------------------------------------------------------------

# constants/default_prompts.py, transcribed verbatim (the missing space after the persona included)
_OUTPUT_FORMAT = {
    "python": "[func_name1(params_name1=params_value1, params_name2=params_value2...), func_name2(params)]",
    "json": '```json\n[{"function":"func_name1","parameters":{"param1":"value1","param2":"value2"...}},'
            '{"function":"func_name2","parameters":{"param":"value"}}]\n```',
    "verbose_xml": '<functions><function name="func_name1"><params><param name="param1" value="value1" '
                   'type="type1"/><param name="param2" value="value2" type="type2"/>...</params></function>'
                   '<function name="func_name2"><params><param name="param3" value="value3" type="type3"/>'
                   '</params></function></functions>',
    "concise_xml": '<functions><function name="func_name1"><param name="param1" type="type1">value1</param>'
                   '<param name="param2" type="type2">value2</param>...</function><function name="func_name2">'
                   '<param name="param3" type="type3">value</param></function></functions>',
}
_XML_TYPES = ("The type fields of the parameters in your function calls must be one of: string, integer, float, "
              "boolean, array, dict, or tuple.")
_PARAM_TYPES = {"python": "", "json": "", "verbose_xml": _XML_TYPES, "concise_xml": _XML_TYPES}
_STYLES = {
    "classic": {
        "persona": "You are an expert in composing functions.",
        "task": "You are given a question and a set of possible functions. Based on the question, you will need to "
                "make one or more function/tool calls to achieve the purpose. If none of the functions can be used, "
                "point it out. If the given question lacks the parameters required by the function, also point it "
                "out.",
        "tool_call_no_tag": "You should only return the function calls in your response.\n\nIf you decide to invoke "
                            "any of the function(s), you MUST put it in the format of {output_format}. {param_types} "
                            "You SHOULD NOT include any other text in the response.",
        "tool_call_with_tag": "You should only return the function calls in the <TOOLCALL> section. If you decide "
                              "to invoke any of the function(s), you MUST put it in the format of "
                              "<TOOLCALL>{output_format}</TOOLCALL>. {param_types} You SHOULD NOT include any other "
                              "text in the response.",
        "multiturn_behavior": "At each turn, you should try your best to complete the tasks requested by the user "
                              "within the current turn. Continue to output functions to call until you have "
                              "fulfilled the user's request to the best of your ability. Once you have no more "
                              "functions to call, the system will consider the current turn complete and proceed to "
                              "the next turn or task.",
        "available_tools": "Here is a list of functions in {format} format that you can invoke.\n{functions}\n",
    },
    "experimental": {
        "persona": "You are an expert in generating structured function calls.",
        "task": "You are given a user query and a set of available functions. Your task is to produce one or more "
                "function/tool calls to fulfill the user's request. If no suitable function exists, or required "
                "parameters are missing, clearly indicate this.",
        "tool_call_no_tag": "Respond with only the function calls.\n\nYou MUST format it exactly as "
                            "{output_format}. {param_types} Do NOT include any other text.",
        "tool_call_with_tag": "Return only the function calls enclosed in <TOOLCALL> tags.\n\nYou MUST format it "
                              "exactly as <TOOLCALL>{output_format}</TOOLCALL>. {param_types} Do NOT include any "
                              "other text.",
        "multiturn_behavior": "At every turn, aim to complete the user's tasks within that turn. Continue emitting "
                              "function calls until the request is satisfied to the best of your ability. Once no "
                              "more calls are needed, the system will proceed to the next turn.",
        "available_tools": "Below is a list of callable functions in the {format} style:\n{functions}\n",
    },
}
_LAYOUTS = {
    "plaintext": "{persona}{task}\n\n{tool_call_format}\n\n{multiturn_behavior}\n\n{available_tools}",
    "markdown": "{persona}\n\n## Task\n{task}\n\n## Tool Call Format\n{tool_call_format}\n\n## Multi-turn Behavior\n"
                "{multiturn_behavior}\n\n## Available Tools\n{available_tools}",
}


def system_prompt(config: str, functions: list[dict]) -> str:
    """``formulate_system_prompt(config, functions)``."""
    parsed = Config.parse(config)
    style = _STYLES[parsed.style]
    template = style["tool_call_with_tag" if parsed.tool_call_tag else "tool_call_no_tag"]
    tool_call_format = template.format(output_format=_OUTPUT_FORMAT[parsed.return_format],
                                       param_types=_PARAM_TYPES[parsed.return_format])
    available = style["available_tools"].format(format=parsed.doc_format,
                                                functions=function_doc(functions, parsed.doc_format))
    return _LAYOUTS[parsed.prompt_format].format(persona=style["persona"], task=style["task"],
                                                 tool_call_format=tool_call_format,
                                                 multiturn_behavior=style["multiturn_behavior"],
                                                 available_tools=available)


def function_doc(functions: list[dict], doc_format: str) -> str:
    """``format_function_doc``."""
    if doc_format == "xml":
        return _doc_xml(functions)
    if doc_format == "python":
        return _doc_python(functions)
    if doc_format == "json":
        return json.dumps(functions, indent=4)
    raise ValueError(f"Invalid function doc format: {doc_format}")


def _param_xml(name: str, meta: dict, required: list | None, level: int = 2) -> str:
    indent = " " * level * 2
    kind = meta.get("type", "string")
    description = meta.get("description", "")
    is_required = "true" if required is None or name in required else "false"
    if "enum" in meta:
        description += f" Enum values: {meta['enum']}."
    if "items" in meta and "type" in meta["items"]:
        kind = f"{kind}[{meta['items']['type']}]"
    elif "additionalProperties" in meta:
        kind = f"{kind}[{meta['additionalProperties'].get('type', 'string')}]"
    attributes = [f'name="{name}", type="{kind}", required="{is_required}"']
    if "default" in meta:
        attributes.append(f'default="{meta["default"]!r}"')
    # upstream removes every comma of the joined attributes (values included)
    parts = [f"{indent}<param " + " ".join(attributes).replace(",", "") + ">\n", f"{indent}  <desc>{description}</desc>\n"]
    if "properties" in meta:
        child_required = meta.get("required", None)
        parts.append(f"{indent}  <params>\n")
        for child, child_meta in meta["properties"].items():
            parts.append(_param_xml(child, child_meta, child_required, level + 2))
        parts.append(f"{indent}  </params>\n")
    parts.append(f"{indent}</param>\n")
    return "".join(parts)


def _doc_xml(functions: list[dict]) -> str:
    blocks = []
    for function in functions:
        schema = function["parameters"]
        text = f'<function name="{function["name"]}">\n  <desc>{function.get("description", "")}</desc>\n  <params>\n'
        for name, meta in schema.get("properties", {}).items():
            text += _param_xml(name, meta, schema.get("required", None), 2)
        text += "  </params>\n</function>\n"
        blocks.append(text)
    return "\n".join(blocks)


_PY_TYPES = {"string": "str", "number": "float", "integer": "int", "boolean": "bool"}


def _py_type(meta: dict) -> str:
    kind = meta.get("type", "string")
    if kind in _PY_TYPES:
        return _PY_TYPES[kind]
    if kind in {"array", "list", "tuple"} and "items" in meta:
        return f"list[{_py_type(meta['items'])}]"
    if kind in {"object", "dict"}:
        if "additionalProperties" in meta:
            return f"dict[str, {_py_type(meta['additionalProperties'])}]"
        return "dict"
    return kind


def _param_python(name: str, meta: dict, depth: int = 0) -> list[str]:
    indent = " " * 8 + " " * 4 * depth
    description = meta.get("description", "")
    if "enum" in meta:
        description += f" Enum values: {meta['enum']}."
    default = f", default={meta['default']!r}" if "default" in meta else ""
    lines = [f"{indent}{name} ({_py_type(meta)}{default}): {description}\n"]
    for child, child_meta in meta.get("properties", {}).items():
        lines.extend(_param_python(child, child_meta, depth + 1))
    return lines


def _doc_python(functions: list[dict]) -> str:
    docs: list[str] = []
    for function in functions:
        lines = [f"# Function: {function['name']}\n", '    """\n', f"    {function.get('description', '')}\n\n"]
        properties = function.get("parameters", {}).get("properties", {})
        if properties:
            lines.append("    Args:\n")
            for name, meta in properties.items():
                lines.extend(_param_python(name, meta))
        lines.append('    """\n')
        docs.append("".join(lines))
        docs.append("\n")
    return "\n\n".join(docs)


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
