"""The pytest side of the backend kinds (``backends/kind.py`` knows no pytest): the built-in kinds registered as
small plugins, each with its ``pytest_toolbench_backend_kind`` hookimpl (as pytest-xdist picks a scheduler through
``pytest_xdist_make_scheduler``); a kind's declared options added to pytest's parser; and the command line's values
handed to a kind as a plain mapping, its ``UsageProblem`` raised as pytest's usage error.
"""

from __future__ import annotations

from typing import Any, Sequence

import pytest

from ..backends.gold import GoldKind
from ..backends.kind import BackendKind
from ..backends.openai_plugin import OpenAIKind
from ..backends.replay import ReplayKind
from ..backends.vllm.plugin import VllmKind
from ..contract.errors import UsageProblem
from .errors import usage_error


def option_values(config: pytest.Config) -> dict[str, Any]:
    """The command line's option values by ``dest``: what a kind's ``claims``, ``from_values`` and
    ``check_unchosen`` read (``config.getoption(dest)`` is ``option_values(config)[dest]``)."""
    return dict(vars(config.option))


class KindPlugin:
    """A plugin that declares ``kind`` (``BACKEND_KIND``) and returns it from ``pytest_toolbench_backend_kind``
    when named, or when unnamed and its options claim the run; ``order``: ``tryfirst``/``trylast``."""

    def __init__(self, kind: type[BackendKind], **order: bool):
        self.BACKEND_KIND = kind

        @pytest.hookimpl(**order)
        def pytest_toolbench_backend_kind(config: pytest.Config, name: str | None) -> type[BackendKind] | None:
            return kind.choose(option_values(config), name)

        self.pytest_toolbench_backend_kind = pytest_toolbench_backend_kind

    def __repr__(self) -> str:
        return f"<backend kind {self.BACKEND_KIND.name!r}>"


#: The built-in backends' plugins, in the order their names are listed: (registered name, plugin). Asked in turn
#: (firstresult): replay first (saved outputs given: they are scored, even beside --model), then openai (by name
#: only) and vllm (``--model``), gold last (whatever no other backend claimed).
BUILTIN_PLUGINS = (
    ("gold", KindPlugin(GoldKind, trylast=True)),
    ("replay", KindPlugin(ReplayKind, tryfirst=True)),
    ("vllm.plugin", KindPlugin(VllmKind)),
    ("openai_plugin", KindPlugin(OpenAIKind)),
)


def register_builtin_kinds(pluginmanager: pytest.PytestPluginManager) -> None:
    for name, plugin in BUILTIN_PLUGINS:
        if not pluginmanager.is_registered(plugin):
            pluginmanager.register(plugin, f"toolbench-backend-{name}")


def add_backend_options(parser: pytest.Parser, kind: type[BackendKind]) -> None:
    """The kind's own options (``BackendKind.option_specs``), each in its group."""
    for spec in kind.option_specs:
        parser.getgroup(spec.group).addoption(*spec.names, **spec.settings)


def backend_options(config: pytest.Config, kind: type[BackendKind], unchosen: Sequence[type[BackendKind]],
                    model: str | None) -> Any:
    """The chosen kind's options from the command line (``from_values``), after which every other kind refuses an
    option of its own that would be ignored (``check_unchosen``); a problem is one usage error."""
    given = option_values(config)
    try:
        chosen = kind.from_values(given, model)
        for other in unchosen:
            other.check_unchosen(given)
    except UsageProblem as error:
        raise usage_error(error) from None
    return chosen
