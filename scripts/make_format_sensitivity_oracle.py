"""Freeze BFCL's official format-sensitivity behaviour into tests/data/bfcl_format_sensitivity_oracle.json.gz (the
oracle of tests/test_bfcl_format_sensitivity.py). Two steps, two environments:

1. with this repository's environment, write a result file as ``bfcl generate`` names it (gold outputs in every
   case's return format, a seeded share of them spoiled differently per format, so the formats' accuracies differ):

       .venv/bin/python scripts/make_format_sensitivity_oracle.py results /tmp/fs-result

2. with the official bfcl-eval installed in a separate environment outside the repository (never a dependency):

       python3 -m venv /work/oracle-venvs/bfcl-fmt
       /work/oracle-venvs/bfcl-fmt/bin/pip install --no-deps ../shared/data/bfcl-eval/bfcl_eval-2026.3.23-py3-none-any.whl
       /work/oracle-venvs/bfcl-fmt/bin/pip install overrides openai requests tqdm python-dotenv "filelock==3.20.0" \\
           tenacity "tree_sitter==0.21.3" "tree-sitter-java==0.21.0" "tree-sitter-javascript==0.21.4" \\
           "numpy==1.26.4" pandas pydantic tabulate typer "mpmath==1.3.0" anthropic "cohere==5.18.0" \\
           "mistralai==1.7.0" google-genai writer-sdk boto3 beautifulsoup4 html2text "rank_bm25==0.2.2" \\
           google-search-results huggingface_hub
       /work/oracle-venvs/bfcl-fmt/bin/python scripts/make_format_sensitivity_oracle.py oracle /tmp/fs-result

   ``qwen_agent`` and ``datamodel_code_generator`` (imported by handlers this script never uses, through
   ``model_config.py``) are replaced by empty stand-ins when absent.

The oracle holds: the messages ``QwenHandler._pre_query_processing_prompting`` builds for three entries (one with a
system message, one ``parallel_multiple``, one live entry with enums, defaults and nested parameters) under all 26
formats; the result file's lines; what ``format_sensitivity_runner`` (with ``QwenHandler.decode_ast``, model
``Qwen/Qwen3-8B``) judged of each (``valid``, ``error_type``) and the score file's header (accuracy, Max Delta,
Variance, Std Dev, each format's accuracy and counts).
"""

from __future__ import annotations

import copy
import gzip
import importlib
import json
import random
import sys
import tempfile
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "bfcl_format_sensitivity_oracle.json.gz"
RESULT_NAME = "BFCL_v4_format_sensitivity_result.json"
PROMPT_IDS = ("live_simple_59-28-0", "parallel_multiple_14", "live_multiple_44-17-0")
MODEL = "Qwen/Qwen3-8B"


