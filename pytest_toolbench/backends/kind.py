"""What the core knows of a backend before one is built: a *backend kind* (a class, never instantiated).

A kind names the backend, declares its own command-line options as plain values (:class:`OptionSpec`: the plugin
adds them to pytest's parser), validates their values (a mapping of option values by ``dest``) into a frozen,
JSON-safe options dataclass of its own (shipped to xdist workers inside ``RunOptions.backend_options``), says
whether it claims a run from those values, and states its capabilities as class attributes: xdist workers never
build an engine, yet they must know whether answers were pre-generated. The core asks these instead of testing a
name. A kind knows no pytest: a bad option value is a :class:`~pytest_toolbench.contract.errors.UsageProblem`,
which the plugin reports as pytest's usage error (``plugin/backend_kinds.py``).

Imports nothing heavy: ``build`` imports the implementation (and through it vllm or an HTTP client) only when the
run's owner builds the backend.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, ClassVar, Iterable, Mapping, Protocol

from ..contract.suite import Backend, Case

#: The command line's option values by ``dest`` (``--toolbench-replay`` is ``given["toolbench_replay"]``), as
#: pytest parsed them: what a kind reads to claim a run and to build its options.
OptionValues = Mapping[str, Any]


class RunOptions(Protocol):
    """What a backend reads of the run's resolved options (``pytest_toolbench.run.options.RunOptions``, which
    depends on this module for the kind; a protocol here keeps the arrow one way): the model, the generation and
    cache settings, and the backend's own options (its kind's ``options_type``)."""

    model: str | None
    generation: Any
    cache: Any
    backend_options: Any


class Suite(Protocol):
    """What a backend reads of a loaded suite: its scorer (``benchmark``) and its case ids."""

    name: str
    benchmark: Any
    all_case_ids: Any
    cases: list[Case]


class SuiteLookup(Protocol):
    """The loaded suites by name (the run's ``Catalog``): how gold and replay reach a suite's scorer."""

    def by_name(self, name: str) -> Suite | None: ...


@dataclasses.dataclass(frozen=True)
class OptionSpec:
    """One command-line option of a backend, as plain values: ``names`` (``"--toolbench-tp"``), the option group it
    is listed in, and argparse's keyword arguments (``dest``, ``type``, ``default``, ``choices``, ``metavar``,
    ``action``, ``help``), handed to pytest as they are."""

    names: tuple[str, ...]
    settings: Mapping[str, Any]
    group: str = "toolbench-generation"


def option(*names: str, group: str = "toolbench-generation", **settings: Any) -> OptionSpec:
    """``option("--toolbench-tp", dest="toolbench_tp", type=int, default=1, help=...)``: written as an
    ``addoption`` call."""
    return OptionSpec(names, dict(settings), group)


@dataclasses.dataclass(frozen=True)
class NoOptions:
    """The options of a backend that has none of its own."""


class BackendKind:
    """Subclass per backend; every member is class-level. See ``pytest_toolbench.backends`` for the pattern."""

    #: the ``--toolbench-backend`` name
    name: ClassVar[str] = ""
    #: answers are generated once, before the tests, by the process that owns the backend (a single process or the
    #: xdist controller), into the generation cache; workers only read it. False: the backend answers on the spot,
    #: in whichever process scores the case (it is cheap to build there).
    pregenerates: ClassVar[bool] = False
    #: the backend answers every case with its reference answer: a case that fails is an upstream annotation
    #: defect, and a documented one (``known_defects.yaml``) runs as a strict expected failure
    reference_answers: ClassVar[bool] = False
    #: the backend reports on the run's selection once it is known (:meth:`report_selection`)
    reports_selection: ClassVar[bool] = False
    #: the backend can draw several different answers to one request (``--toolbench-repeat``); False for one that
    #: has a single answer per case (reference answers, saved outputs), which refuses the option
    samples: ClassVar[bool] = True
    #: the backend's own options (a frozen dataclass of JSON values)
    options_type: ClassVar[type] = NoOptions
    #: the backend's own command-line options (added to pytest's parser once, by the plugin's
    #: ``pytest_addoption``), read back by dest in :meth:`from_values`
    option_specs: ClassVar[tuple[OptionSpec, ...]] = ()

    # -- options ----------------------------------------------------------------------------------------------
    @classmethod
    def claims(cls, given: OptionValues) -> bool:
        """Without ``--toolbench-backend``: whether the given option values ask for this backend."""
        return False

    @classmethod
    def choose(cls, given: OptionValues, name: str | None) -> "type[BackendKind] | None":
        """The body of a ``pytest_toolbench_backend_kind`` implementation: this kind when named, or when not named
        and its options claim the run."""
        return cls if (name == cls.name if name else cls.claims(given)) else None

    @classmethod
    def from_values(cls, given: OptionValues, model: str | None) -> Any:
        """The backend's options from the command line's values, validated: a bad value is a ``UsageProblem``
        naming the option. ``model`` is the run's ``--model``."""
        return cls.options_type()

    @classmethod
    def check_unchosen(cls, given: OptionValues) -> None:
        """Another backend serves the run: raise a ``UsageProblem`` for an option of this one that would be
        ignored."""

    @classmethod
    def options_from_json(cls, data: Mapping[str, Any]) -> Any:
        return cls.options_type(**data)

    # -- the backend --------------------------------------------------------------------------------------------
    @classmethod
    def build(cls, options: RunOptions, suites: SuiteLookup) -> Backend:
        raise NotImplementedError(f"backend kind {cls.name!r} builds nothing")

    @classmethod
    def check_model(cls, options: RunOptions) -> str | None:
        """Before anything starts: raise ``ModelUnavailable`` when the model (or endpoint) cannot be had; returns a
        line for the run header (e.g. a cached copy used offline), or None."""
        return None

    # -- what the reports say -----------------------------------------------------------------------------------
    @classmethod
    def describe(cls, options: RunOptions) -> str:
        """The ``toolbench: backend ...`` line of pytest's header."""
        return f"{cls.name}, model {options.model}, mode {options.generation.mode}"

    @classmethod
    def replayed_path(cls, options: RunOptions) -> str | None:
        """The run header's ``replay`` field: the saved outputs scored, for a backend that replays them."""
        return None

    @classmethod
    def header_fields(cls, options: RunOptions) -> dict[str, Any]:
        """Fields of the backend's own for the run header (after the data fields)."""
        return {}

    @classmethod
    def row_choice(cls, options: RunOptions) -> Any:
        """The run header's row choice (under the handler library's key) for a backend that has no
        ``row_choice()`` of its own (gold, replay: a ``prompting.rows.RowChoice``, from the options), or None."""
        return None

    @classmethod
    def report_selection(cls, backend: Backend, cases: list[Case], write_line: Callable[[str], None]) -> dict:
        """With ``reports_selection``: once the selection is known, print what the user should know about it and
        return the facts for the run header."""
        return {}


def registered_kind(name: str, factory: Callable[[Any], Backend], engine: bool) -> type[BackendKind]:
    """The kind of a backend added with ``registry.add_backend(name, factory, engine=...)``: built by
    ``factory(options)`` with the run's ``RunOptions``."""

    def build(cls, options: RunOptions, suites: SuiteLookup) -> Backend:
        return factory(options)

    return type(f"Registered_{name}", (BackendKind,), {"name": name, "pregenerates": engine,
                                                        "build": classmethod(build)})


def kinds_of(plugins: Iterable[tuple[str, Any]]) -> list[type[BackendKind]]:
    """The kinds of the registered plugins that declare one (a ``BACKEND_KIND`` attribute), in registration order."""
    found: list[type[BackendKind]] = []
    for _, plugin in plugins:
        kind = getattr(plugin, "BACKEND_KIND", None)
        if isinstance(kind, type) and issubclass(kind, BackendKind) and kind not in found:
            found.append(kind)
    return found
