"""Every suite folder has the shape docs/adding-a-suite.md promises, and that page promises what is checked here.

The rule (:data:`REQUIRED`, :data:`OPTIONAL`, :data:`SCORER_MODULES`, :data:`SCORER_EXPORTS`) is written once, here;
the page's tree of a suite folder lists exactly those names (``test_the_page_promises_this_shape``), and every
folder under ``suites/`` and the example ``examples/echo_suite/suites/echo`` has them
(``test_every_suite_folder_has_the_promised_shape``, whose failure lists what each folder lacks).
"""

from __future__ import annotations

import ast
import copy
import json
import re
from pathlib import Path

import pytest
import yaml

from conftest import REPO
from pytest_toolbench.contract.definition import load_definition
from pytest_toolbench.contract import SCORER_MAY_IMPORT
from pytest_toolbench.run.catalog import REQUIRED_FUNCTIONS

#: The entries of a suite folder: name -> "file" or "folder".
REQUIRED = {"suite.yaml": "file", "__init__.py": "file", "README.md": "file", "scorer": "folder", "samples": "folder"}
OPTIONAL = {"known_defects.yaml": "file", "leaderboard.yaml": "file", "aggregates.yaml": "file"}
#: The modules every scorer package has (each a module ``<name>.py`` or a subpackage ``<name>/``); others may be added.
SCORER_MODULES = ("loading", "prompt", "decoding", "checker", "aggregation", "replay")
#: What ``scorer/__init__.py`` binds (defines or imports): the five functions the core requires, and the replay reader.
SCORER_EXPORTS = (*REQUIRED_FUNCTIONS, "replay_outputs")
#: Entries a checkout may hold beside the promised ones (Python's byte-code cache).
IGNORED = {"__pycache__"}

SUITE_FOLDERS = sorted(path.parent for path in (REPO / "suites").glob("*/suite.yaml")) + [
    REPO / "examples" / "echo_suite" / "suites" / "echo"]


def shape_problems(folder: Path) -> list[str]:
    """What ``folder`` lacks (or holds besides) the promised shape, one line each; empty when it has it."""
    problems = []
    entries = {path.name: path for path in folder.iterdir() if path.name not in IGNORED}
    for name, kind in REQUIRED.items():
        path = entries.get(name)
        if path is None:
            problems.append(f"missing {name}{'/' if kind == 'folder' else ''}")
        elif (kind == "folder") != path.is_dir():
            problems.append(f"{name} is not a {kind}")
    extra = sorted(set(entries) - set(REQUIRED) - set(OPTIONAL))
    if extra:
        problems.append(f"unexpected entries {extra} (allowed: {sorted([*REQUIRED, *OPTIONAL])})")
    if (folder / "suite.yaml").is_file():
        definition = load_definition(folder / "suite.yaml")
        if definition.name != folder.name:
            problems.append(f"suite.yaml name: {definition.name!r} differs from the folder's name {folder.name!r}")
        if definition.scorer != "scorer":
            problems.append(f"suite.yaml scorer: {definition.scorer!r}, not the package beside it (scorer: scorer)")
    for name in ("__init__.py", "README.md"):
        if (folder / name).is_file() and not (folder / name).read_text(encoding="utf-8").strip():
            problems.append(f"{name} is empty")
    if (folder / "__init__.py").is_file() and ast.get_docstring(ast.parse((folder / "__init__.py").read_text())) is None:
        problems.append("__init__.py has no docstring naming the suite")
    if (folder / "samples").is_dir() and not any(path.is_file() for path in (folder / "samples").rglob("*")):
        problems.append("samples/ holds no file")
    scorer = folder / "scorer"
    if scorer.is_dir():
        if not (scorer / "__init__.py").is_file():
            problems.append("missing scorer/__init__.py")
        for module in SCORER_MODULES:
            if not ((scorer / f"{module}.py").is_file() or (scorer / module / "__init__.py").is_file()):
                problems.append(f"missing scorer/{module}.py (or the package scorer/{module}/)")
        if (scorer / "__init__.py").is_file():
            bound = _bound_names(scorer / "__init__.py")
            missing = [name for name in SCORER_EXPORTS if name not in bound]
            if missing:
                problems.append(f"scorer/__init__.py does not provide {', '.join(missing)}")
        for module in scorer.rglob("*.py"):
            for name, parameters in _context_functions(module):
                problems.append(f"scorer/{module.relative_to(scorer)}: {name}({', '.join(parameters)}) is the form "
                                f"before the suite context: take {name}(context), a SuiteContext")
    return problems


