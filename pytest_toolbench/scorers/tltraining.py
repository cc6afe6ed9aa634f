"""TL-Training's single-turn evaluation protocol: nested TS / PI / CF on RoTBench Clean, BFCL executable and
ToolAlpaca eval_real, with TL-Training's error categories and reward on every failure.

TL-Training (arXiv 2412.15495, Junjie-Ye/TL-Training @ 77c875a9) ships no evaluation code; the protocol is the
paper's (§4.3-4.4, Table 2): TS = right tool, PI = right tool and parameter names, CF = right tool, names and
values, each counted over *all* cases (undecodable output is a failure). The stage rules are RoTBench's official
ones (``pytest_toolbench.scorers.rotbench``).

Datasets (categories), all read from the shared data root (suite.yaml ``data.folder: "."``):

* ``rot_clean``: RoTBench ``First_Turn/clean.json`` (105), with RoTBench's rules unchanged: any gold alternative,
  ``"None"`` values unchecked, finish/ask_to_user by position and exempt from values, and (option
  ``empty_input_fails``, default true as upstream) a call with empty arguments fails every stage;
* ``exec_simple|multiple|parallel|parallel_multiple``: BFCL's 240 retired executable cases (the paper's
  "239"); the gold call strings are parsed into calls (literal values; numeric expressions such as ``1/6`` are
  folded). The paper does not say how several calls are scored: here predicted and gold calls must pair up one to
  one (a multiset), and a stage holds when some pairing satisfies it for every pair;
* ``toolalpaca_real``: ToolAlpaca ``eval_real.json`` (114). Gold answers are sequences of steps; a single-turn answer
  is compared with the first step (its first predicted call against the first gold step).

Prompt. The paper runs each model in its own tool-use template (tools passed natively). Requests therefore carry
the tool docs in ``tools``; by default (option ``system_prompt: tl_codellama``) they also carry the only prompt the
TL-Training repository documents, the TL-CodeLLaMA-2 system message of Python ``def`` stubs (README @ 77c875a9,
"Inference"), so prompting-mode runs see the tools. Set ``system_prompt: none`` for native-only requests.

Output decoding is an explicit, ordered parser registry (the decoder used is recorded in ``details["parser"]``):
native ``tool_calls``; ``<tool_call>`` (Qwen-2.5/Hermes); ``[TOOL_CALLS]`` (Mistral); ReAct
``Action:``/``Action Input:`` with RoTBench's official parser (ToolLLaMA, Qwen-2); ``{"name", "parameters"}``
(Llama-3.1); ``[name(...)]`` and bare ``name(k=v)`` Python calls (NexusRaven, TL-CodeLLaMA-2); ``name\\n{json}``
(ChatGLM-4).
"""

from __future__ import annotations

import ast
import itertools
import json
import operator
import re
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ..data import load_json, load_jsonl
from ..errors import DataError
from ..parsing.tool_calls import ParseError, parse_hermes, parse_llama3_json, parse_mistral, parse_pythonic
from ..suite import FORMAT_ERROR, Case, CaseResult, Generation, Metric, Request, Verdict
from ..tl_failures import classify_call, classify_call_lists, tl_metrics, tool_signatures
from . import rotbench

SUITE = "tltraining"
BFCL_CATEGORIES = ("simple", "multiple", "parallel", "parallel_multiple")
DATASETS = {"rotbench_clean": "RoTBench Clean", "bfcl_exec": "BFCL-v3 executable", "toolalpaca_real": "ToolAlpaca"}
# Item names must not contain another suite's name: `pytest -k rotbench` / `-k bfcl` select those suites alone, and
# -k matches substrings of ids, categories and keywords. Hence `rot_clean` and `exec_*` here.
CATEGORY_DATASETS = {"rot_clean": "rotbench_clean", "toolalpaca_real": "toolalpaca_real"}

NO_OUTPUT = "no_output"
WRONG_TOOL = "wrong_tool"
WRONG_PARAM_NAMES = "wrong_param_names"
WRONG_VALUES = "wrong_values"
WRONG_CALL_COUNT = "wrong_call_count"

