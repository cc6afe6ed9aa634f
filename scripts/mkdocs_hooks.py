"""MkDocs hooks (mkdocs.yml ``hooks:``): each suite's own README.md is a page of the site.

``suites/<name>/README.md`` is where a suite documents itself, beside its code, and GitHub shows it there. The site
adds it as the page ``suites/<name>.md`` (``docs/suites/index.md`` is the overview), so strict mode checks its links
too. Links are written as GitHub reads the files in the repository (a suite README links ``../../docs/reports.md``,
a page of ``docs/`` links ``../suites/bfcl/README.md``); the hook rewrites each such link to the page it is in the
site, and MkDocs then checks it like any other link.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\]\((?!\w+://|#|mailto:)([^)\s#]+)(#[^)\s]*)?\)")


def suite_readmes() -> dict[str, Path]:
    """Each suite's README by its page in the site."""
    return {f"suites/{path.parent.name}.md": path for path in sorted(ROOT.glob("suites/*/README.md"))}


def on_files(files, config):
    for uri, path in suite_readmes().items():
        files.append(File.generated(config, uri, abs_src_path=str(path)))
    return files


def site_target(target: str, written_in: Path, page_uri: str, docs_dir: Path) -> str | None:
    """A link written in the repository file ``written_in``, as a link from the site page ``page_uri``; None when it
    leads neither into ``docs/`` nor to a suite's README (MkDocs then reports it)."""
    resolved = Path(os.path.normpath(written_in.parent / target))
    readmes = {path: uri for uri, path in suite_readmes().items()}
    if resolved in readmes:
        resolved = docs_dir / readmes[resolved]
    elif docs_dir not in resolved.parents:
        return None
    return Path(os.path.relpath(resolved, (docs_dir / page_uri).parent)).as_posix()


def on_page_markdown(markdown, page, config, files):
    docs_dir = Path(config["docs_dir"]).resolve()
    uri = page.file.src_uri
    written_in = suite_readmes().get(uri) or docs_dir / uri

    def rewrite(match: re.Match) -> str:
        target = site_target(match.group(1), written_in, uri, docs_dir)
        return f"]({target or match.group(1)}{match.group(2) or ''})"

    return LINK.sub(rewrite, markdown)