def _context_functions(path: Path) -> list[tuple[str, list[str]]]:
    """The module's top-level ``load_cases`` / ``run_info`` that do not take the suite's context as their one
    parameter (the core still calls the older forms, but a suite folder is written the current way)."""
    found = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef) and node.name in ("load_cases", "run_info"):
            parameters = [argument.arg for argument in node.args.args]
            if parameters != ["context"]:
                found.append((node.name, parameters))
    return found


def _bound_names(path: Path) -> set[str]:
    """The names a module binds at its top level: functions, classes, assignments and imports."""
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.Assign):
            names.update(target.id for target in node.targets if isinstance(target, ast.Name))
    return names


@pytest.mark.parametrize("folder", SUITE_FOLDERS, ids=lambda folder: str(folder.relative_to(REPO)))
def test_every_suite_folder_has_the_promised_shape(folder):
    problems = shape_problems(folder)
    assert not problems, f"{folder.relative_to(REPO)} lacks the shape of docs/adding-a-suite.md:\n  " + \
        "\n  ".join(problems)


def test_the_shape_check_names_what_is_missing(tmp_path):
    folder = tmp_path / "tiny"
    (folder / "scorer").mkdir(parents=True)
    (folder / "scorer" / "__init__.py").write_text("from .loading import load_cases\ndef score(case, g): ...\n")
    (folder / "scorer" / "loading.py").write_text("def load_cases(data_dir, definition): ...\n")
    (folder / "scorer" / "checker").mkdir()
    (folder / "scorer" / "checker" / "__init__.py").write_text("")  # a subpackage stands for the module
    (folder / "notes.txt").write_text("x")
    (folder / "suite.yaml").write_text("name: other\ntitle: T\nscorer: scorer\ndata: {folder: t}\n"
                                       "categories: [{name: c}]\ngeneration: {max_tokens: 512}\n")
    assert shape_problems(folder) == [
        "missing __init__.py", "missing README.md", "missing samples/",
        "unexpected entries ['notes.txt'] (allowed: ['README.md', '__init__.py', 'aggregates.yaml', "
        "'known_defects.yaml', 'leaderboard.yaml', 'samples', 'scorer', 'suite.yaml'])",
        "suite.yaml name: 'other' differs from the folder's name 'tiny'",
        "missing scorer/prompt.py (or the package scorer/prompt/)",
        "missing scorer/decoding.py (or the package scorer/decoding/)",
        "missing scorer/aggregation.py (or the package scorer/aggregation/)",
        "missing scorer/replay.py (or the package scorer/replay/)",
        "scorer/__init__.py does not provide build_request, gold_output, aggregate, replay_outputs",
        "scorer/loading.py: load_cases(data_dir, definition) is the form before the suite context: take "
        "load_cases(context), a SuiteContext",
    ]


def _adding_a_suite() -> str:
    """The documentation page "Adding a suite" (docs/adding-a-suite.md; README.md links to it)."""
    return (REPO / "docs" / "adding-a-suite.md").read_text(encoding="utf-8")


def test_the_page_promises_this_shape():
    """The page's tree of a suite folder names exactly the entries, modules and re-exports checked above."""
    section = _adding_a_suite()
    tree = re.search(r"```\n(suites/<name>/.*?)```", section, re.S)
    assert tree is not None, "docs/adding-a-suite.md has no tree of suites/<name>/"
    entries = {line.split()[0].rstrip("/") for line in tree.group(1).splitlines()[1:]
               if line.startswith("  ") and not line.startswith("    ") and line.strip()}
    modules = {line.split()[0].removesuffix(".py") for line in tree.group(1).splitlines()
               if line.startswith("    ") and not line.startswith("     ") and line.strip()}
    assert entries == {*REQUIRED, *OPTIONAL}
    assert modules == {"__init__", *SCORER_MODULES, "..."}
    exports = re.search(r"`scorer/__init__\.py` re-exports\s+([^.]*)\.", section)
    assert exports is not None and re.findall(r"`(\w+)`", exports.group(1)) == list(SCORER_EXPORTS)


