"""Freeze BFCL's official prompt rendering into tests/data/bfcl_prompt_oracle.json (the oracle of tests/test_prompt_format.py).

Run with the official bfcl-eval installed in a separate environment outside the repository (never a dependency):

    python3 -m venv /tmp/oracle-venv
    /tmp/oracle-venv/bin/pip install --no-deps ../shared/data/bfcl-eval/bfcl_eval-2026.3.23-py3-none-any.whl
    /tmp/oracle-venv/bin/pip install overrides openai requests tqdm python-dotenv filelock tenacity \
        "tree_sitter==0.21.3" "tree-sitter-java==0.21.0" "tree-sitter-javascript==0.21.4"
    /tmp/oracle-venv/bin/python scripts/make_prompt_oracle.py

For each hand-made scenario and each handler family, the official handler assembles the conversation the way
``inference_multi_turn_prompting`` / ``inference_single_turn_prompting`` do (``_pre_query_processing_prompting``,
the first and next turns, ``_parse_query_response_prompting`` + ``_add_assistant_message_prompting`` on each scripted
reply, ``decode_execute``, ``_add_execution_results_prompting`` with the scripted results) and every request's prompt
is ``_format_prompt``'s output. The scenario's inputs are kept beside the prompts.
"""

import copy
import json
import sys
from pathlib import Path
from types import SimpleNamespace

from bfcl_eval.constants.default_prompts import DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_PROMPTING
from bfcl_eval.model_handler.local_inference.gemma import GemmaHandler
from bfcl_eval.model_handler.local_inference.llama import LlamaHandler
from bfcl_eval.model_handler.local_inference.qwen import QwenHandler
from bfcl_eval.utils import _func_doc_language_specific_pre_processing
from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils import is_empty_execute_response

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "bfcl_prompt_oracle.json"

HANDLERS = {
    "qwen": (QwenHandler, "Qwen/Qwen3-8B"),
    "llama3": (LlamaHandler, "meta-llama/Llama-3.1-8B-Instruct"),
    "llama4": (LlamaHandler, "meta-llama/Llama-4-Scout-17B-16E-Instruct-FC"),
    "gemma3": (GemmaHandler, "google/gemma-3-4b-it"),
}

WEATHER = {"name": "get_weather", "description": "Get the current weather of a city.",
           "parameters": {"type": "dict", "properties": {
               "city": {"type": "string", "description": "The city name, e.g. Paris."},
               "unit": {"type": "string", "description": "celsius or fahrenheit.", "default": "celsius"}},
               "required": ["city"]}}
ADD = {"name": "add", "description": "Add two integers.",
       "parameters": {"type": "dict", "properties": {"a": {"type": "integer", "description": "First."},
                                                      "b": {"type": "integer", "description": "Second."}},
                      "required": ["a", "b"]}}
HELD_OUT = [{"name": "convert_units", "description": "Convert a temperature.",
             "parameters": {"type": "dict", "properties": {"value": {"type": "float", "description": "Degrees."}},
                            "required": ["value"]}}]

# single_turn: one request (inference_single_turn_prompting); replies: per turn, the scripted model outputs in order; "results" present iff the reply executes (the last reply
# of every turn does not decode or decodes to nothing, which ends the turn, as upstream's loop does).
SCENARIOS = [
    {"id": "simple_python_0", "single_turn": True, "function": [WEATHER],
     "question": [[{"role": "user", "content": "What is the weather in Paris?"}]],
     "replies": [[{"text": "[get_weather(city='Paris')]"}]]},
    {"id": "live_simple_0-0-0", "single_turn": True, "function": [WEATHER],
     "question": [[{"role": "system", "content": "  You answer briefly.\n"},
                   {"role": "user", "content": "Weather in Oslo, in fahrenheit?  "}]],
     "replies": [[{"text": "x"}]]},
    {"id": "live_irrelevance_0-0-0", "single_turn": True, "function": [ADD],
     "question": [[{"role": "user", "content": "Hi there."},
                   {"role": "assistant", "content": "Hello! How can I help?"},
                   {"role": "user", "content": "Tell me a joke."},
                   {"role": "user", "content": "\nA short one. "}]],
     "replies": [[{"text": "x"}]]},
    {"id": "multi_turn_base_0", "function": [WEATHER, ADD],
     "question": [[{"role": "user", "content": "Weather in Rome and Oslo, please."}],
                  [{"role": "user", "content": "Now add 2 and 3."}],
                  [{"role": "user", "content": "Thanks, and the weather in Lima?"}]],
     "replies": [
         [{"text": "[get_weather(city='Rome'), get_weather(city='Oslo')]",
           "results": ["{\"temperature\": 21}", "{\"temperature\": 4}"]},
          {"text": "<think>\nBoth are known now.\n</think>\n\nRome is 21, Oslo is 4."}],
         [{"text": " [add(a=2, b=3)] ", "results": ["5"]},
          {"text": "<think>\n\n</think>\n\nThe sum is 5.\n"}],
         [{"text": "[get_weather(city='Lima')]", "results": ["Error during execution: unknown city"]},
          {"text": "<think>\nThe tool failed.\n</think>\n\n<think>again</think>\nSorry."}]]},
    {"id": "multi_turn_miss_func_0", "function": [WEATHER], "holdout": {"1": HELD_OUT},
     "question": [[{"role": "user", "content": "Weather in Bern?"}], []],
     "replies": [
         [{"text": "[get_weather(city='Bern')]", "results": ["{\"temperature\": 9}"]},
          {"text": "It is 9 degrees."}],
         [{"text": "[convert_units(value=9.0)]", "results": ["{\"fahrenheit\": 48.2}"]},
          {"text": "[]"}]]},
    {"id": "memory_kv_0-student-0", "function": [ADD],
     "question": [[{"role": "system", "content": "You are a student's assistant.\n\nHere is the content of your "
                                                 "memory system from previous interactions:\n{}\n"},
                   {"role": "user", "content": "Remember that 1 plus 1 is 2; what is 1 plus 1?"}]],
     "replies": [[{"text": "[add(a=1, b=1)]", "results": ["2"]},
                  {"text": "<think>\nIt is in my memory.\n</think>\n\n{'answer': '2', 'context': 'added'}"}]]},
]