# TL-CodeLLaMA-2's pseudo-tools, as its README lists them; the RoTBench tool lists already end with them.
PSEUDO_TOOLS = [
    {"name": "ask_to_user", "description": "You can ask user for guidance when you think you need more information to "
                                           "handle the task, but you should use this tool as less as you can.",
     "parameters": {"type": "object", "properties": {"question": {"type": "string", "description":
                                                                    "The question you want to ask to user."}},
                    "required": ["question"]}},
    {"name": "finish", "description": "Finish the task and give your answer.",
     "parameters": {"type": "object", "properties": {"answer": {"type": "string",
                                                                 "description": "Your answer for the task."}},
                    "required": ["answer"]}},
]

BFCL_QUESTION_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["id", "question", "function"],
    "properties": {"id": {"type": "string"},
                   "question": {"type": "array", "minItems": 1, "items": {"type": "array", "items": {
                       "type": "object", "required": ["role", "content"]}}},
                   "function": {"type": "array", "items": {"type": "object", "required": ["name"]}}},
}
BFCL_ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["id", "ground_truth"],
    "properties": {"id": {"type": "string"}, "ground_truth": {"type": "array", "minItems": 1,
                                                               "items": {"type": "string"}}},
}
TOOLALPACA_SCHEMA: dict[str, Any] = {
    "type": "array",
    "items": {"type": "object", "required": ["Name", "Function_Description", "Instructions", "Golden_Answers"],
              "properties": {
                  "Name": {"type": "string"},
                  "Function_Description": {"type": "object", "additionalProperties": {"type": "string"}},
                  "Instructions": {"type": "array", "items": {"type": "string"}},
                  "Golden_Answers": {"type": "array", "items": {"type": "array", "minItems": 1, "items": {
                      "type": "object", "required": ["Action", "Action_Input"],
                      "properties": {"Action": {"type": "string"}, "Action_Input": {"type": "string"}}}}}}},
}


# ----------------------------------------------------------------------------------------------------------------
# Python-call text (BFCL ground truth, TL-CodeLLaMA-2 output): literals only, never evaluated

_ARITHMETIC: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}


def _literal(node: ast.AST) -> Any:
    """A literal value; numeric arithmetic between literals (BFCL writes ``p=1/6``) is folded."""
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        left, right = _literal(node.left), _literal(node.right)
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (left, right)):
            raise ValueError("arithmetic on non-numbers")
        if isinstance(node.op, ast.Pow) and abs(right) > 64:
            raise ValueError("exponent too large")
        return _ARITHMETIC[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _literal(node.operand)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise ValueError("sign on a non-number")
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_literal(e) for e in node.elts]
    if isinstance(node, ast.Dict):
        return {_literal(k) if k is not None else None: _literal(v) for k, v in zip(node.keys, node.values)}
    value = ast.literal_eval(node)
    if isinstance(value, (tuple, set)):
        return list(value)
    return value


def parse_python_calls(text: str, signatures: Mapping[str, Sequence[str]] | None = None) -> list[dict[str, Any]]:
    """``name(k=v, ...)`` calls, one per line or as a list/tuple; raises ``ValueError`` when not decodable.

    Positional arguments are accepted for tools in ``signatures`` and named after the parameters in their order
    (BFCL's gold writes ``calculate_mean([1,3,4,6,8])``).
    """
    body = text.strip()
    try:
        tree = ast.parse(body, mode="exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise ValueError(f"not Python calls: {exc}") from None
    nodes: list[ast.AST] = []
    for statement in tree.body:
        if not isinstance(statement, ast.Expr):
            raise ValueError("not a call expression")
        value = statement.value
        nodes.extend(value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value])
    calls = []
    for node in nodes:
        if not isinstance(node, ast.Call):
            raise ValueError("expected name(keyword=value, ...)")
        name = _call_name(node.func)
        arguments: dict[str, Any] = {}
        order = list((signatures or {}).get(name, ()))
        if len(node.args) > len(order) or any(isinstance(a, ast.Starred) for a in node.args):
            raise ValueError(f"positional arguments to {name!r} that its signature cannot name")
        for param, value in zip(order, node.args):
            try:
                arguments[param] = _literal(value)
            except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError, ZeroDivisionError,
                    OverflowError):
                raise ValueError(f"argument {param!r} is not a literal") from None
        for keyword in node.keywords:
            if keyword.arg is None:
                raise ValueError("**kwargs are not a call")
            try:
                arguments[keyword.arg] = _literal(keyword.value)
            except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError, ZeroDivisionError,
                    OverflowError):
                raise ValueError(f"argument {keyword.arg!r} is not a literal") from None
        calls.append({"name": name, "arguments": arguments})
    if not calls:
        raise ValueError("no call")
    return calls


