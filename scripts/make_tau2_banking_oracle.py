"""Freeze upstream τ²-bench 1.0.1's own banking_knowledge retrieval and policies as test data
(tests/data/tau2_oracle_banking_retrieval.json.gz).

Run it with upstream's source on the path, in an oracle venv outside the repository that has the package's
dependencies and ``rank_bm25`` (pip-installed there, never in the project), ``TAU2_DATA_DIR`` naming a folder whose
``tau2/`` is the upstream data folder:

    mkdir -p /tmp/tau2data && ln -sfn $PWD/../shared/data/tau2bench/upstream /tmp/tau2data/tau2
    TAU2_DATA_DIR=/tmp/tau2data PYTHONPATH=/work/oracle-venvs/tau2-101-src/src \\
        /work/oracle-venvs/tau2-101/bin/python scripts/make_tau2_banking_oracle.py

It builds upstream's own toolkits (``build_tools`` of the variants ``bm25_grep`` and ``bm25``, and
``KnowledgeToolsAllTools`` with its BM25 pipeline: the dense pipeline and the shell need the OpenAI API and
sandbox-runtime) over the knowledge base with its documents in file-name order (upstream's own order is the
directory listing's, which the file system decides), and records for a set of queries (words of every task's
scenario and required documents' titles, and edge cases) each tool's result text, the timing footer's values
replaced by 0 (upstream's are the clock's), and the BM25 ranking with the scores' ``repr``; for grep patterns
(regular expressions, invalid ones, cases) the result text; the three tools' schemas; and the sha256 of the
policy of every retrieval variant (``golden_retrieval``: of each task). Only queries, result hashes, scores and
policy hashes are stored, never upstream data.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from pathlib import Path

from tau2.data_model.tasks import Task
from tau2.domains.banking_knowledge.data_model import KnowledgeBase, TransactionalDB
from tau2.domains.banking_knowledge.environment import get_db, get_knowledge_base, get_tasks
from tau2.domains.banking_knowledge.retrieval import (RETRIEVAL_VARIANTS, build_policy, build_tools,
                                                      create_bm25_retrieval_pipeline, resolve_variant)
from tau2.domains.banking_knowledge.retrieval_toolkits import KnowledgeToolsAllTools

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "tau2_oracle_banking_retrieval.json.gz"
TIMING = re.compile(r"\[Timing: retrieval=\d+ms(, reranking=\d+ms)?, total=\d+ms\]$")

EDGE_QUERIES = ["", "   ", "zzzzqqq", "the", "THE the The", "credit card", "credit credit card",
                "annual fee waiver", "dispute a transaction", "Gold Rewards Card annual fee",
                "debit card PIN reset", "ATM deposit check image", "overdraft fee refund checking",
                "how do I close my savings account?", "wire transfer limits international",
                "5% cash back", "Rho-Bank+ subscription", "credit limit increase hard pull",
                "a", "of and to", "fraud alert freeze unfreeze", "business platinum reserve account",
                "référence ünïcode", "\tcredit\ncard\t"]
K_VALUES = [None, 1, 3, 10, 20, 0, -1]
GREP_PATTERNS = ["", "  ", "credit.*card", "fee|charge", "Gold Rewards", "gold rewards", "(", "[unclosed",
                 "a+b", r"\$\d+", "zzzzqqq", "^## ", "annual fee", "Rho-Bank\\+", "dispute", "PIN"]


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def normalised(text: str) -> str:
    return TIMING.sub("[Timing: retrieval=0ms, total=0ms]", text)


def sorted_kb() -> KnowledgeBase:
    kb = get_knowledge_base()
    return KnowledgeBase(documents={k: kb.documents[k] for k in sorted(kb.documents)})


def task_queries(tasks: list[Task], kb: KnowledgeBase) -> list[str]:
    queries = []
    for task in tasks:
        words = str(task.user_scenario.instructions).split()
        queries.append(" ".join(words[40:52]))
        for doc_id in (task.required_documents or [])[:1]:
            document = kb.documents.get(doc_id)
            if document is not None:
                queries.append(document.title)
    return queries


def main() -> None:
    kb = sorted_kb()
    tasks = get_tasks()
    db: TransactionalDB = get_db()
    kit = build_tools(resolve_variant("bm25_grep"), db, kb)
    alltools = KnowledgeToolsAllTools(db, create_bm25_retrieval_pipeline(kb), None, None)
    pipeline = alltools._kb_bm25_pipeline
    queries = EDGE_QUERIES + task_queries(tasks, kb)
    searches = []
    for query in queries:
        ranking = pipeline.retrieve(query)
        entry = {"query": query, "ranking": [[doc_id, repr(score)] for doc_id, score in ranking],
                 "KB_search": sha(normalised(kit.use_tool("KB_search", query=query)))}
        entry["KB_search_bm25"] = {}
        for k in K_VALUES:
            arguments = {"query": query} if k is None else {"query": query, "k": k}
            entry["KB_search_bm25"][str(k)] = sha(normalised(alltools.use_tool("KB_search_bm25", **arguments)))
        searches.append(entry)
    greps = [{"pattern": p, "grep": sha(kit.use_tool("grep", pattern=p))} for p in GREP_PATTERNS + queries[:40]]
    schemas = {name: tool.openai_schema for name, tool in kit.get_tools().items() if name in ("KB_search", "grep")}
    schemas["KB_search_bm25"] = alltools.get_tools()["KB_search_bm25"].openai_schema
    policies = {}
    for name in RETRIEVAL_VARIANTS:
        variant = resolve_variant(name)
        if name == "golden_retrieval":
            policies[name] = {task.id: sha(build_policy(variant, kb, task)) for task in tasks}
        else:
            policies[name] = sha(build_policy(variant, kb))
    data = {"documents": len(kb.documents), "searches": searches, "greps": greps, "schemas": schemas,
            "policies": policies}
    with gzip.open(OUT, "wt", encoding="utf-8") as handle:
        json.dump(data, handle, sort_keys=True)
    print(f"{OUT}: {len(searches)} queries x {1 + len(K_VALUES)} tool calls, {len(greps)} greps, "
          f"{len(policies)} variants' policies")


if __name__ == "__main__":
    main()
