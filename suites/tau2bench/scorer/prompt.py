"""The conversation of a case (the core drives it: ``InteractiveBenchmark``), the gold path, the run header's note.

A model backend holds upstream's simulation (:mod:`.conversation`; solo mode, the suite option ``agent:
llm_agent_solo``: :mod:`.conversation_solo`): the agent is the model under test, the user
simulator the same engine (or ``--toolbench-user-model``). Upstream's agent and user call tools natively (OpenAI
``tools=``): in native mode (``--toolbench-mode native``) the requests go as upstream sends them; in prompt mode (the
default) the same conversation is written as text, the tools in the system prompt and the calls as Hermes
``<tool_call>`` blocks (:mod:`.conversation_text`), and the replies are read from the text.

The gold backend answers the conversation's first request with the task's gold trajectory (``gold_reply``), which
then ends the conversation: the conversation tells it from a model's reply by the text itself, registered by
``gold_reply`` in this process (a model cannot register text), so no model reply is ever taken for the gold one.
The replay backend scores ``tau2 run`` results files without a conversation.
"""

from __future__ import annotations

import json
import threading
from typing import Iterator

from pytest_toolbench.contract.errors import UsageProblem
from pytest_toolbench.contract.suite import Case, Generation, Request, SuiteContext

from .conversation import MAX_ERRORS, MAX_STEPS, USER_TEMPERATURE, simulate
from .conversation_solo import simulate_solo
from .gold import gold_output
from .judge import JUDGE_MODEL, JUDGE_TEMPERATURE
from .solo import SOLO_AGENT, agent_name, is_solo

#: upstream's leaderboard: the user simulator every published figure was made with (``config.py``'s
#: ``DEFAULT_LLM_USER`` at ``DEFAULT_LLM_TEMPERATURE_USER``)
LEADERBOARD_USER = "gpt-4.1-2025-04-14 at temperature 0.0"
SINGLE_SHOT_REFUSAL = "tau2bench: every case is a conversation (agent and simulated user); it has no single request"

_GOLD_TEXTS: dict[str, int] = {}  # gold trajectories handed out and not yet received (text -> how many)
_GOLD_LOCK = threading.Lock()


def conversation(case: Case) -> Iterator[Request]:
    """Upstream's simulation of the task; under the gold backend its first reply is the gold trajectory."""
    simulation = simulate_solo(case) if is_solo(case) else simulate(case)
    try:
        request = next(simulation)
    except StopIteration as done:  # a history that already ends the simulation: no request at all
        return done.value
    while True:
        reply: Generation = yield request
        text = reply.text if isinstance(reply.text, str) else ""
        with _GOLD_LOCK:
            gold = _GOLD_TEXTS.get(text, 0) > 0
            if gold:
                _GOLD_TEXTS[text] -= 1
                if not _GOLD_TEXTS[text]:
                    del _GOLD_TEXTS[text]
        if gold:
            return json.loads(text)
        try:
            request = simulation.send(reply)
        except StopIteration as done:
            return done.value


def gold_reply(case: Case, step: int, request: Request) -> str:
    text = gold_output(case)
    with _GOLD_LOCK:
        _GOLD_TEXTS[text] = _GOLD_TEXTS.get(text, 0) + 1
    return text


def build_request(case: Case) -> Request:
    """Single-shot requests do not exist for this suite (every case converses); asked for one, refuse."""
    raise UsageProblem(SINGLE_SHOT_REFUSAL)


def run_info(context: SuiteContext) -> dict[str, str]:
    """The run header's note: the selection, the conversation's limits, and who plays the user."""
    options = context.options
    solo = (f"agent {SOLO_AGENT} (solo mode: the agent alone on each task's ticket, with the user's tools and "
            f"`done`; no user simulator), " if agent_name(options) == SOLO_AGENT else "")
    banking = {}
    if "banking_knowledge" in (options.get("domains") or ()):
        banking["tau2bench banking_knowledge"] = (
            f"retrieval configuration {options.get('retrieval', 'bm25_grep')} (offline); upstream's default is "
            f"alltools (BM25, OpenAI dense embeddings and a shell over the documents), which is not offered here: "
            f"figures are not comparable with leaderboard runs made with alltools")
    return banking | {
        "tau2bench": f"domains {', '.join(options.get('domains') or ())}, split {options.get('split', 'base')}; {solo}"
                     f"conversations: max_steps {options.get('max_steps', MAX_STEPS)}, max_errors "
                     f"{options.get('max_errors', MAX_ERRORS)} (upstream's defaults {MAX_STEPS}, {MAX_ERRORS})",
        "tau2bench user simulator": (
            f"the agent is the run's model; the user simulator is the run's model too unless --toolbench-user-model "
            f"routes its turns elsewhere (its requests ask temperature {USER_TEMPERATURE}, upstream's; on one engine "
            f"--toolbench-temperature, when given, applies to both); upstream's leaderboard "
            f"user is {LEADERBOARD_USER}: with any other user model the figures are not comparable with published "
            f"ones"),
        "tau2bench judge": (
            f"a task graded on NL assertions (retail: 40) asks one more request once its simulation ends with "
            f"user_stop or agent_stop: the NL-assertion judge, routed as the user simulator's turns (the run's model "
            f"unless --toolbench-user-model); upstream's judge is {JUDGE_MODEL} at temperature {JUDGE_TEMPERATURE}: "
            f"with any other, the figures say so"),
    }
