"""No option is ever accepted and ignored: every option x built-in backend pair is honoured (declared in
``plugin/option_scope.OPTION_SCOPE``, shown in docs/options.md) or refused with one usage error line naming it."""

from __future__ import annotations

import contextlib
import io
import os

import pytest
from _pytest.config import _prepareconfig

from pytest_toolbench.backends.gold import GoldKind
from pytest_toolbench.backends.openai_plugin import OpenAIKind
from pytest_toolbench.backends.replay import ReplayKind
from pytest_toolbench.backends.vllm.plugin import VllmKind
from pytest_toolbench.plugin import option_scope
from pytest_toolbench.plugin.options import resolve

KINDS = {"gold": GoldKind, "replay": ReplayKind, "vllm": VllmKind, "openai": OpenAIKind}

#: a value other than the default for each option (valid on its own), as written on a command line
GIVEN = {
    "toolbench_data": "--toolbench-data={tmp}", "toolbench_data_unverified": "--toolbench-data-unverified",
    "toolbench_no_download": "--toolbench-no-download",
    "toolbench_suite_options": "--toolbench-suite-option=rotbench.levels=[clean]",
    "toolbench_limit": "--toolbench-limit=2", "toolbench_sample": "--toolbench-sample=5",
    "toolbench_sample_seed": None,  # needs --toolbench-sample: given with it below
    "toolbench_cache": "--toolbench-cache={tmp}/cache", "toolbench_mode": "--toolbench-mode=native",
    "toolbench_repeat": "--toolbench-repeat=1", "toolbench_model": "--model=Qwen/Qwen3-8B",
    "toolbench_bfcl_model": "--toolbench-bfcl-model=microsoft/phi-4",
    "toolbench_replay": "--toolbench-replay={tmp}", "toolbench_replay_mode": "--toolbench-replay-mode=fc",
    "toolbench_offline": "--toolbench-offline", "toolbench_commit_every": "--toolbench-commit-every=4",
    "toolbench_commit_seconds": "--toolbench-commit-seconds=5",
    "toolbench_tool_parser": "--toolbench-tool-parser=hermes",
    "toolbench_max_tokens": "--toolbench-max-tokens=64", "toolbench_temperature": "--toolbench-temperature=0.5",
    "toolbench_seed": "--toolbench-seed=3", "toolbench_check_prompts": "--toolbench-check-prompts",
    "toolbench_keep_prompts": "--toolbench-keep-prompts",
    "toolbench_user_model": None,  # goes with --toolbench-user-base-url: given together below
    "toolbench_user_base_url": None,
    "toolbench_api_key_env": "--toolbench-api-key-env=MY_KEY",
    "toolbench_prompt_format": "--toolbench-prompt-format=handler",
    "toolbench_tp": "--toolbench-tp=2", "toolbench_replicas": "--toolbench-replicas=2",
    "toolbench_ray_address": None,  # checked by the vllm kind itself (needs Ray), refused elsewhere: given below
    "toolbench_dtype": "--toolbench-dtype=float16", "toolbench_max_model_len": "--toolbench-max-model-len=512",
    "toolbench_gpu_mem": "--toolbench-gpu-memory-utilization=0.5",
    "toolbench_vllm_args": "--toolbench-vllm-arg=enforce_eager=true",
    "toolbench_conversations": "--toolbench-conversations=rounds",
    "toolbench_base_url": "--toolbench-base-url=http://127.0.0.1:9/v1",
    "toolbench_json": "--toolbench-json=run.json", "toolbench_md": "--toolbench-md=run.md",
    "toolbench_eee": "--toolbench-eee=eee",
    "toolbench_baseline": "--toolbench-baseline=base.json",
    "toolbench_leaderboard": "--toolbench-leaderboard=bfcl=x.csv",
    "toolbench_fail_under": "--toolbench-fail-under=bfcl.Overall=50", "toolbench_max_drop": "--toolbench-max-drop=1",
    "toolbench_significance": "--toolbench-significance=0.05", "toolbench_multiple": "--toolbench-multiple=bonferroni",
    "toolbench_accept_untested": "--toolbench-accept-untested", "toolbench_strict": "--toolbench-strict",
}
TOGETHER = {"toolbench_sample_seed": ["--toolbench-sample=5", "--toolbench-sample-seed=2"],
            "toolbench_user_model": ["--toolbench-user-model=u", "--toolbench-user-base-url=http://127.0.0.1:9/v1"],
            "toolbench_user_base_url": ["--toolbench-user-model=u", "--toolbench-user-base-url=http://127.0.0.1:9/v1"],
            "toolbench_ray_address": ["--toolbench-ray-address=127.0.0.1:6379"]}
