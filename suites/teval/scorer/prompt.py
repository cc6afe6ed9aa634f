"""The chat request of an item: the data file's own ``origin_prompt`` messages, verbatim.

T-Eval ships every prompt inside its data (``origin_prompt``: system / user / assistant / function messages), so
there is no template to copy. ToLeaP (thunlp/ToLeaP @ b9507131 ``scripts/teval_eval.py::infer``) hands the list
unchanged to ``LLM.batch_generate_chat`` (vLLM ``LLM.chat``, chat template, temperature 0, 512 new tokens), so a
``function`` message reaches the chat template with the role ``function`` (``options.function_role: function``,
the default). Upstream (open-compass/T-Eval @ 58f2240 ``test.py`` with lagent) renders it through a meta template
instead; ``teval/utils/meta_template.py`` maps it to the user turn for qwen, vicuna, chatglm and baichuan and to the
system turn for internlm, which ``options.function_role: user`` / ``system`` reproduce for chat models.
"""

from __future__ import annotations

from pytest_toolbench.contract.suite import Case, Request

from .loading import settings


def build_request(case: Case) -> Request:
    role = settings(case)["function_role"]
    messages = []
    for message in case.payload["messages"]:
        message = dict(message)
        if message["role"] == "function" and role != "function":
            message["role"] = role
        messages.append(message)
    return Request(messages=messages)
