"""banking_knowledge's retrieval configurations and the agent's policy each gives (upstream 1.0.1
``domains/banking_knowledge/retrieval.py``: ``RETRIEVAL_VARIANTS``, ``build_policy``, the prompt builders; read there,
written here).

A configuration names its prompt template (``prompts/*.md``, ``{{component:NAME}}`` replaced by
``prompts/components/NAME.md``) and its retrieval tools. ``full_kb`` inlines every document
(``## title\\n\\ncontent`` joined by ``\\n\\n---\\n\\n``, through ``re.sub`` as upstream, so a backslash in a document
is read as the replacement's escape there and here), ``golden_retrieval`` the task's ``required_documents`` (by
title, else id), and ``alltools`` the sentence naming its dense embedding model.

:data:`OFFLINE` are the configurations this suite can run: their tools need no API and no sandbox (BM25 and grep
over the documents, or none). The others need OpenAI or OpenRouter embeddings (``*embeddings*``, ``alltools*``),
an LLM reranker (``*reranker*``) or sandbox-runtime's shell (``terminal_use*``, ``alltools*``).
"""

from __future__ import annotations

import re
from pathlib import Path

from pytest_toolbench.contract.errors import DataError

from .banking_retrieval import KnowledgeBase

#: upstream's variants in its order: name -> (prompt template, prompt kind, retrieval tools in toolkit order)
VARIANTS = {
    "no_knowledge": ("no_knowledge.md", "standard", ()),
    "full_kb": ("full_kb.md", "full_kb", ()),
    "golden_retrieval": ("required_docs.md", "golden", ()),
    "qwen_embeddings_grep": ("classic_rag_qwen.md", "standard", ("KB_search", "grep")),
    "openai_embeddings_grep": ("classic_rag_openai.md", "standard", ("KB_search", "grep")),
    "qwen_embeddings_reranker_grep": ("classic_rag_qwen.md", "standard", ("KB_search", "grep")),
    "openai_embeddings_reranker_grep": ("classic_rag_openai.md", "standard", ("KB_search", "grep")),
    "bm25_grep": ("classic_rag_bm25.md", "standard", ("KB_search", "grep")),
    "bm25_reranker_grep": ("classic_rag_bm25.md", "standard", ("KB_search", "grep")),
    "qwen_embeddings": ("classic_rag_qwen_no_grep.md", "standard", ("KB_search",)),
    "openai_embeddings": ("classic_rag_openai_no_grep.md", "standard", ("KB_search",)),
    "qwen_embeddings_reranker": ("classic_rag_qwen_no_grep.md", "standard", ("KB_search",)),
    "openai_embeddings_reranker": ("classic_rag_openai_no_grep.md", "standard", ("KB_search",)),
    "bm25": ("classic_rag_bm25_no_grep.md", "standard", ("KB_search",)),
    "bm25_reranker": ("classic_rag_bm25_no_grep.md", "standard", ("KB_search",)),
    "grep_only": ("grep_only.md", "standard", ("grep",)),
    "terminal_use": ("agentic_search.md", "standard", ("shell",)),
    "terminal_use_write": ("agentic_search_write.md", "standard", ("shell",)),
    "alltools": ("all_tools.md", "standard", ("KB_search_bm25", "KB_search_dense", "shell")),
    "alltools-qwen": ("all_tools.md", "standard", ("KB_search_bm25", "KB_search_dense", "shell")),
}
#: upstream's default (``DEFAULT_RETRIEVAL_VARIANT``) and this suite's (the offline one closest to it)
UPSTREAM_DEFAULT = "alltools"
DEFAULT = "bm25_grep"
OFFLINE = ("no_knowledge", "full_kb", "golden_retrieval", "bm25_grep", "bm25", "grep_only")
#: what ``alltools`` says about its dense search (``format_all_tools_dense_instructions``)
DENSE = {"alltools": ("OpenAI API", "text-embedding-3-large"),
         "alltools-qwen": ("OpenRouter", "qwen3-embedding-8b")}

_COMPONENT = re.compile(r"\{\{component:(\w+)\}\}")
_FULL_KB = re.compile(r"\{\{full_knowledge_base\}\}")


def _read(path: Path) -> str:
    try:
        return path.read_text()  # upstream's Path.read_text(): universal newlines
    except OSError as error:
        raise DataError(path, f"cannot read the banking_knowledge prompt: {error}") from None


def _template(prompts: Path, name: str) -> str:
    text = _read(prompts / name)
    return _COMPONENT.sub(lambda match: _read(prompts / "components" / f"{match.group(1)}.md"), text)


def _documents(sections: list[tuple[str, str]]) -> str:
    return "\n\n---\n\n".join(f"## {title}\n\n{content}" for title, content in sections)


def banking_policy(variant: str, domain_dir: Path, knowledge: KnowledgeBase,
                   required_documents: list[str] | None = None) -> str:
    """The agent's policy under ``variant`` (``golden_retrieval``: for a task with these ``required_documents``)."""
    if variant not in VARIANTS:
        raise ValueError(f"Unknown retrieval variant: {variant!r}. Available: {sorted(VARIANTS)}")
    template, kind, tools = VARIANTS[variant]
    prompts = Path(domain_dir) / "prompts"
    policy = _template(prompts, template)
    documents = list(knowledge.documents.values())
    if kind == "full_kb" and _FULL_KB.search(policy):
        policy = _FULL_KB.sub(_documents([(d.title, d.content) for d in documents]), policy)
    elif kind == "golden":
        by_title = {d.title: d for d in documents}
        found = [by_title.get(ref) or knowledge.documents.get(ref) for ref in required_documents or []]
        text = _documents([(d.title, d.content) for d in found if d is not None]) or "(No documents provided)"
        policy = policy.replace("{{required_documents}}", text)
    if "KB_search_dense" in tools:
        provider, model = DENSE[variant]
        policy = policy.replace("{{all_tools_dense_instructions}}",
                                f"The `KB_search_dense` tool uses **{provider}** with embedding model `{model}` "
                                f"for dense retrieval.")
    if not policy.strip():
        raise ValueError(f"Policy is empty for retrieval variant '{variant}'.")
    return policy