def _call_name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_call_name(node.value)}.{node.attr}"
    raise ValueError("call target is not a name")


# ----------------------------------------------------------------------------------------------------------------
# Loading


def load_cases(data_dir: Path, definition: Mapping[str, Any]) -> list[Case]:
    data_dir = Path(data_dir)
    cases: list[Case] = []
    if (data_dir / "rotbench" / "First_Turn" / "clean.json").is_file():
        cases += _rotbench_cases(data_dir / "rotbench")
    question_dir = data_dir / "bfcl" / "unused_datasets" / "question"
    for category in BFCL_CATEGORIES:
        if (question_dir / f"BFCL_v4_exec_{category}.json").is_file():
            cases += _bfcl_cases(data_dir / "bfcl" / "unused_datasets", category)
    if (data_dir / "toolalpaca" / "eval_real.json").is_file():
        cases += _toolalpaca_cases(data_dir / "toolalpaca" / "eval_real.json")
    options = definition.get("options") or {}
    settings = {"system_prompt": options.get("system_prompt", "tl_codellama"),
                "empty_input_fails": bool(options.get("empty_input_fails", True))}
    if settings["system_prompt"] not in ("tl_codellama", "none"):
        raise DataError(data_dir, "options.system_prompt must be 'tl_codellama' or 'none'")
    cases = [Case(suite=c.suite, case_id=c.case_id, category=c.category, keywords=c.keywords,
                  payload={**c.payload, **settings}) for c in cases]
    if not cases:
        raise DataError(data_dir, "none of rotbench/First_Turn/clean.json, bfcl/unused_datasets/question/"
                                  "BFCL_v4_exec_*.json, toolalpaca/eval_real.json found")
    return cases


def _rotbench_cases(folder: Path) -> list[Case]:
    cases = []
    for source in rotbench.load_cases(folder, {"options": {"turns": ["First_Turn"], "levels": ["clean"]}}):
        payload = source.payload
        query = payload["history"][1]["value"]
        # RoTBench's user message ends with its own ReAct cue "\nBegin!\n"; the TL protocol sends the bare query.
        query = query[:-len("\nBegin!\n")] if query.endswith("\nBegin!\n") else query
        cases.append(Case(
            suite=SUITE, case_id=f"rot-clean-{payload['index']}", category="rot_clean",
            keywords=("rot", payload["scenario"].lower()),
            payload={"dataset": "rotbench_clean", "messages": [{"role": "user", "content": query}],
                     "tools": payload["tools"], "rotbench_gold": payload["gold"],
                     "gold": [[{"name": n, "arguments": a}] for n, a in rotbench.gold_alternatives(source)]}))
    return cases


def _bfcl_cases(folder: Path, category: str) -> list[Case]:
    questions = load_jsonl(folder / "question" / f"BFCL_v4_exec_{category}.json", BFCL_QUESTION_SCHEMA)
    answer_path = folder / "possible_answer" / f"BFCL_v4_exec_{category}.json"
    answers = {a["id"]: a for a in load_jsonl(answer_path, BFCL_ANSWER_SCHEMA)}
    cases = []
    for question in questions:
        if question["id"] not in answers:
            raise DataError(answer_path, f"no ground truth for {question['id']}")
        try:
            signatures = tool_signatures(question["function"])
            gold = [call for text in answers[question["id"]]["ground_truth"]
                    for call in parse_python_calls(text, signatures)]
        except ValueError as exc:
            raise DataError(answer_path, f"{question['id']}: ground truth is not a call ({exc})") from None
        cases.append(Case(
            suite=SUITE, case_id=question["id"], category=f"exec_{category}", keywords=("berkeley",),
            payload={"dataset": "bfcl_exec", "messages": [dict(m) for m in question["question"][0]],
                     "tools": question["function"], "gold": [gold]}))
    return cases


_PARAMETERS_LINE = re.compile(r"^Parameters: (\{.*\})$", re.MULTILINE)


