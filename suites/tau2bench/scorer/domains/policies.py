"""Each domain's policy, the text upstream's environment holds (``Environment.get_policy()``, 1.0.1) and the agent's
system prompt embeds: airline and retail ``policy.md``; mock ``policy.md`` (solo mode ``policy_solo.md``); telecom
the main policy and the tech-support manual (``policy_type`` ``manual``, upstream's default, or ``workflow``), each
in its tag, solo mode with ``main_policy_solo.md`` (and ``tech_support_workflow_solo.md`` for ``workflow``; the
manual has no solo version)."""

from __future__ import annotations

from pathlib import Path


from .banking_policy import DEFAULT as BANKING_DEFAULT
from .banking_policy import banking_policy
from .banking_retrieval import knowledge_base
from ..upstream_texts import read_upstream_text

_TELECOM = {("manual", False): ("main_policy.md", "tech_support_manual.md"),
            ("workflow", False): ("main_policy.md", "tech_support_workflow.md"),
            ("manual", True): ("main_policy_solo.md", "tech_support_manual.md"),
            ("workflow", True): ("main_policy_solo.md", "tech_support_workflow_solo.md")}


def _read(path: Path) -> str:
    """The policy file as it is (upstream reads it so), from the data folder or the samples' re-serialised texts."""
    return read_upstream_text(path.parents[2], "/".join(path.parts[-3:]), newline="")


def domain_policy(domain: str, domain_dir: Path, solo_mode: bool = False, policy_type: str = "manual",
                  task: dict | None = None, retrieval: str | None = None) -> str:
    """banking_knowledge: the ``retrieval`` configuration's prompt (``golden_retrieval``: with ``task``'s required
    documents; upstream's solo mode is refused there)."""
    domain_dir = Path(domain_dir)
    if domain == "banking_knowledge":
        if solo_mode:
            raise ValueError("banking_knowledge domain does not support solo mode")
        return banking_policy(retrieval or BANKING_DEFAULT, domain_dir, knowledge_base(str(domain_dir / "documents")),
                              (task or {}).get("required_documents"))
    if domain == "telecom":
        if policy_type not in ("manual", "workflow"):
            raise ValueError(f"Invalid policy type: {policy_type}")
        main, tech = _TELECOM[(policy_type, solo_mode)]
        return ("<main_policy>\n" + _read(domain_dir / main) + "\n</main_policy>\n<tech_support_policy>\n"
                + _read(domain_dir / tech) + "\n</tech_support_policy>")
    if domain == "mock" and solo_mode:
        return _read(domain_dir / "policy_solo.md")
    return _read(domain_dir / "policy.md")
