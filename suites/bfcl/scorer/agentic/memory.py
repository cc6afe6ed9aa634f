"""BFCL v4's memory backends (``memory_kv``, ``memory_vector``, ``memory_rec_sum``) as a memory conversation uses them.

The backends are the official classes, run from the pinned wheel (:func:`..multi_turn.simulators.official_module`)
with their real dependencies: ``rank_bm25`` (kv; extra ``bfcl-memory``), sentence-transformers + faiss (vector; extra
``bfcl-memory-vector``, whose encoder ``all-MiniLM-L6-v2`` loads offline from the verified copy that extra installs:
:func:`..multi_turn.simulators.verified_sentence_transformers`). Follows bfcl-eval 2026.3.23 (gorilla
6ea57973c7a6097fd7c5915698c54c17c5b1b6c8, ``bfcl_eval/``): the memory instruction of
``model_handler/utils.py::add_memory_instruction_system_prompt`` with the texts of ``constants/default_prompts.py``
(verbatim), and the state each backend writes to its ``<scenario>_final.json`` snapshot, which
:mod:`.conversation` keeps in memory instead of a file.
"""

from __future__ import annotations

import copy
import threading
from typing import Any

from pytest_toolbench.scorer_lib import embedding_models
from ..multi_turn.simulators import official_module

#: The encoder ``memory_vector.py`` loads, by this name (sentence-transformers expands it to the Hub id
#: ``sentence-transformers/all-MiniLM-L6-v2``).
VECTOR_ENCODER = "all-MiniLM-L6-v2"

# -- protocol texts, verbatim from bfcl_eval/constants/default_prompts.py --------------------------------------------

MEMORY_AGENT_SETTINGS = {
    "student": "You are an academic-support assistant for college student. Remember key personal and academic details "
               "discussed across sessions, and draw on them to answer questions or give guidance.",
    "customer": "You are a general customer support assistant for an e-commerce platform. Your task is to understand "
                "and remember information that can be used to provide information about user inquiries, preferences, "
                "and offer consistent, helpful assistance over multiple interactions.",
    "finance": "You are a high-level executive assistant supporting a senior finance professional. Retain and "
               "synthesize both personal and professional information including facts, goals, prior decisions, and "
               "family life across sessions to provide strategic, context-rich guidance and continuity.",
    "healthcare": "You are a healthcare assistant supporting a patient across appointments. Retain essential medical "
                  "history, treatment plans, and personal preferences to offer coherent, context-aware guidance and "
                  "reminders.",
    "notetaker": "You are a personal organization assistant. Capture key information from conversations, like tasks, "
                 "deadlines, and preferences, and use it to give reliable reminders and answers in future sessions.",
}
MEMORY_BACKEND_INSTRUCTION_CORE_ARCHIVAL = (
    "{scenario_setting}\n\nYou have access to an advanced memory system, consisting of two memory types 'Core Memory' "
    "and 'Archival Memory'. Both type of memory is persistent across multiple conversations with the user, and can be "
    "accessed in a later interactions. You should actively manage your memory data to keep track of important "
    "information, ensure that it is up-to-date and easy to retrieve to provide personalized responses to the user "
    "later.\n\nThe Core memory is limited in size, but always visible to you in context. The Archival Memory has a "
    "much larger capacity, but will be held outside of your immediate context due to its size.\n\nHere is the content "
    "of your Core Memory from previous interactions:\n{memory_content}\n"
)
MEMORY_BACKEND_INSTRUCTION_UNIFIED = (
    "{scenario_setting}\n\nYou have access to an advanced memory system, which is persistent across multiple "
    "conversations with the user, and can be accessed in a later interactions. You should actively manage your memory "
    "data to keep track of important information, ensure that it is up-to-date and easy to retrieve to provide "
    "personalized responses to the user later.\n\nHere is the content of your memory system from previous "
    "interactions:\n{memory_content}\n"
)


# -- the backends ------------------------------------------------------------------------------------------------------

_vector_backend: dict[str, str | None] = {}
_vector_backend_lock = threading.Lock()


def vector_backend_problem(data_dirs: list[str]) -> str | None:
    """Why the official memory_vector module cannot be loaded here, or None. Loading it loads its encoder
    (``SentenceTransformer("all-MiniLM-L6-v2", device="cpu")`` at module level): from the verified copy when installed
    (:func:`..multi_turn.simulators.verified_sentence_transformers`), else by Hub name as upstream. Tried once per
    process."""
    with _vector_backend_lock:
        if "problem" not in _vector_backend:
            try:
                _memory_class("memory_vector", data_dirs)
                problem = None
            except embedding_models.ModelCopyError as error:
                problem = f"memory_vector's embedding model is not the verified copy: {error}"
            except Exception as error:  # noqa: BLE001 - no copy and no network or Hub cache, a broken install...
                model = embedding_models.model_for(VECTOR_ENCODER)
                try:
                    installed = embedding_models.archive_members(model) is not None
                except embedding_models.ModelCopyError:
                    installed = True
                where = ("" if installed else f"no verified copy is installed ({model.install_hint()}), and ")
                problem = (f"memory_vector's embedding model {VECTOR_ENCODER} could not be loaded: {where}"
                           f"{type(error).__name__}: {error}")
            _vector_backend["problem"] = problem
        return _vector_backend["problem"]


def _memory_class(category: str, data_dirs: list[str]) -> type:
    backend = category.removeprefix("memory_")
    return getattr(official_module(f"memory_{backend}", data_dirs), f"MemoryAPI_{backend}")


def memory_instance(category: str, snapshot: dict | None, data_dirs: list[str] = ()) -> Any:
    """A memory backend holding ``snapshot`` (what upstream's ``_load_scenario`` reads from the snapshot file)."""
    instance = _memory_class(category, list(data_dirs))()
    if snapshot and category == "memory_vector":  # vector stores load their own export (ids, texts, embeddings)
        instance.core_memory.load_from_snapshot(copy.deepcopy(snapshot["core_memory"]))
        instance.archival_memory.load_from_snapshot(copy.deepcopy(snapshot["archival_memory"]))
        return instance
    for attribute, value in (snapshot or {}).items():
        setattr(instance, attribute, copy.deepcopy(value))
    return instance


#: The state each backend writes to its snapshot file (``_flush_memory_to_local_file``).
_SNAPSHOT_ATTRIBUTES = {"memory_kv": ("core_memory", "archival_memory"), "memory_rec_sum": ("memory",)}


def memory_snapshot(category: str, instance: Any) -> dict:
    if category == "memory_vector":
        return {"core_memory": instance.core_memory.export(), "archival_memory": instance.archival_memory.export()}
    return {attribute: copy.deepcopy(getattr(instance, attribute)) for attribute in _SNAPSHOT_ATTRIBUTES[category]}


def memory_instruction(category: str, scenario: str, instance: Any) -> str:
    template = MEMORY_BACKEND_INSTRUCTION_UNIFIED if "rec_sum" in category else MEMORY_BACKEND_INSTRUCTION_CORE_ARCHIVAL
    return template.format(scenario_setting=MEMORY_AGENT_SETTINGS[scenario],
                           memory_content=instance._dump_core_memory_to_context())


def with_memory_instruction(question: list[list[dict]], text: str) -> list[list[dict]]:
    """``add_memory_instruction_system_prompt``: before an existing first system message, else as a new one."""
    question = copy.deepcopy(question)
    first = question[0]
    if first and first[0]["role"] == "system":
        first[0]["content"] = text + "\n\n" + first[0]["content"]
    else:
        first.insert(0, {"role": "system", "content": text})
    return question