def _toolalpaca_tool(name: str, description: str) -> dict[str, Any]:
    """ToolAlpaca's natural-language function doc as a JSON-schema tool (``"Required. type. text"`` per param)."""
    match = _PARAMETERS_LINE.search(description)
    parameters = json.loads(match.group(1)) if match else {}
    properties, required = {}, []
    for param, text in parameters.items():
        parts = str(text).split(". ", 2) if isinstance(text, str) else []
        is_required = bool(parts) and parts[0] == "Required"
        rest = parts[1:] if is_required else parts
        kind = rest[0].rstrip(".") if rest else "string"
        properties[param] = {"type": kind, "description": ". ".join(rest[1:]).strip()}
        if is_required:
            required.append(param)
    return {"name": name, "description": description.split("\n", 1)[0],
            "parameters": {"type": "object", "properties": properties, "required": required}}


def _toolalpaca_cases(path: Path) -> list[Case]:
    cases = []
    for api_index, api in enumerate(load_json(path, TOOLALPACA_SCHEMA)):
        tools = [_toolalpaca_tool(n, d) for n, d in api["Function_Description"].items()]
        if len(api["Instructions"]) != len(api["Golden_Answers"]):
            raise DataError(path, "Instructions and Golden_Answers differ in length", field=f"{api_index}")
        for number, (instruction, steps) in enumerate(zip(api["Instructions"], api["Golden_Answers"])):
            gold, defect = [], ""
            for step in steps:
                try:
                    arguments = json.loads(step["Action_Input"]) if step["Action_Input"].strip() else {}
                except ValueError:
                    arguments = None
                if not isinstance(arguments, dict):
                    # Upstream annotation defect (e.g. '"symbols": "symbols": [...]' in CurrencyBeacon): the tool is
                    # known, the arguments are not, so such a case can pass TS but never PI or CF.
                    defect = defect or f"gold Action_Input of {step['Action']} is not a JSON object"
                    arguments = {}
                gold.append({"name": step["Action"], "arguments": arguments})
            cases.append(Case(
                suite=SUITE, case_id=f"toolalpaca-{api_index}-{number}", category="toolalpaca_real",
                keywords=("toolalpaca",),
                payload={"dataset": "toolalpaca_real", "api": api["Name"], "gold_defect": defect,
                         "messages": [{"role": "user", "content": instruction}], "tools": tools, "gold": [gold]}))
    return cases


# ----------------------------------------------------------------------------------------------------------------
# Requests

_TYPE_NAMES = {"string": "str", "integer": "int", "number": "float", "float": "float", "boolean": "bool",
               "array": "list", "object": "dict", "dict": "dict", "tuple": "tuple", "any": "Any"}


def tl_function_block(tool: Mapping[str, Any]) -> str:
    """One tool in TL-CodeLLaMA-2's system-prompt layout (README @ 77c875a9): ``Function:`` + a ``def`` stub."""
    properties = ((tool.get("parameters") or {}).get("properties") or {})
    signature = ", ".join(f"{name}:{_TYPE_NAMES.get(str(spec.get('type')), str(spec.get('type')))}"
                          for name, spec in properties.items())
    lines = [f"Function:\ndef {tool['name']}({signature}):", '    """', f"    {tool.get('description', '')}"]
    if properties:
        lines += ["", "    Args:"]
        lines += [f"        {name} ({spec.get('type')}): {spec.get('description', '')}" for name, spec in
                  properties.items()]
    lines += ['    """', "", ""]
    return "\n".join(lines)


def offered_tools(case: Case) -> list[dict[str, Any]]:
    tools = list(case.payload["tools"])
    if case.payload["dataset"] != "rotbench_clean":
        names = {t["name"] for t in tools}
        tools += [t for t in PSEUDO_TOOLS if t["name"] not in names]
    return tools


def build_request(case: Case) -> Request:
    system_prompt = case.payload.get("system_prompt", "tl_codellama")
    tools = offered_tools(case)
    messages = [dict(m) for m in case.payload["messages"]]
    if system_prompt == "tl_codellama" and not any(m.get("role") == "system" for m in messages):
        messages.insert(0, {"role": "system", "content": "".join(tl_function_block(t) for t in tools)})
    return Request(messages=messages, tools=tools)


def gold_output(case: Case) -> str:
    """The first gold alternative as Hermes ``<tool_call>`` blocks (decoded by the registry like any model's)."""
    return "\n".join(f"<tool_call>\n{json.dumps(call, ensure_ascii=False)}\n</tool_call>"
                     for call in case.payload["gold"][0])


# ----------------------------------------------------------------------------------------------------------------
# Decoding

_CHATGLM_CALL = re.compile(r"^\s*([A-Za-z_][\w.\-]*)\s*\n\s*(\{.*\})\s*$", re.DOTALL)