def test_the_page_lists_what_a_scorer_may_import():
    section = " ".join(_adding_a_suite().split())
    assert ", ".join(f"`{module}`" for module in SCORER_MAY_IMPORT) in section


def test_the_page_table_of_suite_yaml_fields_is_the_schema():
    """The page's table is ``schema_table()`` of the schema the definitions are validated with (regenerate it with
    ``python -c "from pytest_toolbench.contract.definition import schema_table; print(schema_table())"``)."""
    from pytest_toolbench.contract.definition import schema_table

    assert schema_table() in _adding_a_suite()


def test_the_page_example_definition_is_valid(tmp_path):
    example = re.search(r"```yaml\n(name: .*?)```", _adding_a_suite(), re.S)
    assert example is not None
    (tmp_path / "suite.yaml").write_text(example.group(1))
    definition = load_definition(tmp_path / "suite.yaml")
    assert definition.name == "toolalpaca" and definition.raw["options"] == {"first_step_only": True}


# ----------------------------------------------------------------------------------------------------------------
# Identity: the suite.yaml name, stamped by the catalog; selecting one suite; fields in the wrong place

SCORER = '''\
import json

from pytest_toolbench.contract.data_files import load_jsonl
from pytest_toolbench.contract.suite import Case, Metric, Request, Verdict


def load_cases(data_dir, definition):
    rows = load_jsonl(data_dir / "cases.jsonl")
    # no suite given, or a wrong one: the catalog's stamp (suite.yaml name) is what counts
    return [Case(row["id"], "add", row, KEYWORDS) if i else Case(row["id"], "add", row, KEYWORDS, suite="wrong")
            for i, row in enumerate(rows)]


def build_request(case):
    return Request(messages=[{"role": "user", "content": str(case.payload["a"])}])


def gold_output(case):
    return json.dumps(case.payload["a"])


def score(case, generation):
    return Verdict(json.loads(generation.text) == case.payload["a"])


def aggregate(results):
    return [Metric("accuracy", sum(r.passed for r in results) / len(results), sum(r.passed for r in results),
                   len(results), group="aggregate")]
'''


def add_suite(root: Path, folder: str, name: str, keywords: tuple[str, ...] = (), declare: bool = True) -> None:
    path = root / "suites" / folder
    (path / "samples").mkdir(parents=True)
    declared = f"markers: [{{names: [{', '.join(keywords)}], description: keywords}}]\n" if keywords and declare else ""
    (path / "suite.yaml").write_text(f"name: {name}\ntitle: {name.title()}\nscorer: scorer\ndata: {{folder: {name}}}\n"
                                     "categories: [{name: add}]\ngeneration: {max_tokens: 512}\n" + declared)
    (path / "scorer.py").write_text(SCORER.replace("KEYWORDS", repr(keywords)))
    (path / "samples" / "cases.jsonl").write_text(
        "".join(json.dumps({"id": f"{name}_{i}", "a": i}) + "\n" for i in range(3)))


@pytest.fixture(autouse=True)
def _no_data_folder(monkeypatch):
    monkeypatch.delenv("TOOLBENCH_DATA", raising=False)  # these suites run on their samples


