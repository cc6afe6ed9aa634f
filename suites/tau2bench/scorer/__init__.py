"""τ²-bench (sierra-research/tau2-bench 1.0.1) as a pytest-toolbench suite: the environments and the grading.

Modules: ``models`` (records as upstream's pydantic models shape them), ``toolkit`` (tools, schemas from
signatures and docstrings, result texts, hashing), ``environment`` (tool calls, replay, hashes), ``domains``
(airline, mock; the registry says which are implemented), ``arithmetic`` (the ``calculate`` tool without ``eval``),
``evaluation`` (upstream's reward), ``judge`` (the NL-assertion judge), ``loading``, ``gold``, ``checker``,
``aggregation`` (average reward, pass^k), ``replay`` (tau2 results files, every trial), ``prompt`` (the
conversation: which backend holds it, the gold path, the run header's note), ``conversation`` (upstream's
half-duplex orchestrator with its agent and user simulator), ``conversation_solo`` (solo mode: upstream's
``LLMSoloAgent`` alone on the ticket; ``solo``: the ``agent`` option, its refusal and task filter),
``conversation_prompts``, ``conversation_messages``, ``conversation_text`` (prompt mode: the tools and calls as
Hermes text) and ``conversation_cost`` (requests, tokens and time of agent and user, in the counts and the cost
figures).
"""

from .aggregation import aggregate, aggregate_samples
from .checker import score
from .gold import gold_output
from .loading import load_cases
from .prompt import build_request, conversation, gold_reply, run_info
from .replay import replay_outputs

__all__ = ["load_cases", "build_request", "gold_output", "score", "aggregate", "aggregate_samples", "replay_outputs",
           "run_info", "conversation", "gold_reply"]
