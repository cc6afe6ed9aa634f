"""Freeze the official verdicts of replayed BFCL result files made under each local row into
tests/data/bfcl_row_replay_oracle.json.gz (the oracle of tests/test_bfcl_row_replay.py).

Run with the official bfcl-eval installed in a separate environment outside the repository (never a dependency), as
for ``scripts/make_handler_oracle.py`` (whose rows, call formats and handler construction this script reuses):

    python3 -m venv /work/oracle-venvs/bfcl-row
    /work/oracle-venvs/bfcl-row/bin/pip install ../shared/data/bfcl-eval/bfcl_eval-2026.3.23-py3-none-any.whl soundfile
    /work/oracle-venvs/bfcl-row/bin/python scripts/make_row_replay_oracle.py [DATA]

``DATA`` is the upstream data folder (default ``../shared/data``); only case ids and the crafted records are kept,
no upstream text. What ``bfcl generate`` writes as a record's ``result`` is the handler's ``model_responses``
(``_parse_query_response_prompting`` of the completion; for every local handler, FC rows included, a prompting-style
completions request: the raw text for most handlers, QwenFCHandler's after the last ``</think>``, a list of
``{name: arguments}`` for PhiFC, Granite 3, Arch, Mistral; a handler that raises while recording leaves
``Error during inference: <error>``, as ``_llm_response_generation.py`` writes it). So each crafted reply (the ground
truth written in the row's own call format, and variants: fenced in a ```json / ```python block, after a reasoning
block, a wrong value, plain text, empty, another row's format, and hostile ones: a 400-digit integer, 3,000-deep
nesting, a NUL byte, a lone surrogate, cut in half) goes through the official handler's recording, through a JSON
round trip (as the file is written and read), and through the official evaluator's entry functions
(``_evaluate_single_ast_entry`` / ``_evaluate_single_relevance_entry`` / ``_evaluate_single_multi_turn_entry`` of
``eval_runner.py``, with the row's registry name, so the row's ``underscore_to_dot``). The file keeps per row: the
handler, and per record the id, category, variant label, the ``result`` as written, and the official ``valid`` and
``error_type``.
"""

from __future__ import annotations

import ast
import copy
import gzip
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bfcl_eval.constants.enums import Language, ReturnFormat  # noqa: E402
from bfcl_eval.constants.model_config import MODEL_CONFIG_MAPPING  # noqa: E402
from bfcl_eval.eval_checker import eval_runner  # noqa: E402
from make_handler_oracle import ROWS as HANDLER_ROWS, build, write_calls  # noqa: E402
from make_prompt_oracle import ScriptedResponse  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "bfcl_row_replay_oracle.json.gz"

#: the six rows whose published outputs the issue measured, besides one row per handler (make_handler_oracle.ROWS)
PUBLISHED_ROWS = [("Qwen/Qwen3-4B-Instruct-2507-FC", "qwen_fc"), ("MadeAgents/Hammer2.1-7b", "json_list"),
                  ("microsoft/phi-4", "python"), ("google/gemma-3-27b-it", "python"),
                  ("meta-llama/Llama-3.3-70B-Instruct-FC", "python"), ("Qwen/Qwen3-8B", "python")]
#: single-turn categories (Python), the first entries of each
SINGLE_TURN = ["simple_python", "multiple", "parallel", "parallel_multiple", "live_simple", "live_multiple",
               "live_parallel", "live_parallel_multiple", "irrelevance", "live_irrelevance", "live_relevance"]
PER_CATEGORY = 2
MULTI_TURN = ["multi_turn_base"]
PER_MULTI_TURN = 2


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def first_value(accepted):
    """The first accepted value of a ground-truth parameter that is a value (not the "" of an optional one)."""
    for value in accepted:
        if value != "":
            return value
    return None


def gold_calls(ground_truth: list[dict]) -> list[tuple[str, dict]]:
    calls = []
    for call in ground_truth:
        name, params = next(iter(call.items()))
        calls.append((name, {k: first_value(v) for k, v in params.items() if first_value(v) is not None}))
    return calls


def wrong(calls):
    """The first parameter of the first call given another value."""
    if not calls or not calls[0][1]:
        return [("no_such_function", {"x": 1})] + calls[1:]
    name, args = calls[0]
    key = next(iter(args))
    value = args[key]
    other = value + 7 if isinstance(value, (int, float)) and not isinstance(value, bool) else \
        (not value if isinstance(value, bool) else f"{value}-other")
    return [(name, {**args, key: other})] + calls[1:]


def with_value(calls, value):
    if not calls:
        return [("f", {"x": value})]
    name, args = calls[0]
    key = next(iter(args), "x")
    return [(name, {**args, key: value})] + calls[1:]


