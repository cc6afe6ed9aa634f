"""BFCL v4's scored categories and the language of each: the names every other module of the scorer reads.

Nothing here imports the rest of the scorer, so the loaders, the prompt builder, the checkers and the aggregation can
all depend on it without depending on each other. The names are upstream's (``bfcl_eval/constants/category_mapping.py``
at gorilla commit 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8); the order is the leaderboard's (agentic: web search
before memory, where upstream lists memory first).
"""

from __future__ import annotations

NON_LIVE_AST = ("simple_python", "simple_java", "simple_javascript", "multiple", "parallel", "parallel_multiple")
LIVE_AST = ("live_simple", "live_multiple", "live_parallel", "live_parallel_multiple")
#: The single-turn categories (one request, the AST checker or the relevance rule).
CATEGORIES = NON_LIVE_AST + ("irrelevance",) + LIVE_AST + ("live_irrelevance", "live_relevance")
RELEVANCE_CATEGORIES = ("irrelevance", "live_irrelevance", "live_relevance")
MULTI_TURN = ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context")
WEB_SEARCH = ("web_search_base", "web_search_no_snippet")
MEMORY = ("memory_kv", "memory_vector", "memory_rec_sum")
AGENTIC = WEB_SEARCH + MEMORY
#: Every scored category of BFCL v4, in the leaderboard's order.
ALL_CATEGORIES = CATEGORIES + MULTI_TURN + AGENTIC
#: upstream's NON_SCORING_CATEGORY: run and reported (per prompt format), in no aggregate and no Overall
FORMAT_SENSITIVITY = "format_sensitivity"
NON_SCORING = (FORMAT_SENSITIVITY,)
#: every category this suite runs
RUN_CATEGORIES = ALL_CATEGORIES + NON_SCORING


def language_of(category: str) -> str:
    """The return format of a category's calls, read from its name as upstream's ``utils.py::is_java`` / ``is_js``
    do."""
    if "javascript" in category:
        return "javascript"
    if "java" in category:
        return "java"
    return "python"