def run_suites(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("suites", "-p", "no:randomly", "-p", "no:cacheprovider",
                                         "--toolbench-no-download", *args)


def test_every_case_gets_the_name_of_its_suite_yaml_whatever_its_loader_says(pytester):
    add_suite(pytester.path, "kept_elsewhere", "tiny")  # a folder of another name: name: is the identity
    result = run_suites(pytester, "--toolbench-json=run.json")
    result.assert_outcomes(passed=3)
    assert "INTERNALERROR" not in result.stdout.str()
    document = json.loads((pytester.path / "run.json").read_text())
    assert {case["suite"] for case in document["cases"]} == {"tiny"} and list(document["suites"]) == ["tiny"]


def test_two_suites_of_one_name_are_one_error_naming_both(pytester):
    add_suite(pytester.path, "first", "tiny")
    add_suite(pytester.path, "second", "tiny")
    result = run_suites(pytester)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    output = result.stdout.str()
    assert f"{pytester.path / 'suites' / 'second' / 'suite.yaml'}: field 'name': suite name 'tiny' is already the " \
           f"name of {pytester.path / 'suites' / 'first' / 'suite.yaml'}" in output
    assert "Traceback" not in output and "INTERNALERROR" not in output


def test_m_suite_name_selects_exactly_one_suite_where_a_keyword_shares_its_name(pytester):
    add_suite(pytester.path, "toolalpaca", "toolalpaca")
    add_suite(pytester.path, "training", "training", keywords=("toolalpaca",))  # as tltraining's ToolAlpaca cases
    exact = run_suites(pytester, "--collect-only", "-q", "-m", "suite_toolalpaca").stdout.str()
    assert "3 tests collected" in exact and "suites/training" not in exact
    both = run_suites(pytester, "--collect-only", "-q", "-m", "toolalpaca").stdout.str()
    assert "6 tests collected" in both
    assert "3 tests collected" in run_suites(pytester, "--collect-only", "-q", "-m", "suite_training").stdout.str()


def test_a_keyword_with_the_suite_marker_prefix_is_one_collection_error(pytester):
    add_suite(pytester.path, "tiny", "tiny", keywords=("suite_other",), declare=False)  # declared: see below
    result = run_suites(pytester)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*suite tiny: keyword 'suite_other' of its cases starts with 'suite_', the prefix of "
                                 "the marker that selects one suite (-m suite_tiny)*"])


MINIMAL = {"name": "echo", "title": "Echo", "scorer": "scorer", "data": {"folder": "echo"},
           "categories": [{"name": "short"}], "generation": {"max_tokens": 512}}


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d.update(upstream={"repository": "x/y", "commit": "abcdef1"}),
     "'upstream' is not a top-level field; it belongs under 'data:'"),
    (lambda d: d.update(max_tokens=512), "'max_tokens' is not a top-level field; it belongs under 'generation:'"),
    (lambda d: d["data"].update(commit="abcdef1"),
     "'commit' is not a field of 'data:'; it belongs under 'data: upstream:'"),
    (lambda d: d.update(catgories=d.pop("categories")),
     "'catgories' is not a top-level field; did you mean 'categories'?"),
    (lambda d: d["generation"].update(temprature=0),
     "'temprature' is not a field of 'generation:'; did you mean 'temperature'?"),
    (lambda d: d.update(upstrem=1), "'upstrem' is not a top-level field; did you mean 'upstream' (under 'data:')?"),
    (lambda d: d.update(options={"levels": {"default": 1, "schema": {}, "defualt": 2}}),
     "'defualt' is not a field of 'options: <name>:'; did you mean 'default'?"),
    (lambda d: d.update(markers=[{"names": ["a"], "description": "d", "folder": "x"}]),
     "'folder' is not a field of an entry of 'markers:'; it belongs under 'data:' or 'data: selected_by:' or each "
     "entry of 'data: reuses:'"),
    (lambda d: d.update(zzz=1), "'zzz' is not a top-level field; the fields allowed here are categories, data, "
                                "description, generation, known_defects, libraries, markers, name, options, scorer, title"),
    (lambda d: d["categories"].append({"name": "suite_x"}),
     "field 'categories/1/name': 'suite_x' starts with 'suite_', the prefix of the marker each suite's items carry"),
])
def test_a_field_in_the_wrong_place_says_where_it_belongs(tmp_path, change, message):
    from pytest_toolbench.contract.errors import DataError

    document = copy.deepcopy(MINIMAL)
    change(document)
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    with pytest.raises(DataError) as raised:
        load_definition(path)
    assert str(raised.value).startswith(f"{path}:")  # the line of the field
    assert message in str(raised.value)
    assert "<root>" not in str(raised.value)


def test_a_field_of_a_wrong_value_keeps_its_schema_message(tmp_path):
    from pytest_toolbench.contract.errors import DataError

    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump({**MINIMAL, "generation": {"max_tokens": 5}}, sort_keys=False))
    with pytest.raises(DataError, match="field 'generation/max_tokens': 5 is less than the minimum of 512"):
        load_definition(path)