class ScriptedResponse(SimpleNamespace):
    """A completion as the handler reads it (``choices[0].text``, token usage)."""

    def __init__(self, text):
        super().__init__(choices=[SimpleNamespace(text=text)],
                         usage=SimpleNamespace(prompt_tokens=0, completion_tokens=0))


def prompting_loop(handler, scenario, results_of):
    """The official handler's prompting loop over a scenario's scripted replies, as ``inference_multi_turn_prompting``
    / ``inference_single_turn_prompting`` run it. Returns every request's ``_format_prompt`` text and, per reply
    past the first request of a single-turn scenario, its decoded calls (None: it does not execute, which ends its
    turn). ``results_of(reply, decoded)`` gives the execution results fed back (``decoded`` None for a reply that
    does not execute; what it returns then is not used)."""
    # as bfcl generate loads an entry: the language hint on the offered docs (not on held-out ones)
    functions = _func_doc_language_specific_pre_processing(copy.deepcopy(scenario["function"]),
                                                           scenario["id"].rsplit("_", 1)[0])
    entry = {"id": scenario["id"], "function": functions, "question": copy.deepcopy(scenario["question"])}
    holdout = scenario.get("holdout", {})
    data = handler._pre_query_processing_prompting(entry)
    prompts, executed = [], []
    for turn, messages in enumerate(entry["question"]):
        if str(turn) in holdout:
            messages = [{"role": "user", "content": DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_PROMPTING.format(
                functions=holdout[str(turn)])}]
        data = (handler.add_first_turn_message_prompting(data, messages) if turn == 0
                else handler._add_next_turn_user_message_prompting(data, messages))
        for reply in scenario["replies"][turn]:
            prompts.append(handler._format_prompt(data["message"], data["function"]))
            if scenario.get("single_turn"):  # inference_single_turn_prompting: one request, nothing after it
                return prompts, executed
            parsed = handler._parse_query_response_prompting(ScriptedResponse(reply["text"]))
            data = handler._add_assistant_message_prompting(data, parsed)
            try:
                decoded = handler.decode_execute(parsed["model_responses"], has_tool_call_tag=False)
                executes = not is_empty_execute_response(decoded)
            except Exception:
                executes = False
            results = results_of(reply, decoded if executes else None)
            if not executes:
                executed.append(None)
                break
            executed.append(decoded)
            parsed["model_responses_decoded"] = decoded
            data = handler._add_execution_results_prompting(data, results, parsed)
    return prompts, executed


def run(handler_class, model, scenario):
    def scripted_results(reply, decoded):
        if (decoded is not None) != ("results" in reply):
            sys.exit(f"{scenario['id']} ({handler_class.__name__}): {reply['text']!r} executes={decoded is not None}")
        return reply.get("results")

    return prompting_loop(handler_class(model, 0.001, model, False), scenario, scripted_results)[0]


def main():
    for scenario in SCENARIOS:
        scenario["prompts"] = {family: run(cls, model, scenario) for family, (cls, model) in HANDLERS.items()}
    document = {
        "generated_by": "scripts/make_prompt_oracle.py with bfcl-eval 2026.3.23 (gorilla "
                        "6ea57973c7a6097fd7c5915698c54c17c5b1b6c8) in a separate environment",
        "handlers": {family: [cls.__name__, model] for family, (cls, model) in HANDLERS.items()},
        "scenarios": SCENARIOS,
    }
    OUT.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OUT}: {sum(len(p) for s in SCENARIOS for p in s['prompts'].values())} prompts")


if __name__ == "__main__":
    main()
