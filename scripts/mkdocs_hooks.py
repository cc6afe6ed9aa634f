"""MkDocs hooks (mkdocs.yml ``hooks:``): each suite's own README.md is a page of the site.

``suites/<name>/README.md`` is where a suite documents itself, beside its code, and GitHub shows it there. The site
adds it as the page ``suites/<name>.md`` (``docs/suites/index.md`` is the overview), so strict mode checks its links
too. A suite README links into the documentation as GitHub reads it, ``../../docs/<page>.md``; in the site that page
is ``../<page>.md`` from ``suites/<name>.md``, and the link is rewritten so (and then checked like any other).
"""

from __future__ import annotations

import re
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[1]
DOCS_LINK = re.compile(r"\]\(\.\./\.\./docs/")


def suite_readmes() -> dict[str, Path]:
    """The page of each suite's README in the site, by its path there."""
    return {f"suites/{path.parent.name}.md": path for path in sorted(ROOT.glob("suites/*/README.md"))}


def on_files(files, config):
    for uri, path in suite_readmes().items():
        files.append(File.generated(config, uri, abs_src_path=str(path)))
    return files


def on_page_markdown(markdown, page, config, files):
    if page.file.src_uri in suite_readmes():
        return DOCS_LINK.sub("](../", markdown)
    return markdown
