"""The request of a sample: its prompt, verbatim, as one user message.

Both harnesses send ``conversations[0].value`` unchanged and nothing else (no system prompt, no ``tools=``):
Seal-Tools @ ce753ecd ``LLM_Evaluation/src/llm_tools/evaluation/eval.py`` (``ToolLearning_eval``:
``input_text = dataset[idx]["conversations"][0]["value"]``; its ChatGPT wrapper sends it as the one user message,
its LLaMA wrapper as a raw completion prompt) and ToLeaP @ b9507131 ``scripts/sealtools_eval.py`` (API models:
``create_messages`` → ``[{"role": "user", "content": value}]``; local models: ``llm.batch_generate_complete`` on the
same strings). The prompt begins "Please chooose the needed apis and return api_calling list according to the
task_instruction." (sic), holds ``api_list = [...]`` (five tools as a Python literal) and ends with
``task_instruction = "…"\\nOutput:\\n``.

The plugin renders every request through the model's chat template (ToLeaP's chat path); the raw-completion mode
of upstream's LLaMA wrapper and of ToLeaP's local-model path is not available as a request kind.
"""

from __future__ import annotations

from pytest_toolbench.contract.suite import Case, Request


def build_request(case: Case) -> Request:
    return Request(messages=[{"role": "user", "content": case.payload["prompt"]}])
