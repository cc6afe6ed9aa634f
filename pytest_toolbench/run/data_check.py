"""The run's local data checked before collection (``Catalog.check_data``): each suite's data folder against the
sha256 sums of its ``suite.yaml``, a data folder given one level off, a ``--toolbench-suite-option`` naming no suite
of the run; each one usage error."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Protocol

from .. import data
from ..contract.definition import OptionError, SuiteDefinition, find_definitions
from ..contract.errors import DataError, ToolbenchError, UsageProblem


class LocalData(Protocol):
    """What the check reads of the run's catalog (``run.catalog.Catalog``)."""

    data_dir: str | None
    data_origin: str
    data_dir_hook: Callable[[str], Any] | None
    data_unverified: bool
    hashes: data.HashCache
    suite_options: Mapping[str, Mapping[str, Any]]

    def definition(self, definition_path: Path) -> SuiteDefinition: ...


def check_local_data(run: LocalData, paths: Iterable[Path | str]) -> None:
    """Verify the local data of every suite defined under ``paths`` now; a difference is a ``UsageProblem``.

    Definitions that do not load, and suites whose data are not a local folder, are left to collection (which
    reports a broken definition, and verifies whatever folder a sub-folder conftest hook then names).
    """
    named = set()
    try:
        _check_data_dir_level(run, find_definitions(paths))
        for definition_path in find_definitions(paths):
            try:
                definition = run.definition(definition_path)
            except OptionError:
                raise  # a default or an override its schema refuses: one usage error, now
            except (ToolbenchError, OSError):
                continue
            named.add(definition.name)
            if not definition.data_files:
                continue
            override = run.data_dir_hook(definition.name) if run.data_dir_hook else None
            folder = Path(override) if override is not None else \
                Path(run.data_dir) / definition.data_folder if run.data_dir else None
            if folder is None or not folder.is_dir():
                continue
            data.verify(data.DataSource(folder, "folder", str(folder)), definition, run.hashes,
                        run.data_unverified)
    except OptionError as error:
        raise UsageProblem(error.usage_line()) from None
    except DataError as error:
        raise UsageProblem(f"pytest-toolbench: {error}") from None
    finally:
        run.hashes.save()
    unknown = sorted(set(run.suite_options) - named)
    if named and unknown:
        raise UsageProblem(f"--toolbench-suite-option={unknown[0]}.…: no suite named {unknown[0]!r} in this run "
                           f"(suites: {', '.join(sorted(named))})")


def _check_data_dir_level(run: LocalData, definition_paths: Iterable[Path]) -> None:
    """A data folder given one level too high (or too low) holds none of the suites' folders: one usage error
    saying so, where it looked and the folder that does hold them, instead of each suite in turn falling back
    to its samples or blaming a file one suite reads from the root (TL-Training's ``bfcl/unused_datasets``)."""
    if not run.data_dir:
        return
    root = Path(run.data_dir)
    if not root.is_dir():
        return  # the options' own check names a missing folder
    wanted: set[str] = set()
    for definition_path in definition_paths:
        try:
            definition = run.definition(definition_path)
        except (ToolbenchError, OSError):
            continue
        if run.data_dir_hook is not None and run.data_dir_hook(definition.name) is not None:
            continue  # a conftest names this suite's folder itself
        folder = Path(definition.data_folder)
        if folder.parts:
            wanted.add(folder.parts[0])
        elif definition.data_files:  # a suite reading the root itself: the folders its files are in
            wanted.update(Path(rel).parts[0] for rel in definition.data_files if len(Path(rel).parts) > 1)
    if not wanted or any((root / name).is_dir() for name in wanted):
        return
    shown = ", ".join(f"{name}/" for name in sorted(wanted)[:6]) + (", ..." if len(wanted) > 6 else "")
    try:
        children = sorted(child for child in root.iterdir() if child.is_dir())
    except OSError:
        children = []
    holding = [child for child in children if any((child / name).is_dir() for name in wanted)]
    parent = root.resolve().parent
    if holding:
        hint = f"; {holding[0]} holds {', '.join(sorted(f'{n}/' for n in wanted if (holding[0] / n).is_dir()))}" \
               f": did you mean --toolbench-data={holding[0]}?"
    elif any((parent / name).is_dir() for name in wanted):
        hint = f"; its parent {parent} holds them: did you mean --toolbench-data={parent}?"
    else:
        listing = ", ".join(f"{child.name}/" for child in children[:4]) + (", ..." if len(children) > 4 else "")
        hint = f" (it holds {listing or 'no folders'}); point it at the folder that holds one folder per suite"
    raise UsageProblem(f"pytest-toolbench: the data folder {root} (from {run.data_origin}) holds none of "
                       f"the suites' data folders: looked for {shown} in {root}{hint}")