def replies(calls, style: str) -> list[tuple[str, str]]:
    """(label, reply text) for one case's reference calls in a row's call format."""
    native = write_calls(calls, style) if calls else "I cannot answer that with these functions."
    other = "python" if style != "python" else "qwen_fc"
    out = [("native", native),
           ("fenced_json", "```json\n" + native + "\n```"),
           ("fenced_python", "```python\n" + native + "\n```"),
           ("think", "<think>\nI should call the function.\n</think>\n\n" + native),
           ("text", "I cannot help with that."), ("empty", ""),
           ("other_format", write_calls(calls, other) if calls else "[]")]
    if calls:
        out += [("wrong_value", write_calls(wrong(calls), style)),
                ("huge_int", write_calls(with_value(calls, 10 ** 400), style)),
                ("deep", native.replace("[", "[" + "[" * 3000, 1) + "]" * 3000),
                ("nul", write_calls(with_value(calls, "a\x00b"), style)),
                ("surrogate", write_calls(with_value(calls, "a\ud800b"), style)),
                ("truncated", native[: max(1, len(native) // 2)])]
    return out


def record(handler, text: str):
    """What ``bfcl generate`` writes as ``result`` for this completion, after a JSON round trip (a lone surrogate
    stays escaped, as ``json.dumps`` writes it)."""
    try:
        value = handler._parse_query_response_prompting(ScriptedResponse(text))["model_responses"]
    except Exception as error:  # noqa: BLE001 - _llm_response_generation.py's catch-all
        value = f"Error during inference: {error}"
    try:
        return json.loads(json.dumps(value))
    except (ValueError, RecursionError):
        return None


def official(handler, row: str, category: str, entry: dict, answer, result) -> tuple[bool, str | None]:
    """The official verdict; where the official checker itself raises (a 400-digit integer for a float parameter:
    ``float(value)`` overflows, and ``bfcl evaluate`` stops), ``checker_crash``, the scorer's name for it."""
    try:
        return _official(handler, row, category, entry, answer, result)
    except Exception:  # noqa: BLE001 - the official evaluator's own crash
        return False, "checker_crash"


def _official(handler, row: str, category: str, entry: dict, answer, result) -> tuple[bool, str | None]:
    if category in MULTI_TURN:
        verdict = eval_runner._evaluate_single_multi_turn_entry(handler, entry["id"], result, answer,
                                                                copy.deepcopy(entry), row, category)
        error = verdict.get("error")
        return verdict["valid"], None if verdict["valid"] else (error or {}).get("error_type")
    if "relevance" in category:
        verdict = eval_runner._evaluate_single_relevance_entry(handler, entry["id"], result, entry, row, category)
    else:
        verdict = eval_runner._evaluate_single_ast_entry(handler, entry["id"], result, answer, entry, row, category,
                                                         language=Language.PYTHON, return_format=ReturnFormat.PYTHON)
    return verdict["valid"], verdict.get("error_type")


def parse_call(text: str) -> tuple[str, dict]:
    node = ast.parse(text, mode="eval").body
    return node.func.id, {k.arg: ast.literal_eval(k.value) for k in node.keywords}


def main() -> None:
    data = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "shared" / "data")
    bfcl = data / "bfcl"
    entries, answers = {}, {}
    for category in SINGLE_TURN + MULTI_TURN:
        taken = lines(bfcl / f"BFCL_v4_{category}.json")[: PER_CATEGORY if category in SINGLE_TURN else PER_MULTI_TURN]
        entries[category] = taken
        gt_file = bfcl / "possible_answer" / f"BFCL_v4_{category}.json"
        if gt_file.exists():
            by_id = {e["id"]: e["ground_truth"] for e in lines(gt_file)}
            answers.update({e["id"]: by_id.get(e["id"]) for e in taken})
    rows = {}
    seen_rows = set()
    for row, style in HANDLER_ROWS + PUBLISHED_ROWS:
        if row in seen_rows:
            continue
        seen_rows.add(row)
        records = []
        for category, taken in entries.items():
            for entry in taken:
                handler = build(row)
                answer = answers.get(entry["id"])
                if category in MULTI_TURN:
                    turns = [[parse_call(call) for call in turn] for turn in answer]
                    variants = {
                        "native": [[write_calls(t, style), "Done."] if t else ["Nothing to do."] for t in turns],
                        "fenced_json": [["```json\n" + write_calls(t, style) + "\n```", "Done."] if t else
                                        ["Nothing to do."] for t in turns],
                        "text": [["I cannot help with that."] for _ in turns]}
                    for label, texts in variants.items():
                        result = [[record(handler, text) for text in turn] for turn in texts]
                        valid, error_type = official(build(row), row, category, entry, answer, result)
                        records.append({"id": entry["id"], "category": category, "label": label, "result": result,
                                        "valid": valid, "error_type": error_type})
                    continue
                calls = gold_calls(answer) if answer else []
                if "relevance" in category:  # a call of the first function offered (irrelevance: a wrong answer)
                    calls = [(entry["function"][0]["name"], {})]
                for label, text in replies(calls, style):
                    result = record(handler, text)
                    if result is None:
                        continue
                    valid, error_type = official(build(row), row, category, entry, answer, result)
                    records.append({"id": entry["id"], "category": category, "label": label, "result": result,
                                    "valid": valid, "error_type": error_type})
        rows[row] = {"handler": MODEL_CONFIG_MAPPING[row].model_handler.__name__, "records": records}
        print(row, len(records), sum(r["valid"] for r in records), file=sys.stderr)
    payload = {"source": "bfcl-eval 2026.3.23 (gorilla 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8), "
                         "scripts/make_row_replay_oracle.py", "rows": rows}
    OUT.write_bytes(gzip.compress(json.dumps(payload, ensure_ascii=True, sort_keys=True).encode("ascii"), mtime=0))


if __name__ == "__main__":
    main()