#: what each backend needs to be chosen at all
BASE = {"gold": ["--toolbench-backend=gold"], "replay": ["--toolbench-backend=replay", "--toolbench-replay={tmp}"],
        "vllm": ["--toolbench-backend=vllm", "--model=/no/such/ckpt"],
        "openai": ["--toolbench-backend=openai", "--model=m", "--toolbench-base-url=http://127.0.0.1:9/v1"]}
#: pairs whose option is honoured but whose value, given with this backend, has a check of its own
OWN_CHECKS = {("replay", "toolbench_mode"): "contradicts",  # a named row with native mode (not reached: no row)
              ("vllm", "toolbench_ray_address"): "Ray", ("vllm", "toolbench_bfcl_model"): None,
              ("openai", "toolbench_bfcl_model"): None}


@contextlib.contextmanager
def _config(tmp_path, args):
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            config = _prepareconfig(["-p", "no:cacheprovider", "--noconftest", *args])
        try:
            yield config
        finally:
            config._ensure_unconfigure()
    finally:
        os.chdir(here)


def _args(dest: str, tmp) -> list[str]:
    given = TOGETHER.get(dest) or [GIVEN[dest]]
    return [arg.replace("{tmp}", str(tmp)) for arg in given]


def _resolve(tmp_path, backend: str, args: list[str]):
    base = [arg.replace("{tmp}", str(tmp_path)) for arg in BASE[backend]]
    with _config(tmp_path, base + args) as config:
        kind = KINDS[backend]
        return resolve(config, kind, [other for other in KINDS.values() if other is not kind])


def test_every_option_of_the_plugin_is_in_the_table(tmp_path):
    with _config(tmp_path, []) as config:
        declared = option_scope.declared_options(config)
    assert set(declared) == set(option_scope.OPTION_SCOPE), "declare each option's backends in OPTION_SCOPE"
    assert set(declared) == set(GIVEN) | {"toolbench_backend"}
    for dest, (honours, why) in option_scope.OPTION_SCOPE.items():
        assert honours and honours <= option_scope.ALL
        assert why or honours == option_scope.ALL, f"{dest}: say why the other backends refuse it"


# a pytest configuration per option and backend: about 3 s per backend on a 2-core machine
@pytest.mark.parametrize("backend", option_scope.BUILTIN)
def test_every_option_is_honoured_or_refused_in_one_line(backend, tmp_path):
    (tmp_path / "cache").mkdir()
    for dest in sorted(option_scope.OPTION_SCOPE):
        if dest == "toolbench_backend":
            continue
        args = _args(dest, tmp_path)
        honoured = backend in option_scope.honoured_by(dest)
        try:
            options = _resolve(tmp_path, backend, args)
        except pytest.UsageError as error:
            message = str(error)
            assert "\n" not in message, (dest, message)
            if honoured:
                expected = OWN_CHECKS.get((backend, dest), "<no refusal expected>")
                assert expected is not None and expected in message, (backend, dest, message)
            else:
                # the option named (of a pair given together, either one)
                assert any(arg.split("=")[0] in message for arg in args) or dest == "toolbench_model", \
                    (backend, dest, message)
            continue
        assert honoured, f"{args} accepted by the {backend} backend, which does not honour it"
        assert options.backend == backend


def test_a_refusal_names_the_option_the_backend_and_who_honours_it(tmp_path):
    with pytest.raises(pytest.UsageError) as error:
        _resolve(tmp_path, "gold", ["--toolbench-temperature=0.5"])
    assert str(error.value) == ("--toolbench-temperature=0.5: not honoured by the gold backend (it generates "
                                "nothing: it scores reference answers or saved outputs); it applies to the vllm and "
                                "openai backends")
    with pytest.raises(pytest.UsageError, match="--toolbench-tp=2: not honoured by the openai backend"):
        _resolve(tmp_path, "openai", ["--toolbench-tp=2"])
    # the default value, written out, is no refusal
    assert _resolve(tmp_path, "gold", ["--toolbench-commit-seconds=30", "--toolbench-dtype=auto"]).backend == "gold"
