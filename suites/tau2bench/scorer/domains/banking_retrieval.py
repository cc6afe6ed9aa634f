"""banking_knowledge's knowledge base and its offline retrieval (upstream 1.0.1 ``domains/banking_knowledge/
data_model.py`` ``KnowledgeBase``, ``retrieval.py``, ``retrieval_mixins.py`` and ``tau2/knowledge/``: the BM25
indexer and retriever, the grep retriever, the pipeline's ranking; read there, written here).

- **Documents**: every ``documents/*.json`` (``id``, ``title``, ``content``), keyed by id. Upstream keeps the order
  of ``Path.glob`` (the directory listing, which depends on the file system); here the file names' sorted order.
  The order only decides between equal scores (a query that matches fewer than ``k`` documents fills the rest with
  score 0 in document order) and the order of the documents inlined by ``full_kb``.
- **BM25**: ``rank_bm25.BM25Okapi`` (k1 1.5, b 0.75, epsilon 0.25: a term whose idf is negative gets
  ``epsilon * mean idf``) over ``text.lower().split()`` tokens, re-implemented without the dependency; a query's
  scores are summed term by term in query order (a repeated term counts again), as its numpy arrays do, so the
  floats are the same. The ranking is a stable sort by score, the retriever's top 10 then the tool's ``k``.
- **grep**: a regular expression (``re.IGNORECASE``; a pattern that does not compile is searched literally), each
  document scored by its number of matches, the top 10.
- **Results**: upstream's text (rank, title, id, score to 4 places, content). The KB search tools end with
  upstream's ``[Timing: retrieval=..ms, total=..ms]`` footer, whose values are the clock's there: here 0 ms, so
  that a conversation is reproducible.
"""

import functools
import json
import math
import re
from pathlib import Path

from pytest_toolbench.contract.errors import DataError

from ..toolkit import is_tool

K1, B, EPSILON = 1.5, 0.75, 0.25
#: the retriever's top_k of every upstream ``PipelineSpec`` and ``GrepSpec`` (10)
TOP_K = 10


class Document:
    __slots__ = ("id", "title", "content")

    def __init__(self, id: str, title: str, content: str):
        self.id, self.title, self.content = id, title, content


class BM25Okapi:
    """Okapi BM25 as ``rank_bm25.BM25Okapi`` 0.2.2 computes it (same operations in the same order)."""

    def __init__(self, corpus: list[list[str]], k1: float = K1, b: float = B, epsilon: float = EPSILON):
        self.k1, self.b, self.epsilon = k1, b, epsilon
        self.doc_len: list[int] = []
        self.doc_freqs: list[dict[str, int]] = []
        document_frequency: dict[str, int] = {}
        words = 0
        for document in corpus:
            self.doc_len.append(len(document))
            words += len(document)
            frequencies: dict[str, int] = {}
            for word in document:
                frequencies[word] = frequencies.get(word, 0) + 1
            self.doc_freqs.append(frequencies)
            for word in frequencies:
                document_frequency[word] = document_frequency.get(word, 0) + 1
        self.corpus_size = len(corpus)
        self.avgdl = words / self.corpus_size
        self.idf: dict[str, float] = {}
        total, negative = 0.0, []
        for word, frequency in document_frequency.items():
            idf = math.log(self.corpus_size - frequency + 0.5) - math.log(frequency + 0.5)
            self.idf[word] = idf
            total += idf
            if idf < 0:
                negative.append(word)
        floor = self.epsilon * (total / len(self.idf))
        for word in negative:
            self.idf[word] = floor
        self._norm = [self.k1 * (1 - self.b + self.b * length / self.avgdl) for length in self.doc_len]

    def get_scores(self, query: list[str]) -> list[float]:
        scores = [0.0] * self.corpus_size
        for term in query:
            idf = self.idf.get(term) or 0
            for index, frequencies in enumerate(self.doc_freqs):
                count = frequencies.get(term) or 0
                scores[index] += idf * (count * (self.k1 + 1) / (count + self._norm[index]))
        return scores