def decode(text: str, native: Sequence[Mapping[str, Any]] | None = None,
           signatures: Mapping[str, Sequence[str]] | None = None) -> tuple[str, list[dict] | None, str]:
    """``(parser, calls, problem)``: the first decoder of the registry that recognises the output wins.

    ``calls`` is ``None`` when the recognised format could not be decoded (a format error) and ``[]`` when the
    output holds no call at all.
    """
    if native:
        calls = [{"name": c.get("name"), "arguments": c.get("arguments") or {}} for c in native
                 if isinstance(c, Mapping)]
        valid = all(isinstance(c["name"], str) and isinstance(c["arguments"], Mapping) for c in calls)
        return "native", (calls if valid else None), "" if valid else "malformed native tool call"
    for name, parser, marker in (("hermes", parse_hermes, "<tool_call>"), ("mistral", parse_mistral, "[TOOL_CALLS]")):
        if marker in text:
            try:
                return name, parser(text), ""
            except ParseError as exc:
                return name, None, str(exc)
    if "Action:" in text or "Action Input:" in text:
        action, arguments, failure = rotbench.parse_react(text)
        if failure is not None:
            if isinstance(arguments, Mapping) and action is not None:
                # An empty {} decodes; whether it fails is the dataset's rule (RoTBench's empty-input quirk).
                return "react", [{"name": action, "arguments": dict(arguments)}], ""
            return "react", None, failure
        return "react", [{"name": action, "arguments": arguments}], ""
    stripped = text.strip()
    if stripped.startswith("{") or "<|python_tag|>" in stripped:
        try:
            return "llama3_json", parse_llama3_json(stripped), ""
        except ParseError as exc:
            return "llama3_json", None, str(exc)
    if stripped.startswith("["):
        try:
            return "pythonic", parse_pythonic(stripped), ""
        except ParseError as exc:
            return "pythonic", None, str(exc)
    chatglm = _CHATGLM_CALL.match(text)
    if chatglm:
        try:
            arguments = json.loads(chatglm.group(2))
        except (ValueError, RecursionError):
            arguments = None
        if isinstance(arguments, dict):
            return "chatglm", [{"name": chatglm.group(1), "arguments": arguments}], ""
    if "(" in stripped:
        try:
            return "python_call", parse_python_calls(stripped, signatures), ""
        except ValueError as exc:
            return "python_call", None, str(exc)
    return "none", [], ""


# ----------------------------------------------------------------------------------------------------------------
# Scoring


def _call_stages(predicted: Mapping[str, Any], gold: Mapping[str, Any]) -> tuple[bool, bool, bool]:
    ts = predicted["name"] == gold["name"]
    pi = ts and predicted["arguments"].keys() == gold["arguments"].keys()
    return ts, pi, pi and dict(predicted["arguments"]) == dict(gold["arguments"])


def multiset_stages(predicted: Sequence[Mapping[str, Any]], gold: Sequence[Mapping[str, Any]]) -> tuple[bool, ...]:
    """Each stage holds when some one-to-one pairing of predicted and gold calls satisfies it for every pair."""
    if len(predicted) != len(gold) or not gold:
        return (False, False, False)
    table = [[_call_stages(p, g) for g in gold] for p in predicted]
    result = []
    for stage in range(3):
        result.append(any(all(table[p][g][stage] for g, p in enumerate(perm))
                          for perm in itertools.permutations(range(len(predicted)))))
    return tuple(result)


