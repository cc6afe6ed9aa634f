"""Writers: what a finished run becomes (the terminal summary, the JSON results, the Markdown summary, the HTML
page, an Every Eval Ever export, or an output of your own).

A writer is any object with the four members of :class:`Writer`. Every writer, the built-in ones included, reaches
the run the same way: an implementation of the ``pytest_toolbench_writers(config, settings)`` hook
(``plugin/hookspecs.py``) returns it, and the run hands it the finished run's :class:`~.run_report.RunReport` once,
on the controller (or the single process; never on an xdist worker). A writer only formats what the report holds:
it never calls back into the run, the catalog or the options (``docs/adding-a-writer.md``).

The run's reporting (``report/run.py``) calls each writer in the order the hook returned them (the built-in ones
first: terminal, JSON, Markdown, HTML, Every Eval Ever; then yours). An ``OSError`` from ``write`` is one line
naming the writer's output, and the run's other outputs still appear; a run interrupted before any case was scored
calls no writer that has a ``path`` (the file is left as it was, with one line saying so).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Protocol, runtime_checkable

if TYPE_CHECKING:
    from .run_report import RunReport

#: the members every writer has (checked where the hook's answers are collected)
MEMBERS = ("name", "what", "path", "write")


@runtime_checkable
class Writer(Protocol):
    """One output of a finished run."""

    #: a short unique name (``terminal``, ``json``, ``markdown``, ``html``, ``eee``, or yours)
    name: str
    #: how the run's closing lines name the output: ``toolbench: {what} written to {path}``,
    #: ``could not write the {what} to {path}``
    what: str
    #: the file or folder it writes (None: none of its own, as the terminal)
    path: Path | None

    def write(self, report: "RunReport") -> Path | None:
        """Write the run's report; return the file or folder written, for the ``written to`` line, or None when
        there is nothing to announce (the terminal; the HTML page, which pytest-html writes and names)."""


def problem(writer: Any) -> str | None:
    """Why ``writer`` is not a writer (the members it lacks), or None."""
    missing = [member for member in MEMBERS if not hasattr(writer, member)]
    if missing:
        return f"{writer!r} is not a writer: it lacks {', '.join(missing)} (see docs/adding-a-writer.md)"
    if not callable(writer.write):
        return f"{writer!r} is not a writer: its write is not callable"
    return None


def collect(answers: Iterable[Any]) -> list[Any]:
    """The writers of the hook's answers (each a writer, a list of writers or None), in order; a name given twice
    or an object that is not a writer raises ``ValueError`` naming it."""
    writers: list[Any] = []
    for answer in answers:
        if answer is None:
            continue
        for writer in answer if isinstance(answer, (list, tuple)) else (answer,):
            found = problem(writer)
            if found:
                raise ValueError(f"pytest_toolbench_writers: {found}")
            if any(other.name == writer.name for other in writers):
                raise ValueError(f"pytest_toolbench_writers: two writers are named {writer.name!r}")
            writers.append(writer)
    return writers
