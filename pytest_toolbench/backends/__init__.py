"""Backends: where model answers come from. ``gold`` and ``replay`` are cheap and answer on the spot, wherever a
test runs; ``vllm`` and ``openai`` are model backends whose answers are pre-generated once, by the process that owns
the backend, into the generation cache.

**How a backend is found.** Each built-in backend module is a small pytest plugin (registered by
``pytest_toolbench.plugin``, listed in :data:`BUILTIN_PLUGINS`) that declares a *backend kind*
(:class:`~pytest_toolbench.backends.kind.BackendKind`, module attribute ``BACKEND_KIND``) and implements the
firstresult hook ``pytest_toolbench_backend_kind(config, name)`` (as pytest-xdist picks a scheduler through
``pytest_xdist_make_scheduler``). ``name`` is ``--toolbench-backend`` or None; an implementation returns its kind
when named, or, unnamed, when the run's options ask for it: replay (``tryfirst``) with ``--toolbench-replay``, vllm
with ``--model``, gold (``trylast``) otherwise; openai only by name. A name no implementation claims is one usage
error listing the choices. Backends a conftest adds with ``registry.add_backend(name, factory, engine=True)`` are
kinds too (``kind.registered_kind``).

**A backend owns its options.** To add an option to a backend (say ``--toolbench-replicas`` for vLLM):

1. declare it in the kind's ``add_options(parser)`` (``vllm/options.py`` ``add_options``), in the group the kind
   uses;
2. add a field to the kind's frozen options dataclass (``vllm/options.py`` ``VllmOptions``: JSON values only, as it
   travels to xdist workers inside ``RunOptions.backend_options`` and back through ``options_from_json``);
3. read and validate it in ``from_config(config, model)`` (``vllm/plugin.py`` ``VllmKind``; a bad value:
   ``pytest.UsageError`` naming the option); ``check_unchosen(config)`` may refuse it when another backend serves
   the run;
4. use it where the backend is built (``build(options, suites)`` -> ``VllmBackend.from_options``), from
   ``options.backend_options``; if it changes what is generated, put it in the backend's ``fingerprint()``.

The core never tests a backend's name: it asks the kind (class attributes, known before any backend is built, as
xdist workers never build an engine): ``pregenerates``, ``reports_selection``, ``check_model``, ``describe``,
``replayed_path``, ``header_fields``. What the vLLM and OpenAI backends share (model, mode, sampling, commit rhythm,
statistics) is the base class ``common.ModelBackend``.

Importing this package imports no backend implementation; a backend's plugin module imports its implementation
(``vllm.engine``, ``openai_endpoint``), which imports its heavy packages (vllm, torch, transformers, ray) only inside
methods, when an engine starts.
"""

from __future__ import annotations

from typing import Any

from ..contract.errors import MissingOutput, ToolbenchError
from ..contract.suite import Backend, BackendCapabilities

#: The built-in backend plugins (module names in this package), in the order their names are listed.
BUILTIN_PLUGINS = ("gold", "replay", "vllm.plugin", "openai_plugin")

__all__ = ["BUILTIN_PLUGINS", "MissingOutput", "checked"]


def checked(backend: Any, name: str) -> Backend:
    """The core relies on the contract, so a backend that lacks it is one clear error, not a later AttributeError."""
    missing = [attribute for attribute in ("fingerprint", "generate", "close") if not callable(getattr(backend, attribute,
                                                                                                       None))]
    if missing or not isinstance(getattr(backend, "capabilities", None), BackendCapabilities):
        what = ", ".join(missing) if missing else "capabilities (a pytest_toolbench.contract.suite.BackendCapabilities)"
        raise ToolbenchError(f"backend {name!r} ({type(backend).__name__}) lacks {what}")
    return backend
