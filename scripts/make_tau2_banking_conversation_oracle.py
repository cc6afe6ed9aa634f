"""Freeze upstream tau2-bench 1.0.1's own simulation of scripted banking_knowledge conversations as test data
(tests/data/tau2_banking_conversation_oracle.json.gz), as scripts/make_tau2_conversation_oracle.py does for the
other domains (its ``run`` is used, its scripted model and record format), with the environment upstream's
``tau2 run`` builds for the task under the retrieval configuration ``bm25_grep`` (this suite's default; upstream's
``alltools`` needs the OpenAI API) and the task's read-log allowlist.

Run in the oracle venv (Python 3.12, the tau2 1.0.1 source on the path, rank_bm25 installed there):

    PYTHONPATH=<tau2-bench 1.0.1>/src /work/oracle-venvs/tau2-101/bin/python \\
        scripts/make_tau2_banking_conversation_oracle.py ../shared/data/tau2bench/upstream

Two things upstream does not make reproducible are fixed: the KB search's ``[Timing: ...]`` footer reads the clock
(``time.perf_counter`` returns 0 here, so the footer says 0 ms, as the suite writes it), and the knowledge base's
document order is the directory listing's (sorted by id here, as the suite orders them).
"""

from __future__ import annotations

import gzip
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_tau2_conversation_oracle as base  # noqa: E402 - the other domains' oracle, its run() and format

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "tau2_banking_conversation_oracle.json.gz"
call, text = base.call, base.text

#: (name, domain, task id, max_steps, max_errors, agent replies, user replies)
SCENARIOS = [
    # the retrieval tools, then the user's own tool (the task's user_tools)
    ("banking_search_and_user_tool", "banking_knowledge", "task_001", 200, 10,
     [call("KB_search", query="cash back credit card no annual fee"), call("grep", pattern="Gold Rewards|annual fee"),
      text("The Gold Rewards Card has no annual fee and 2.5% cash back."), text("Anything else?")],
     [text("I want a card with the most cash back and no annual fee."),
      call("apply_for_credit_card", card_type="Gold Rewards Card", customer_name="Sarah Bosch", annual_income=100000,
           rho_bank_subscription=True), text("Done, thanks. ###STOP###")]),
    # a discoverable user tool: given by the agent, called by the user; an agent error, a lookup
    ("banking_discoverable_user_tool", "banking_knowledge", "task_015", 200, 10,
     [call("get_current_time"), call("unlock_discoverable_agent_tool", agent_tool_name="get_referral_link"),
      call("give_discoverable_user_tool", discoverable_tool_name="get_referral_link"),
      text("You can now generate your referral link."), text("Glad to help.")],
     [text("I'd like a referral link for the Platinum Rewards Card."),
      call("call_discoverable_user_tool", discoverable_tool_name="get_referral_link",
           arguments='{"user_id": "890389b165", "card_name": "Platinum Rewards Card"}'),
      text("Got it. ###STOP###")]),
    # a discoverable agent tool unlocked and called, a call before unlocking, a transfer
    ("banking_discoverable_agent_tool_and_transfer", "banking_knowledge", "task_015", 200, 10,
     [call("call_discoverable_agent_tool", agent_tool_name="get_all_user_accounts_by_user_id_3847",
           arguments='{"user_id": "890389b165"}'),
      call("unlock_discoverable_agent_tool", agent_tool_name="get_all_user_accounts_by_user_id_3847"),
      call("call_discoverable_agent_tool", agent_tool_name="get_all_user_accounts_by_user_id_3847",
           arguments='{"user_id": "890389b165"}'),
      call("transfer_to_human_agents", summary="wants a human", reason="customer_requests_human_no_specific_reason"),
      text("YOU ARE BEING TRANSFERRED.")],
     [text("What accounts do I have? I'm 890389b165. Then get me a human."), text("###TRANSFER###")]),
]


def main(data: Path, out: Path = OUT) -> None:
    scratch = Path(tempfile.mkdtemp(prefix="tau2-data-"))
    (scratch / "tau2").symlink_to(Path(data).resolve(), target_is_directory=True)
    os.environ["TAU2_DATA_DIR"] = str(scratch)
    time.perf_counter = lambda: 0.0  # the KB search's timing footer: 0 ms
    from tau2.domains.banking_knowledge import environment as banking
    from tau2.domains.banking_knowledge.data_model import KnowledgeBase
    from tau2.registry import registry
    from tau2.runner.build import _derive_read_log_allowlist

    loaded = banking.get_knowledge_base()
    ordered = KnowledgeBase(documents={key: loaded.documents[key] for key in sorted(loaded.documents)})
    banking.get_knowledge_base = lambda: ordered
    tasks = {task.id: task for task in banking.get_tasks()}
    original = registry.get_env_constructor
    results = []
    for scenario in SCENARIOS:
        task = tasks[scenario[2]]
        registry.get_env_constructor = lambda domain, task=task: (
            lambda: banking.get_environment(retrieval_variant="bm25_grep", task=task,
                                            read_log_allowlist=_derive_read_log_allowlist(task)))
        results.append(base.run(scenario))
    registry.get_env_constructor = original
    for result in results:
        print(f"{result['name']}: {result['termination_reason']}, {len(result['requests'])} requests, "
              f"{len(result['trajectory'])} messages")
    document = {"about": "upstream tau2-bench 1.0.1's Orchestrator + LLMAgent + UserSimulator on scripted replies, "
                         "banking_knowledge under bm25_grep (scripts/make_tau2_banking_conversation_oracle.py); "
                         "system prompts and tool lists as sha256, tool results as sha256",
                "scenarios": results}
    for result in document["scenarios"]:  # the documents a KB search returns are upstream data: their hash only
        for message in result["trajectory"]:
            if message["role"] == "tool" and isinstance(message.get("content"), str):
                message["content_sha256"] = base.digest(message.pop("content"))
        for request in result["requests"]:
            for message in request["messages"]:
                if message.get("role") == "tool" and isinstance(message.get("content"), str):
                    message["content_sha256"] = base.digest(message.pop("content"))
    with gzip.GzipFile(out, "wb", mtime=0) as handle:
        handle.write((json.dumps(document, indent=1, ensure_ascii=False) + "\n").encode())
    print(f"-> {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]) if len(sys.argv) > 2 else OUT)
