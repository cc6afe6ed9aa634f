"""Which built-in backend honours which option: the one table, so that no option is ever accepted and ignored.

Every option of the plugin's groups is declared here (``tests/test_option_scope.py`` fails on one that is not, and
walks every option x backend pair: each is honoured, or refused with one usage error line). An option given with a
value other than its default to a built-in backend that does not honour it stops the run before anything starts,
with one line naming the option, the backend, why, and the backends that honour it. ``docs/options.md`` shows the
table (written by ``scripts/make_options_doc.py``).

A backend registered by another plugin (``registry.add_backend`` or its own kind) is not in the table: it is handed
the whole ``RunOptions`` and reads what it wants, so nothing is refused for it here.
"""

from __future__ import annotations

from typing import Any, Mapping

import pytest

from ..prompting import rows

#: the built-in backends, in the order the table lists them
BUILTIN = ("gold", "replay", "vllm", "openai")
ALL = frozenset(BUILTIN)
MODELS = frozenset({"vllm", "openai"})

#: why an answering backend without a model (gold, replay) has no use for a generation setting
NO_GENERATION = "it generates nothing: it scores reference answers or saved outputs"

#: the option that names a leaderboard row (the declared handler library's): who honours it
ROW_SCOPE = (frozenset({"replay", "vllm", "openai"}),
             "the gold backend writes the reference answers, which no row's handler made")


def _row_scope() -> dict[str, tuple[frozenset, str]]:
    option = rows.row_option()
    return {option.dest: ROW_SCOPE} if option is not None else {}


#: ``dest`` -> (the backends that honour the option, why the others do not)
OPTION_SCOPE: Mapping[str, tuple[frozenset, str]] = {
    # the run: every backend
    "toolbench_backend": (ALL, ""),
    "toolbench_data": (ALL, ""),
    "toolbench_data_unverified": (ALL, ""),
    "toolbench_no_download": (ALL, ""),
    "toolbench_suite_options": (ALL, ""),
    "toolbench_limit": (ALL, ""),
    "toolbench_sample": (ALL, ""),
    "toolbench_sample_seed": (ALL, ""),
    "toolbench_cache": (ALL, ""),  # also the loaded-suite cache, which every backend uses
    # recorded in the header and compared across runs (protocol); gold and replay answers do not depend on it
    "toolbench_mode": (ALL, ""),
    "toolbench_repeat": (ALL, ""),  # gold refuses K > 1 itself (one answer per case); replay: the k-th trial
    # the model: its own backends; replay matches the leaderboard row by it
    "toolbench_model": (frozenset({"replay", "vllm", "openai"}),
                        "the gold backend answers with the reference answers, not a model"),
    **_row_scope(),
    # saved outputs
    "toolbench_replay": (frozenset({"replay"}), "it applies to replayed outputs only"),
    "toolbench_replay_mode": (frozenset({"replay"}), "it applies to replayed outputs only"),
    # generation
    "toolbench_offline": (MODELS, NO_GENERATION + ", so there is no generation cache to miss"),
    "toolbench_commit_every": (MODELS, NO_GENERATION + ", so nothing is committed to the generation cache"),
    "toolbench_commit_seconds": (MODELS, NO_GENERATION + ", so nothing is committed to the generation cache"),
    "toolbench_tool_parser": (MODELS, NO_GENERATION),
    "toolbench_max_tokens": (MODELS, NO_GENERATION),
    "toolbench_temperature": (MODELS, NO_GENERATION),
    "toolbench_seed": (MODELS, NO_GENERATION),
    "toolbench_check_prompts": (MODELS, "it checks the prompts a model is sent, and this backend sends none"),
    "toolbench_keep_prompts": (MODELS, "it keeps the prompts a model is sent, and this backend sends none"),
    "toolbench_user_model": (MODELS, NO_GENERATION + ", and no simulated user"),
    "toolbench_user_base_url": (MODELS, NO_GENERATION + ", and no simulated user"),
    "toolbench_api_key_env": (MODELS, "it names the key of an endpoint, and this backend calls none"),
    "toolbench_prompt_format": (MODELS, NO_GENERATION),
    # the vLLM engine
    "toolbench_tp": (frozenset({"vllm"}), "it is a setting of the vLLM engine, which this backend does not run"),
    "toolbench_replicas": (frozenset({"vllm"}), "it is a setting of the vLLM engine, which this backend does not run"),
    "toolbench_ray_address": (frozenset({"vllm"}),
                              "it is a setting of the vLLM engine, which this backend does not run"),
    "toolbench_dtype": (frozenset({"vllm"}), "it is a setting of the vLLM engine, which this backend does not run"),
    "toolbench_max_model_len": (frozenset({"vllm"}),
                                "it is a setting of the vLLM engine, which this backend does not run"),
    "toolbench_gpu_mem": (frozenset({"vllm"}), "it is a setting of the vLLM engine, which this backend does not run"),
    "toolbench_vllm_args": (frozenset({"vllm"}), "it is a setting of the vLLM engine, which this backend does not run"),
    "toolbench_conversations": (frozenset({"vllm"}),
                                "it is how one vLLM engine runs conversations, which this backend does not run"),
    # the endpoint
    "toolbench_base_url": (frozenset({"openai"}), "it is the endpoint of the openai backend"),
    # reporting: every backend
    "toolbench_json": (ALL, ""),
    "toolbench_md": (ALL, ""),
    "toolbench_eee": (ALL, ""),
    "toolbench_baseline": (ALL, ""),
    "toolbench_leaderboard": (ALL, ""),
    "toolbench_fail_under": (ALL, ""),
    "toolbench_max_drop": (ALL, ""),
    "toolbench_significance": (ALL, ""),
    "toolbench_multiple": (ALL, ""),
    "toolbench_accept_untested": (ALL, ""),
    "toolbench_strict": (ALL, ""),
}


def declared_options(config: pytest.Config) -> dict[str, tuple[str, Any]]:
    """``{dest: (option string, default)}`` of every option in the plugin's groups."""
    found: dict[str, tuple[str, Any]] = {}
    for group in config._parser._groups:  # the parser's groups: pytest has no public reader of them
        if not group.name.startswith("toolbench"):
            continue
        for option in group.options:
            names = option.names()
            found[option.dest] = (max(names, key=len), option.default)
    return found


def honoured_by(dest: str) -> frozenset:
    return OPTION_SCOPE[dest][0]


def refuse_unhonoured(config: pytest.Config, backend: str) -> None:
    """One usage error for the first option given (a value other than its default) that ``backend``, a built-in
    backend, does not honour; nothing for a backend not in the table."""
    if backend not in ALL:
        return
    for dest, (option, default) in declared_options(config).items():
        scope = OPTION_SCOPE.get(dest)
        if scope is None or backend in scope[0]:
            continue
        value = config.getoption(dest, default)
        if value == default or (value in (None, [], False) and default in (None, [], False)):
            continue
        names = [name for name in BUILTIN if name in scope[0]]
        honours = " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
        shown = f"{option}={value}" if not isinstance(value, bool) else option
        raise pytest.UsageError(f"{shown}: not honoured by the {backend} backend ({scope[1]}); it applies to the "
                                f"{honours} backend{'s' if len(names) > 1 else ''}")
