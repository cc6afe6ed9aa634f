"""The documentation site (``mkdocs.yml``, ``docs/``, each suite's README as a page) and the README's front door.

- the option reference, ``docs/options.md``, is what ``scripts/make_options_doc.py`` writes from the real option
  parser (as the ``suite.yaml`` field table is ``schema_table()``): a new or changed option fails here until the page
  is regenerated;
- the site builds with ``mkdocs build --strict`` (every page in the nav, every link and anchor resolved; a suite
  README's ``../../docs/`` links rewritten for the site by ``scripts/mkdocs_hooks.py``);
- every relative link of README.md, docs/ and the suites' READMEs resolves to a file of the repository (as GitHub
  shows them), and every file a document names by its repository path
  (``pytest_toolbench/run/records.py``, ``tests/...``, ``run/cache.py`` inside the package) exists, so a moved module
  leaves no stale reference behind;
- every image under ``docs/img/`` is shown by some page;
- docs/architecture.md states the folder rules ``tests/test_layout.py`` enforces (``MAY_IMPORT``).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
#: The package's folders: a document may name a module relative to ``pytest_toolbench/`` (``report/protocol.py``).
PACKAGE_FOLDERS = ("contract", "parsing", "scorer_lib", "data", "backends", "run", "report", "plugin")
#: Modules the documents already name that the other branches of issue 32 add (the vLLM backend as a package, the
#: session object, the suite context, the results-file loader). Each must not exist yet: once the branches are
#: merged, every entry fails ``test_every_repository_path_the_documents_name_exists``, and the set is emptied then,
#: so it cannot hide a stale reference.
ARRIVING: set[str] = set()


def _front_and_docs() -> list[Path]:
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def test_the_option_reference_is_generated_from_the_option_parser():
    result = subprocess.run([sys.executable, "scripts/make_options_doc.py", "--stdout"], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "--toolbench-json" in result.stdout and "--toolbench-replicas" in result.stdout  # core and backend options
    committed = (DOCS / "options.md").read_text(encoding="utf-8")
    assert committed == result.stdout, "docs/options.md is stale: run .venv/bin/python scripts/make_options_doc.py"


def test_the_site_builds_in_strict_mode(tmp_path):
    pytest.importorskip("mkdocs", reason="the docs extra (scripts/setup-dev.sh installs it)")
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert config["strict"] is True and config["theme"]["name"] == "mkdocs"
    assert {"omitted_files", "not_found", "unrecognized_links", "anchors"} <= set(config["validation"])
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
                            cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    for name in (path.parent.name for path in ROOT.glob("suites/*/README.md")):  # each suite's README is a page
        assert (tmp_path / "site" / "suites" / name / "index.html").is_file(), name


def test_every_relative_link_resolves_in_the_repository():
    """As GitHub shows the files: every relative link of README.md, of docs/ and of a suite's README leads to a file
    of the repository (the site's hook maps the same links to its pages, where strict mode checks them again)."""
    documents = [*_front_and_docs(), *sorted(ROOT.glob("suites/*/README.md"))]
    missing = []
    for path in documents:
        for link in re.findall(r"\]\(([^)\s]+)\)", path.read_text(encoding="utf-8")):
            target = link.split("#")[0]
            if target and not re.match(r"^[a-z]+:", target) and not (path.parent / target).exists():
                missing.append(f"{path.relative_to(ROOT)}: {link}")
    assert not missing, missing
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "(docs/index.md)" in readme
    for suite in sorted(path.name for path in ROOT.glob("suites/*/") if (path / "suite.yaml").is_file()):
        assert f"(suites/{suite}/README.md)" in readme, f"README's suites table does not link suites/{suite}/README.md"


def test_every_repository_path_the_documents_name_exists():
    roots = "pytest_toolbench|suites|tests|benchmarks|scripts|examples|docs|\\.ci"
    span = re.compile(rf"`((?:{roots}|{'|'.join(PACKAGE_FOLDERS)})/[^`\s]*)`")
    documents = [(path, span) for path in _front_and_docs()]
    # a suite's README names upstream files too (ToLeaP's scripts/, T-Eval's docs/): only the package and tests
    documents += [(path, re.compile(r"`((?:pytest_toolbench|tests)/[^`\s]*)`"))
                  for path in sorted(ROOT.glob("suites/*/README.md"))]
    stale = []
    for path, pattern in documents:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for match in pattern.finditer(line):
                named = match.group(1).split("::")[0].rstrip("/.,;:")
                if any(mark in named for mark in "<*…{$"):
                    continue  # a pattern or a placeholder
                where = ROOT / "pytest_toolbench" / named if named.split("/")[0] in PACKAGE_FOLDERS else ROOT / named
                if not where.exists() and where.relative_to(ROOT).as_posix() not in ARRIVING:
                    stale.append(f"{path.relative_to(ROOT)}:{number}: {named}")
    assert not stale, "documents name files that do not exist (moved?):\n  " + "\n  ".join(stale)
    arrived = sorted(name for name in ARRIVING if (ROOT / name).exists())
    assert not arrived, f"these exist now: remove them from ARRIVING in tests/test_docs_site.py: {arrived}"


def test_every_image_is_shown():
    text = "\n".join(path.read_text(encoding="utf-8") for path in _front_and_docs())
    unused = [image.relative_to(DOCS).as_posix() for image in sorted((DOCS / "img").iterdir())
              if image.relative_to(DOCS).as_posix() not in text]
    assert not unused, unused


def test_the_architecture_page_states_the_folder_rules_the_layout_test_enforces():
    from test_layout import MAY_IMPORT

    page = (DOCS / "architecture.md").read_text(encoding="utf-8")
    rules = page.split("\n| folder | may import |\n", 1)[1].split("\n\n", 1)[0]  # the table of folder rules
    table = re.findall(r"^\| `(\w+)` \| (.+) \|$", rules, re.M)
    # the names before any ";" (what follows is annotations only), outside parentheses (the reasons)
    stated = {folder: set(re.findall(r"`([\w.]+)`", re.sub(r"\([^)]*\)", "", allowed).split(";")[0]))
              for folder, allowed in table}
    assert stated == MAY_IMPORT, f"docs/architecture.md states {stated}, tests/test_layout.py enforces {MAY_IMPORT}"
