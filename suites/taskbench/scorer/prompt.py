"""TaskBench's prompt, exactly as each protocol builds it, and the chat request.

Protocol text copied verbatim (it is the benchmark's protocol) from microsoft/JARVIS @
c62e0faac76c4a2907cabe2cfe4bbe5f2e613400 ``taskbench/inference.py`` (``inference()``, lines 174-189, last changed
in 342e3b8) and, identical byte for byte, thunlp/ToLeaP @ b95071311ff9a888303f819282e4d0872ce4c3fa
``src/benchmark/taskbench/taskbench.py`` (lines 36-51). ``tests/test_taskbench.py`` pins their sha256.

The prompt is ``"# TASK LIST #:\\n"`` + one ``json.dumps(tool) + "\\n"`` per tool of ``tool_desc.json`` (in file
order), then the GOAL and REQUIREMENTS text of the domain's dependency type (``resource`` for huggingface and
multimedia, ``temporal`` for dailylifeapis), then ``"\\n\\n# USER REQUEST #: <request>\\nnow please generate your
result in a strict JSON format:\\n# RESULT #:"``. It is sent as one user message (ToLeaP's API path
``create_messages``; JARVIS's ``messages`` payload). The two protocols differ in:

* ``toleap``: the request is data.json's ``instruction`` (ToLeaP reads the HF dataset's ``instruction`` column), and the
  tools are the full ``tool_desc.json`` entries in every domain;
* ``upstream``: the request is ``user_requests.json``'s ``user_request`` (a different wording of the same task), and
  for dailylifeapis (``temporal``) each tool's ``parameters`` is reduced to the list of its parameter names;
  no demos (``--use_demos 0``, the default: the demo path reads ``data["user_request"]``, a field the released
  data.json does not have); ``max_tokens`` 2000 (upstream's payload; its temperature 0.2, top_p 0.1 and
  presence_penalty 1.05 are the run's settings here, not the request's).
"""

from __future__ import annotations

import copy
import json
from typing import Any, Mapping, Sequence

from pytest_toolbench.contract.suite import Case, Request

TASK_LIST_HEADER = "# TASK LIST #:\n"

#: GOAL of the resource domains (huggingface, multimedia): inference.py line 176.
RESOURCE_GOAL = (
    "\n# GOAL #: Based on the above tools, I want you generate task steps and task nodes to solve the # USER REQUEST "
    "#. The format must in a strict JSON format, like: {\"task_steps\": [ step description of one or more steps ], "
    "\"task_nodes\": [{\"task\": \"tool name must be from # TOOL LIST #\", \"arguments\": [ a concise list of "
    "arguments for the tool. Either original text, or user-mentioned filename, or tag '<node-j>' (start from 0) to "
    "refer to the output of the j-th node. ]}]} "
)
#: REQUIREMENTS of the resource domains: inference.py line 177.
RESOURCE_REQUIREMENTS = (
    "\n\n# REQUIREMENTS #: \n1. the generated task steps and task nodes can resolve the given user request # USER "
    "REQUEST # perfectly. Task name must be selected from # TASK LIST #; \n2. the task steps should strictly aligned "
    "with the task nodes, and the number of task steps should be same with the task nodes; \n3. the dependencies "
    "among task steps should align with the argument dependencies of the task nodes; \n4. the tool arguments should "
    "be align with the input-type field of # TASK LIST #;"
)
#: GOAL of the temporal domain (dailylifeapis): inference.py line 179.
TEMPORAL_GOAL = (
    "\n# GOAL #:\nBased on the above tools, I want you generate task steps and task nodes to solve the # USER REQUEST "
    "#. The format must in a strict JSON format, like: {\"task_steps\": [ \"concrete steps, format as Step x: Call "
    "xxx tool with xxx: 'xxx' and xxx: 'xxx'\" ], \"task_nodes\": [{\"task\": \"task name must be from # TASK LIST #\", "
    "\"arguments\": [ {\"name\": \"parameter name\", \"value\": \"parameter value, either user-specified text or the "
    "specific name of the tool whose result is required by this node\"} ]}], \"task_links\": [{\"source\": \"task name "
    "i\", \"target\": \"task name j\"}]}"
)
#: REQUIREMENTS of the temporal domain: inference.py line 180.
TEMPORAL_REQUIREMENTS = (
    "\n\n# REQUIREMENTS #: \n1. the generated task steps and task nodes can resolve the given user request # USER "
    "REQUEST # perfectly. Task name must be selected from # TASK LIST #; \n2. the task steps should strictly aligned "
    "with the task nodes, and the number of task steps should be same with the task nodes; \n3. The task links "
    "(task_links) should reflect the temporal dependencies among task nodes, i.e. the order in which the APIs are "
    "invoked;"
)
#: The closing text: inference.py line 187 (ToLeaP's f-string of line 48 gives the same bytes).
REQUEST_TEMPLATE = "\n\n# USER REQUEST #: {{user_request}}\nnow please generate your result in a strict JSON format:\n# RESULT #:"

#: inference.py: ``"max_tokens": 2000`` in the request payload.
UPSTREAM_MAX_TOKENS = 2000

RESOURCE = "resource"
TEMPORAL = "temporal"


def tool_text(tools: Sequence[Mapping[str, Any]], dependency_type: str, reduce_parameters: bool) -> str:
    """The ``# TASK LIST #`` block. ``reduce_parameters`` (upstream, temporal only): ``tool["parameters"]`` becomes the
    list of its parameter names, as inference.py rewrites the loaded tools before rendering them."""
    text = TASK_LIST_HEADER
    for tool in tools:
        if reduce_parameters and dependency_type == TEMPORAL:
            tool = copy.copy(dict(tool))  # the key keeps its position, as upstream's in-place assignment
            tool["parameters"] = [parameter["name"] for parameter in tool["parameters"]]
        text += json.dumps(tool) + "\n"
    return text


def render(tools_block: str, dependency_type: str, request: str) -> str:
    """The whole prompt: tools, GOAL and REQUIREMENTS of the dependency type, the request."""
    if dependency_type == RESOURCE:
        body = RESOURCE_GOAL + RESOURCE_REQUIREMENTS
    else:
        body = TEMPORAL_GOAL + TEMPORAL_REQUIREMENTS
    # inference.py: ``tool_string + prompt.replace("{{user_request}}", user_request)`` (one placeholder in all)
    return tools_block + (body + REQUEST_TEMPLATE).replace("{{user_request}}", request)


def protocol_of(case: Case) -> str:
    """The suite option ``protocol`` of the case's suite (its context): ``toleap`` (the default, also for a case
    bound to no context) or ``upstream``."""
    options = case.context.options if case.context is not None else {}
    return options.get("protocol", "toleap")


def build_request(case: Case) -> Request:
    payload = case.payload
    tools = payload["tools"]
    text = render(tools["text"], tools["dependency_type"], payload["request"])
    upstream = protocol_of(case) == "upstream"
    return Request(messages=[{"role": "user", "content": text}],
                   max_tokens=UPSTREAM_MAX_TOKENS if upstream else None)
