"""The backend contract beyond :class:`~pytest_toolbench.contract.suite.Backend`: what an engine backend (one whose
answers are pre-generated, ``BackendKind.pregenerates``) may also offer pre-generation, each a typed protocol.

==========================  ======================================================================================
protocol                    what pre-generation does with it (``pytest_toolbench.run.generation`` and its parts)
==========================  ======================================================================================
:class:`ListeningBackend`   ``listen(write)``: handed the progress line writer before the engine starts, for news of
                            its own as it happens (an engine replica that dies and restarts)
:class:`StartableBackend`   ``start()``: called once, before the first request is sent (while the rest of the
                            requests are built), so the start-up is reported apart and not counted as generation time
:class:`StatsBackend`       ``stats()``: its figures after pre-generation (JSON values; ``engine_start_seconds``, when
                            there, is the header's engine start-up), kept as the run header's ``generation.backend``
:class:`CommitRhythm`       ``chunk_size``, ``commit_seconds``: how often a conversation stream's answers are committed
                            to the cache (None: 256 answers, 30 s)
:class:`StreamingBackend`   ``continuous`` and ``open_stream()``: interactive cases run without rounds (each
                            conversation's next request is added as soon as it exists) on the
                            :class:`GenerationStream` it returns; None, or ``continuous`` false: step-synchronous rounds
==========================  ======================================================================================

A backend offers a capability by having its members (methods callable); it declares it by naming the protocol among
its base classes (``class MyEngine(StartableBackend, StatsBackend): ...``, as the built-in backends do). A declared
capability whose members are missing is one error when the backend is built (``pytest_toolbench.backends.checked``),
not an ``AttributeError`` in the middle of generation; an undeclared one is still used when every member is there.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol, Sequence, runtime_checkable

from .suite import Generation, Task


@runtime_checkable
class StartableBackend(Protocol):
    """An engine started once, before its first request (loading weights, starting replicas)."""

    def start(self) -> None: ...


@runtime_checkable
class ListeningBackend(Protocol):
    """A backend with news of its own to tell while it runs: ``write(line)`` keeps a progress line."""

    def listen(self, write: Callable[[str], None]) -> None: ...


@runtime_checkable
class StatsBackend(Protocol):
    """A backend that reports its own figures (requests, tokens, seconds; JSON values) after pre-generation."""

    def stats(self) -> dict[str, Any]: ...


@runtime_checkable
class CommitRhythm(Protocol):
    """How often finished answers are handed to the cache: every ``chunk_size`` answers or ``commit_seconds``,
    whichever comes first (None: the core's default)."""

    chunk_size: int | None
    commit_seconds: float | None


@runtime_checkable
class GenerationStream(Protocol):
    """Requests added at any time, answers handed back as they finish (each with the tag it was added with)."""

    def add(self, tasks: Sequence[Task], tags: Sequence[Any]) -> None: ...

    def pending(self) -> int:
        """Requests added and not yet answered."""
        ...

    def step(self) -> list[tuple[Any, Generation]]:
        """Run the engine a little: the ``(tag, answer)`` pairs finished meanwhile (possibly none)."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class StreamingBackend(Protocol):
    """An engine that takes requests while it runs: conversations step without rounds when ``continuous`` and
    ``open_stream()`` returns a stream (None: rounds, e.g. an engine build that cannot enqueue)."""

    continuous: bool

    def open_stream(self) -> GenerationStream | None: ...


#: Each capability's members: (name, whether it is a method).
MEMBERS: dict[type, tuple[tuple[str, bool], ...]] = {
    ListeningBackend: (("listen", True),),
    StartableBackend: (("start", True),),
    StatsBackend: (("stats", True),),
    CommitRhythm: (("chunk_size", False), ("commit_seconds", False)),
    StreamingBackend: (("continuous", False), ("open_stream", True)),
}
CAPABILITIES = tuple(MEMBERS)


def lacking(backend: Any, capability: type) -> list[str]:
    """The members of ``capability`` the backend lacks: absent, a method that is not callable, or only the
    protocol's own empty stub (a class that names the protocol among its bases and never defines the method)."""
    missing = []
    for name, method in MEMBERS[capability]:
        try:
            value = getattr(backend, name)
        except AttributeError:
            missing.append(name)
            continue
        if (method and not callable(value)) or _only_the_stub(backend, name):
            missing.append(name)
    return missing


def _only_the_stub(backend: Any, name: str) -> bool:
    if name in getattr(backend, "__dict__", {}):
        return False
    owner = next((klass for klass in type(backend).__mro__ if name in vars(klass)), None)
    return owner in CAPABILITIES


def offers(backend: Any, capability: type) -> bool:
    """Whether the backend has every member of ``capability`` (declared or not)."""
    return backend is not None and not lacking(backend, capability)


def declared(backend: Any) -> list[type]:
    """The capabilities the backend's class names among its bases."""
    return [capability for capability in CAPABILITIES if capability in type(backend).__mro__]