def score(case: Case, generation: Generation) -> Verdict:
    empty_input_fails = case.payload.get("empty_input_fails", True)
    text = generation.text if isinstance(generation.text, str) else ""
    dataset = case.payload["dataset"]
    expected = case.payload["gold"]
    if not text.strip() and not generation.tool_calls:
        return _failed(case, NO_OUTPUT, "empty output", None, (False,) * 3, None, "none")
    parser, calls, problem = decode(text, generation.tool_calls, tool_signatures(offered_tools(case)))
    if calls is None or not calls:
        why = problem or "no tool call in the output"
        return _failed(case, FORMAT_ERROR, f"{parser}: {why}", None, (False,) * 3, None, parser)
    if dataset == "rotbench_clean":
        call = calls[0]
        if empty_input_fails and not call["arguments"]:
            return _failed(case, FORMAT_ERROR, "empty arguments (RoTBench's official empty-input rule)", calls,
                           (False,) * 3, None, parser)
        names = [t["name"] for t in case.payload["tools"]]
        stages = rotbench.official_stages(call["name"], dict(call["arguments"]),
                                          [(g[0]["name"], g[0]["arguments"]) for g in expected], names)
    elif dataset == "toolalpaca_real":
        stages = _call_stages(calls[0], expected[0][0])
        if case.payload.get("gold_defect"):
            stages = (stages[0], False, False)
    else:
        stages = multiset_stages(calls, expected[0])
    if stages[2]:
        return Verdict(passed=True, decoded=calls, expected=expected, counts=_counts(stages),
                       details={"parser": parser}, explanation=f"TS, PI and CF hold ({parser} output)")
    if dataset == "bfcl_exec" and len(calls) != len(expected[0]):
        error = WRONG_CALL_COUNT
        why = f"{len(calls)} calls for {len(expected[0])} gold calls"
    elif not stages[0]:
        error, why = WRONG_TOOL, "no gold tool matches"
    elif not stages[1]:
        error, why = WRONG_PARAM_NAMES, "parameter names differ from the gold call"
    else:
        error, why = WRONG_VALUES, "parameter values differ from the gold call"
    return _failed(case, error, why, calls, stages, calls, parser)


def _counts(stages: Sequence[bool]) -> dict[str, float]:
    return {"ts": float(stages[0]), "pi": float(stages[1]), "cf": float(stages[2])}


def _failed(case: Case, error: str, why: str, decoded: Any, stages: Sequence[bool],
            calls: list[dict] | None, parser: str) -> Verdict:
    category, reward = tl_category(case, calls)
    if category == "correct":
        # Only when the gold itself is undecodable (a ToolAlpaca annotation defect, compared as empty arguments):
        # the arguments are what cannot match, the closest TL category.
        category, reward = "content_mismatch", -0.25
    counts = _counts(stages)
    counts["tl_reward"] = reward
    return Verdict(passed=False, error_type=error, decoded=decoded, expected=case.payload["gold"], counts=counts,
                   labels={"tl_category": category}, details={"parser": parser},
                   explanation=f"{why}; TS={int(stages[0])} PI={int(stages[1])} CF={int(stages[2])} ({parser})")


def tl_category(case: Case, calls: list[dict] | None) -> tuple[str, float]:
    dataset = case.payload["dataset"]
    if dataset == "rotbench_clean":
        source = Case(suite=rotbench.SUITE, case_id=case.case_id, category="first_turn_clean",
                      payload={"tools": case.payload["tools"], "gold": case.payload["rotbench_gold"]})
        first = (calls[0]["name"], dict(calls[0]["arguments"])) if calls and calls[0]["arguments"] else None
        return rotbench.tl_category(source, first)
    signatures = tool_signatures(offered_tools(case))
    if dataset == "toolalpaca_real":
        outcome = classify_call(calls[0] if calls else None, case.payload["gold"][0][0], signatures)
    else:
        outcome = classify_call_lists(calls, case.payload["gold"][0], signatures)
    return outcome.category, outcome.reward


def aggregate(results: Sequence[CaseResult]) -> list[Metric]:
    """TS / PI / CF per dataset (and per BFCL category), count / all cases, then the TL-Training tallies."""
    groups: dict[str, list[CaseResult]] = defaultdict(list)
    for result in results:
        dataset = CATEGORY_DATASETS.get(result.category, "bfcl_exec" if result.category.startswith("exec_")
                                        else result.category)
        groups[dataset].append(result)
        if dataset == "bfcl_exec":
            groups[f"bfcl_{result.category}"].append(result)
    metrics: list[Metric] = []
    order = ["toolalpaca_real", "rotbench_clean", "bfcl_exec"] + [f"bfcl_exec_{c}" for c in BFCL_CATEGORIES]
    for name in order + sorted(set(groups) - set(order)):
        rows = groups.get(name)
        if not rows:
            continue
        for stage in ("ts", "pi", "cf"):
            correct = sum(r.counts.get(stage, 0.0) for r in rows)
            metrics.append(Metric(name=f"{name} {stage.upper()}", value=correct / len(rows), correct=correct,
                                  total=len(rows), group="aggregate" if name in DATASETS else "category",
                                  formula=f"cases with {stage.upper()} / all cases (failures to decode count)"))
    metrics.extend(tl_metrics(results))
    return metrics
