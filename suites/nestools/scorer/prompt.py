"""The prompt: the official template, and the request of a case (the official pre-built prompt, or the template
filled with the rebuilt candidate list)."""

from __future__ import annotations

import hashlib
from typing import Any, Mapping, Sequence

from pytest_toolbench.contract.suite import Case, Request
from .candidates import candidates_for
from .loading import PROMPT_SOURCE_OFFICIAL

#: Generation settings of ``inference/inference.py``: one user message, temperature 0, max_tokens 768.

#: ``base_prompt`` of ``inference/build_test_prompt/make_test_prompt.py`` at the pinned commit, verbatim (it is
#: part of the protocol). Note the missing space in "description.You" and the space before "\n" in "from 0
#: globally. \n": both are upstream's.
BASE_PROMPT = (
    "You have access to a list of APIs and the task description.You need to follow the given task description and "
    "determine which API to call in sequence according to the order required by the task description. API can be "
    "retrieved from the APIs list. Finally, you only need to return the API call result without any other content."
    "\nThe final result should be in the format of "
    '[{"api_name":__,"api_id":__,"parameters":{"arg0":"value0","arg1":"value1",...},'
    '"responses":{"arg0":"API_call_0", ... ,"argn":"API_call_n"}},'
    '{"api_name":__,"api_id":__,"parameters":{"arg0":"value0","arg1":"value1",...},'
    '"responses":{"arg0":"API_call_{n+1}",...}}, ...]. '
    "You don't need to know the actual return value of the API call, just assign each return value as a string "
    '"API_call_{number}" in "responses", such as "API_call_0","API_call_1","API_call_2" and so on. '
    'The "number" in "API_call_{number}" should increase by one from 0 globally. \n'
    "Please first determine which APIs to call in sequence based on the task, and then determine the parameter "
    "values of each API depending on the specific details of the task. If you decide to call the API, you need to "
    "fill in all this API's required parameters which can be found in this API's \"required\" list. If you think "
    "the task does not include the actual value of a necessary parameter in API's \"required\" list, you can assign "
    'the necessary parameter a value of "UNK". The remaining parameters are optional parameters, determine whether '
    "to fill them in according to the task. If you think the parameter value to be filled in is the return value of "
    'a previous API call, set it as "API_call_x", then the parameter value can be filled in with "API_call_x".'
    "\n\nNow it is your turn to generate the API call result based on the APIs and task description below. "
    "Remember that you only need to generate the API call result, not any additional explanations.\nAPIs:\n"
)
TASK_HEADER = "\n\nTask description:\n"
ANSWER_HEADER = "\n\nAPI call result:\n"


def render_prompt(candidates: Sequence[Mapping[str, Any]], task: str) -> str:
    """The official layout: template, Python ``str()`` of the candidate list, the task, the answer cue."""
    return BASE_PROMPT + str([dict(c) for c in candidates]) + TASK_HEADER + task + ANSWER_HEADER


def prompt_template_sha256() -> str:
    return hashlib.sha256((BASE_PROMPT + TASK_HEADER + ANSWER_HEADER).encode("utf-8")).hexdigest()


def prompt_text(case: Case) -> str:
    payload = case.payload
    if payload.get("prompt_source") == PROMPT_SOURCE_OFFICIAL and "prompt" in payload:
        return payload["prompt"]
    return render_prompt(candidates_for(case), payload["task"])


def build_request(case: Case) -> Request:
    # inference.py: the whole prompt as one user message, temperature 0, max_tokens 768.
    return Request(messages=[{"role": "user", "content": prompt_text(case)}], tools=None)
