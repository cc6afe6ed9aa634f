"""banking_knowledge's environment (upstream 1.0.1 ``domains/banking_knowledge/environment.py`` and
``runner/build.py``'s ``_derive_read_log_allowlist``; read there, written here): the agent's toolkit with the
retrieval configuration's tools over the knowledge base, the user's toolkit over the same database, and the
read-log allowlist from the task's gold actions."""

from pathlib import Path
from typing import Any, Mapping

from ..environment import Environment
from .banking_policy import VARIANTS
from .banking_retrieval import knowledge_base


def read_log_allowlist(task: Mapping[str, Any] | None) -> frozenset:
    """The discoverable tools the task's gold actions call through ``call_discoverable_agent_tool``."""
    names = set()
    for action in ((task or {}).get("evaluation_criteria") or {}).get("actions") or []:
        if action.get("name") == "call_discoverable_agent_tool":
            name = (action.get("arguments") or {}).get("agent_tool_name")
            if name:
                names.add(name)
    return frozenset(names)


def make_banking_env(tools, user_tools, domain_dir: Path, task, retrieval: str, solo_mode: bool) -> Environment:
    if solo_mode:
        raise ValueError("banking_knowledge domain does not support solo mode")
    retrieval_tools = VARIANTS[retrieval][2]
    knowledge = knowledge_base(str(Path(domain_dir) / "documents")) if retrieval_tools else None
    tools.configure(retrieval_tools, knowledge, read_log_allowlist(task))
    user_tools.db = tools.db
    return Environment("banking_knowledge", tools, user_tools)
