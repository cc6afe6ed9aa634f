"""BFCL v4's format-sensitivity configs and the system prompt each one gives (bfcl-eval 2026.3.23 = gorilla commit
6ea57973c7a6097fd7c5915698c54c17c5b1b6c8, ``bfcl_eval/``): ``utils.py::get_all_format_sensitivity_configs`` (the 26
configs, in upstream's order), ``parse_prompt_variation_params`` (:class:`Config`) and ``model_handler/utils.py``'s
``formulate_system_prompt`` (the templates of ``constants/default_prompts.py``; the function docs as JSON, XML or
Python stubs). The category itself (cases, requests, decoding, gold, figures) is ``format_sensitivity.py``."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

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
