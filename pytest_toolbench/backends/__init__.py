"""Backends: where model answers come from. ``gold`` and ``replay`` are cheap and answer on the spot, wherever a
test runs; ``vllm`` and ``openai`` are model backends whose answers are pre-generated once, by the process that owns
the backend, into the generation cache.

**How a backend is found.** Each built-in backend declares a *backend kind*
(:class:`~pytest_toolbench.backends.kind.BackendKind`: its name, options, capabilities and how it is built; plain
values, no pytest). The plugin registers one small pytest plugin per built-in kind (``plugin/backend_kinds.py``,
``BUILTIN_PLUGINS``), each implementing the firstresult hook ``pytest_toolbench_backend_kind(config, name)`` (as
pytest-xdist picks a scheduler through ``pytest_xdist_make_scheduler``) with ``kind.choose(values, name)``. ``name``
is ``--toolbench-backend`` or None; a kind is returned when named, or, unnamed, when the run's option values ask for
it: replay (``tryfirst``) with ``--toolbench-replay``, vllm with ``--model``, gold (``trylast``) otherwise; openai
only by name. A name no implementation claims is one usage error listing the choices. Backends a conftest adds with
``registry.add_backend(name, factory, engine=True)`` are kinds too (``kind.registered_kind``).

**A backend owns its options.** To add an option to a backend (say ``--toolbench-replicas`` for vLLM):

1. declare it among the kind's ``option_specs`` (``vllm/options.py`` ``OPTION_SPECS``: ``kind.option(...)``, written
   as an ``addoption`` call, in the group the kind uses);
2. add a field to the kind's frozen options dataclass (``vllm/options.py`` ``VllmOptions``: JSON values only, as it
   travels to xdist workers inside ``RunOptions.backend_options`` and back through ``options_from_json``);
3. read and validate it in ``from_values(given, model)`` (``given``: the option values by dest; ``vllm/plugin.py``
   ``VllmKind``; a bad value: ``UsageProblem`` naming the option); ``check_unchosen(given)`` may refuse it when
   another backend serves the run;
4. use it where the backend is built (``build(options, suites)`` -> ``VllmBackend.from_options``), from
   ``options.backend_options``; if it changes what is generated, put it in the backend's ``fingerprint()``.

The core never tests a backend's name: it asks the kind (class attributes, known before any backend is built, as
xdist workers never build an engine): ``pregenerates``, ``reports_selection``, ``check_model``, ``describe``,
``replayed_path``, ``header_fields``; and what a built backend offers beyond ``generate`` through the protocols of
``contract.engine`` (``StartableBackend``, ``StreamingBackend``, ...), which :func:`checked` verifies for the ones its
class declares. What the vLLM and OpenAI backends share (model, mode, sampling, commit rhythm, statistics) is the
base class ``common.ModelBackend``.

Importing this package imports no backend implementation; a backend's kind module imports its implementation
(``vllm.engine``, ``openai_endpoint``), which imports its heavy packages (vllm, torch, transformers, ray) only inside
methods, when an engine starts. Nothing here imports pytest.
"""

from __future__ import annotations

from typing import Any

from ..contract import engine
from ..contract.errors import MissingOutput, ToolbenchError
from ..contract.suite import Backend, BackendCapabilities

__all__ = ["MissingOutput", "checked"]


def checked(backend: Any, name: str) -> Backend:
    """The core relies on the contract, so a backend that lacks it is one clear error, not a later AttributeError:
    the :class:`~pytest_toolbench.contract.suite.Backend` protocol's members, and those of every capability of
    ``contract.engine`` the backend's class declares (names among its bases)."""
    missing = [attribute for attribute in ("fingerprint", "generate", "close")
               if not callable(getattr(backend, attribute, None))]
    if missing or not isinstance(getattr(backend, "capabilities", None), BackendCapabilities):
        what = ", ".join(missing) if missing else "capabilities (a pytest_toolbench.contract.suite.BackendCapabilities)"
        raise ToolbenchError(f"backend {name!r} ({type(backend).__name__}) lacks {what}")
    for capability in engine.declared(backend):
        lacks = engine.lacking(backend, capability)
        if lacks:
            raise ToolbenchError(f"backend {name!r} ({type(backend).__name__}) declares {capability.__name__} "
                                 f"(pytest_toolbench.contract.engine) but lacks {', '.join(lacks)}")
    return backend