def spoil(text: str, config: str, rng: random.Random) -> str:
    """One of several realistic failures, chosen by the seeded generator."""
    kind = rng.choice(("prose", "drop_tag", "other_format", "truncate", "wrong_value", "fence"))
    if kind == "prose":
        return "Sure! Here is the call you asked for: " + text
    if kind == "drop_tag":
        return text.replace("<TOOLCALL>", "").replace("</TOOLCALL>", "") if "TOOLCALL" in text else "[]"
    if kind == "other_format":
        return "[unknown_function(x=1)]" if "ret_fmt=python" not in config else '[{"function": "f", "parameters": {}}]'
    if kind == "truncate":
        return text[: max(1, len(text) // 2)]
    if kind == "fence":
        return "```json\n" + text + "\n```"
    digits = [i for i, ch in enumerate(text) if ch.isdigit()]
    if digits:
        i = rng.choice(digits)
        return text[:i] + str((int(text[i]) + 1) % 10) + text[i + 1:]
    return text.replace("a", "b", 1)


def write_results(folder: Path) -> None:
    sys.path.insert(0, str(ROOT))
    from pytest_toolbench.contract.suite import SuiteContext
    scorer = importlib.import_module("suites.bfcl.scorer")
    from suites.bfcl.scorer.format_sensitivity import CONFIGS

    context = SuiteContext(ROOT.parent / "shared" / "data" / "bfcl", {"categories": [{"name": "format_sensitivity"}]})
    cases = scorer.load_cases(context)
    rng = random.Random(40)
    spoil_rate = {config: 0.05 + 0.6 * index / len(CONFIGS) for index, config in enumerate(CONFIGS)}
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / RESULT_NAME, "w", encoding="utf-8") as handle:
        for case in cases:
            text = scorer.gold_output(case)
            if rng.random() < spoil_rate[case.payload["config"]]:
                text = spoil(text, case.payload["config"], rng)
            handle.write(json.dumps({"id": case.payload["id"], "result": text}, ensure_ascii=False) + "\n")
    print(f"wrote {len(cases)} results to {folder / RESULT_NAME}")


def import_with_stand_ins(name: str):
    """Import ``name``, replacing modules that are absent (and unused here) by empty stand-ins."""
    for _ in range(20):
        try:
            return importlib.import_module(name)
        except ModuleNotFoundError as error:
            if not error.name or error.name.startswith("bfcl_eval"):
                raise
            parts = error.name.split(".")
            for i in range(1, len(parts) + 1):
                stand_in = mock.MagicMock(name=".".join(parts[:i]))
                stand_in.__path__, stand_in.__spec__ = [], None
                sys.modules.setdefault(".".join(parts[:i]), stand_in)
            for loaded in [k for k in sys.modules if k.startswith("bfcl_eval")]:
                del sys.modules[loaded]
    raise RuntimeError(f"cannot import {name}")


def freeze(folder: Path) -> None:
    runner = import_with_stand_ins("bfcl_eval.eval_checker.eval_runner")
    utils = importlib.import_module("bfcl_eval.utils")
    qwen = importlib.import_module("bfcl_eval.model_handler.local_inference.qwen")
    handler = qwen.QwenHandler(MODEL, 0.001, MODEL, False)

    entries = utils.load_dataset_entry("format_sensitivity")
    prompts = []
    for entry in entries:
        if entry["id"].split(":")[2] in PROMPT_IDS:
            test_entry = copy.deepcopy(entry)
            handler._pre_query_processing_prompting(test_entry)
            prompts.append({"id": entry["id"], "messages": test_entry["question"][0]})

    lines = (folder / RESULT_NAME).read_text(encoding="utf-8").splitlines()
    model_result = [json.loads(line) for line in lines]
    prompt = utils.load_dataset_entry("format_sensitivity", include_prereq=False, include_language_specific_hint=False)
    answers = utils.load_ground_truth_entry("format_sensitivity")
    prompt, answers = runner._subset_entries_by_model_ids(model_result, prompt, answers, allow_missing=False)
    with tempfile.TemporaryDirectory() as score_dir:
        accuracy, total = runner.format_sensitivity_runner(handler, model_result, prompt, answers, MODEL,
                                                           "format_sensitivity", Path(score_dir))
        score_file = next(Path(score_dir).rglob("*_score.json"))
        score_lines = [json.loads(line) for line in score_file.read_text(encoding="utf-8").splitlines()]
    header, failures = score_lines[0], score_lines[1:]
    failed = {entry["id"]: entry.get("error_type") for entry in failures}
    verdicts = {record["id"]: failed.get(record["id"]) for record in model_result}
    oracle = {
        "source": "bfcl-eval 2026.3.23 (gorilla 6ea57973), QwenHandler, model Qwen/Qwen3-8B",
        "prompts": prompts,
        "results": lines,
        "header": header,
        "accuracy": accuracy,
        "total": total,
        "failed": verdicts,
    }
    with gzip.GzipFile(OUT, "wb", mtime=0) as handle:
        handle.write(json.dumps(oracle, ensure_ascii=False, sort_keys=True).encode("utf-8"))
    print(f"wrote {OUT}: {len(prompts)} prompts, {total} results, accuracy {accuracy:.4f}, "
          f"max delta {header['accuracy_max_delta']}, std {header['accuracy_std']}")


if __name__ == "__main__":
    step, where = sys.argv[1], Path(sys.argv[2])
    if step == "results":
        write_results(where)
    elif step == "oracle":
        freeze(where)
    else:
        raise SystemExit("usage: make_format_sensitivity_oracle.py results|oracle FOLDER")
