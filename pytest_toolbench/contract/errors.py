"""Errors the plugin reports once, as a usage error, instead of as thousands of failing tests."""

from __future__ import annotations

from pathlib import Path


class ToolbenchError(Exception):
    """Base class: a problem with the run's set-up (options, data, suite definitions), not with a model answer."""


class UsageProblem(ToolbenchError):
    """A run asked for in a way that cannot work (a data folder one level off, a suite option naming no suite of the
    run): the plugin stops with this text, as it is, as pytest's usage error (the core itself knows no pytest)."""


class DataError(ToolbenchError):
    """A data file or suite definition that does not match its schema; names the file, the line and the field."""

    def __init__(self, path: Path | str, message: str, line: int | None = None, field: str | None = None):
        self.path = str(path)
        self.line = line
        self.field = field
        self.message = message
        where = self.path if line is None else f"{self.path}:{line}"
        what = f"field '{field}': " if field else ""
        super().__init__(f"{where}: {what}{message}")


class MissingOutput(ToolbenchError):
    """A backend has no answer for a case (e.g. a replay folder without it, or an offline cache miss): the case is
    scored ``missing_output``. It stays in every denominator (``in_denominators``) unless the benchmark's own scorer
    leaves such a case out (a replayed NesTools API failure). Raised by backends (a conftest's too) and the cache."""

    def __init__(self, message: str, in_denominators: bool = True):
        super().__init__(message)
        self.in_denominators = in_denominators