class KnowledgeBase:
    """The documents (in order) and the BM25 index over their contents, built once per process and folder."""

    def __init__(self, documents: list[Document]):
        self.documents = {document.id: document for document in documents}
        self.ids = list(self.documents)
        self._bm25: BM25Okapi | None = None

    @property
    def bm25(self) -> BM25Okapi:
        if self._bm25 is None:
            self._bm25 = BM25Okapi([self.documents[i].content.lower().split() for i in self.ids])
        return self._bm25

    def bm25_search(self, query, top_k: int = TOP_K) -> list[tuple[str, float]]:
        """upstream's ``BM25Retriever.retrieve``: no query (or only blanks) finds nothing."""
        if not query or not query.strip():
            return []
        scores = self.bm25.get_scores(query.lower().split())
        order = sorted(range(len(scores)), key=lambda index: scores[index], reverse=True)
        return [(self.ids[index], float(scores[index])) for index in order[:min(top_k, len(self.ids))]]

    def grep_search(self, query: str, top_k: int = TOP_K, case_sensitive: bool = False) -> list[tuple[str, float]]:
        """upstream's ``GrepRetriever.retrieve``."""
        if not query.strip():
            return []
        flags = 0 if case_sensitive else re.IGNORECASE
        try:
            pattern = re.compile(query, flags)
        except re.error:
            pattern = re.compile(re.escape(query), flags)
        results = []
        for doc_id in self.ids:
            matches = pattern.findall(self.documents[doc_id].content)
            if matches:
                results.append((doc_id, float(len(matches))))
        results.sort(key=lambda item: item[1], reverse=True)
        return results[:top_k]

    def ranked(self, results: list[tuple[str, float]], top_k=None) -> list[tuple[str, float]]:
        """``RetrievalPipeline.retrieve``: one retriever's results by id (the best score), sorted, cut to top_k."""
        merged: dict[str, float] = {}
        for doc_id, score in results:
            if doc_id not in merged or score > merged[doc_id]:
                merged[doc_id] = score
        ranked = sorted(merged.items(), key=lambda item: item[1], reverse=True)
        return ranked if top_k is None else ranked[:top_k]

    def listing(self, results: list[tuple[str, float]]) -> str:
        lines = []
        for rank, (doc_id, score) in enumerate(results, 1):
            document = self.documents.get(doc_id)
            title = (document.title if document else None) or "Untitled"
            content = (document.content if document else None) or ""
            lines.append(f"{rank}. {title}\n   ID: {doc_id}\n   Score: {score:.4f}\n   Content: {content}\n")
        return "\n".join(lines)

    def kb_search_text(self, query, top_k=None) -> str:
        """The KB search tools' result (``_run_kb_search`` over a BM25 pipeline), the timing footer at 0 ms."""
        results = self.ranked(self.bm25_search(query), top_k)
        footer = "\n\n[Timing: retrieval=0ms, total=0ms]"
        if not results:
            return "No relevant documents found." + footer
        return self.listing(results) + footer

    def grep_text(self, pattern: str) -> str:
        results = self.ranked(self.grep_search(pattern))
        if not results:
            return f"No matches found for pattern: {pattern}"
        return self.listing(results)


@functools.lru_cache(maxsize=4)
def knowledge_base(documents_dir: str) -> KnowledgeBase:
    """The documents of ``documents_dir`` (``*.json``, sorted by file name), each read as upstream's
    ``Document(**data)``: a file without ``id``, ``title`` or ``content`` is a data error."""
    documents = []
    for path in sorted(Path(documents_dir).glob("*.json")):
        try:
            with open(path, encoding="utf-8") as handle:
                data = json.load(handle)
            documents.append(Document(str(data["id"]), str(data["title"]), str(data["content"])))
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise DataError(path, f"not a knowledge-base document: {error!r}") from None
    return KnowledgeBase(documents)


# ------------------------------------------------------------------------------------- the tools (as upstream's)


class KBSearchMixin:
    """``KB_search`` (upstream's ``KBSearchMixin`` over a BM25 pipeline: variants ``bm25`` and ``bm25_grep``);
    the toolkit sets ``self.knowledge`` and ``self.kb_top_k``."""

    @is_tool("read")
    def KB_search(self, query: str) -> str:
        """Search the knowledge base for relevant documents.

        Args:
            query: The search query to find relevant documents

        Returns:
            Relevant document excerpts matching the query
        """
        return self.knowledge.kb_search_text(query)


class GrepMixin:
    """``grep`` (upstream's ``GrepMixin``: variants ``*_grep`` and ``grep_only``)."""

    @is_tool("read")
    def grep(self, pattern: str) -> str:
        """Search for a regex pattern in all knowledge base documents.

        Returns documents ranked by number of matches, with full content.

        Args:
            pattern: The regex pattern to search for (e.g., 'credit.*card', 'fee|charge')

        Returns:
            Matching documents ranked by relevance (match count)
        """
        return self.knowledge.grep_text(pattern)


class KBSearchBm25AllToolsMixin:
    """``KB_search_bm25`` (upstream's ``KBSearchBm25AllToolsMixin``, variant ``alltools``)."""

    @is_tool("read")
    def KB_search_bm25(self, query: str, k: int = 10) -> str:
        """Search the knowledge base using BM25 sparse retrieval.

        Args:
            query: The search query to find relevant documents.
            k: Maximum number of documents to return (default 10).

        Returns:
            Relevant document excerpts matching the query.
        """
        return self.knowledge.kb_search_text(query, top_k=k)
