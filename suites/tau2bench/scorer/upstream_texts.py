"""Upstream's texts that the prompts embed word for word (each domain's policy, the user simulator's guidelines), read
from the data folder. The shipped samples hold them re-serialised in one JSON file, ``upstream_texts.json`` (the
file's path under the data folder -> its text), never as byte copies of upstream's files; a text is looked up there
only when the data folder has no file of that name."""

from __future__ import annotations

import functools
import json
from pathlib import Path

from pytest_toolbench.contract.errors import DataError

#: The samples' file of re-serialised texts, at the top of the (samples) data folder.
BUNDLE = "upstream_texts.json"


def read_upstream_text(root: Path, relative: str, newline: str | None = None) -> str:
    """The text of ``root/relative`` (``newline`` as ``open`` takes it: "" reads it as it is), else that entry of
    ``root/upstream_texts.json``; one DataError naming the file when neither has it."""
    path = Path(root) / relative
    try:
        with open(path, encoding="utf-8", newline=newline) as handle:
            return handle.read()
    except FileNotFoundError:
        text = _bundle(str(Path(root) / BUNDLE)).get(relative)
        if text is None:
            raise DataError(path, "cannot read: no such file") from None
        return text if newline == "" else text.replace("\r\n", "\n").replace("\r", "\n")
    except OSError as error:
        raise DataError(path, f"cannot read: {error}") from None


@functools.lru_cache(maxsize=8)
def _bundle(path: str) -> dict[str, str]:
    try:
        with open(path, encoding="utf-8") as handle:
            loaded = json.load(handle)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as error:
        raise DataError(Path(path), f"cannot read: {error}") from None
    return loaded if isinstance(loaded, dict) else {}
