"""The ``openai`` backend as the core sees it before one is built: its options and capabilities (``OpenAIKind``); the
HTTP client (``openai_endpoint.OpenAIEndpointBackend``) is built when the run's owner builds the backend. Chosen by
name only (``--toolbench-backend=openai``; the hookimpl is in ``plugin/backend_kinds.py``)."""

from __future__ import annotations

import dataclasses

from ..contract.errors import UsageProblem
from ..contract.suite import Backend
from .kind import BackendKind, OptionValues, RunOptions, SuiteLookup, option
from .model_source import check_endpoint
from .openai_endpoint import OpenAIEndpointBackend
from ..prompting.suite_prompts import SuitePrompts


@dataclasses.dataclass(frozen=True)
class OpenAIOptions:
    #: ``--toolbench-base-url``: the OpenAI-compatible endpoint
    base_url: str
    #: ``--toolbench-prompt-format``: auto (the official harness's text to /completions where there is a renderer
    #: for the model), handler (that, or an error) or chat-template (always /chat/completions)
    prompt_format: str = "auto"


class OpenAIKind(BackendKind):
    name = "openai"
    pregenerates = True
    options_type = OpenAIOptions
    option_specs = (option("--toolbench-base-url", dest="toolbench_base_url", default=None, metavar="URL",
                           help="OpenAI-compatible endpoint for --toolbench-backend openai."),)

    @classmethod
    def from_values(cls, given: OptionValues, model: str | None) -> OpenAIOptions:
        base_url = given["toolbench_base_url"]
        if not (base_url and model):
            raise UsageProblem("--toolbench-backend openai needs --toolbench-base-url URL and --model NAME")
        return OpenAIOptions(base_url=base_url, prompt_format=given.get("toolbench_prompt_format", "auto"))

    @classmethod
    def build(cls, options: RunOptions, suites: SuiteLookup) -> Backend:
        return OpenAIEndpointBackend.from_options(options, SuitePrompts.of_run(suites))

    @classmethod
    def check_model(cls, options: RunOptions) -> str | None:
        if not options.cache.offline:
            check_endpoint("--toolbench-base-url", options.backend_options.base_url)
        return None
