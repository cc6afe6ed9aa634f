"""Scorer libraries and the suite contract around them: the TL-Training classifier is opted into from suite.yaml
(``libraries: [tl_failures]``), a suite that reuses another's data declares it (``data.reuses``), and scorers
import neither pytest, a backend, the core nor another suite's scorer."""

from __future__ import annotations

import ast
import copy
from pathlib import Path

import pytest
import yaml

from pytest_toolbench.contract import SCORER_MAY_IMPORT, SCORER_MAY_NOT_IMPORT
from pytest_toolbench.contract.definition import LIBRARIES, load_definition
from pytest_toolbench.contract.errors import DataError
from pytest_toolbench.scorer_lib import tl_failures
from pytest_toolbench.contract.suite import CaseResult, Generation, SuiteContext
from conftest import REPO

from shipped import scorer

acebench = scorer("acebench")
bfcl = scorer("bfcl")
nestools = scorer("nestools")
rotbench = scorer("rotbench")
tltraining = scorer("tltraining")


PACKAGE = REPO / "pytest_toolbench"
SCORERS = {"bfcl": bfcl, "acebench": acebench, "nestools": nestools, "rotbench": rotbench, "tltraining": tltraining}


def _definition(suite: str) -> dict:
    return dict(load_definition(REPO / "suites" / suite / "suite.yaml").raw)  # options: their default values


def _scored(suite: str, definition: dict) -> list[tuple]:
    scorer = SCORERS[suite]
    cases = [c for c in scorer.load_cases(SuiteContext(REPO / "suites" / suite / "samples", definition))
             if not c.category.startswith("agent")]
    return [(case, scorer.score(case, Generation(text="no call here"))) for case in cases]


@pytest.mark.parametrize("suite", sorted(SCORERS))
def test_every_tl_suite_opts_in_from_its_yaml(suite):
    assert _definition(suite)["libraries"] == ["tl_failures"]


@pytest.mark.parametrize("suite", sorted(SCORERS))
def test_tl_labels_and_metrics_only_when_opted_in(suite):
    definition = _definition(suite)
    opted_out = copy.deepcopy(definition)
    del opted_out["libraries"]
    for chosen, wanted in ((definition, True), (opted_out, False)):
        scored = _scored(suite, chosen)
        assert scored
        assert all(tl_failures.enabled(case) == wanted for case, _ in scored)
        labelled = [v for _, v in scored if "tl_category" in v.labels or "tl_reward" in v.counts]
        assert bool(labelled) == wanted, suite
        results = [CaseResult(suite=suite, case_id=c.case_id, category=c.category, passed=v.passed,
                              error_type=v.error_type, counts=v.counts, labels=v.labels) for c, v in scored]
        tl_rows = [m.name for m in SCORERS[suite].aggregate(results) if m.name.startswith("TL ")]
        assert bool(tl_rows) == wanted, suite


def test_each_library_the_contract_names_is_a_scorer_library_declaring_that_name():
    # The contract declares the names (the suite.yaml schema needs nothing from the libraries); each is the module of
    # that name here, declaring it as its LIBRARY, which a scorer asks its context about.
    import importlib

    for name in LIBRARIES:
        assert importlib.import_module(f"pytest_toolbench.scorer_lib.{name}").LIBRARY == name


def test_schema_accepts_only_known_libraries_and_complete_reuses(tmp_path):
    base = _definition("tltraining")
    assert LIBRARIES == ("tl_failures",)
    for broken, field in (({**base, "libraries": ["nope"]}, "libraries"),
                          ({**base, "libraries": ["tl_failures", "tl_failures"]}, "libraries"),
                          ({**base, "data": {**base["data"], "reuses": [{"suite": "rotbench"}]}}, "data"),
                          ({**base, "data": {**base["data"], "reuses": [{"suite": "rotbench", "folder": "r",
                                                                         "format": "x"}]}}, "data")):
        path = tmp_path / "suite.yaml"
        path.write_text(yaml.safe_dump(broken), encoding="utf-8")
        with pytest.raises(DataError) as caught:
            load_definition(path)
        assert (caught.value.field or "").startswith(field)
    assert load_definition(REPO / "suites" / "tltraining" / "suite.yaml").raw["data"]["reuses"] == [
        {"suite": "rotbench", "folder": "rotbench"}, {"suite": "bfcl", "folder": "bfcl"}]


def test_tltraining_reads_other_suites_data_only_where_declared(tmp_path):
    samples = REPO / "suites" / "tltraining" / "samples"
    declared = _definition("tltraining")
    categories = {c.category for c in tltraining.load_cases(SuiteContext(samples, declared))}
    assert "rot_clean" in categories and any(c.startswith("exec_") for c in categories)
    only_bfcl = copy.deepcopy(declared)
    only_bfcl["data"]["reuses"] = [{"suite": "bfcl", "folder": "bfcl"}]
    categories = {c.category for c in tltraining.load_cases(SuiteContext(samples, only_bfcl))}
    assert "rot_clean" not in categories and any(c.startswith("exec_") for c in categories)
    # The declared folder is where the data is looked for.
    moved = tmp_path / "data"
    (moved / "rot").mkdir(parents=True)
    (moved / "rot" / "First_Turn").symlink_to(samples / "rotbench" / "First_Turn")
    renamed = copy.deepcopy(declared)
    renamed["data"]["reuses"] = [{"suite": "rotbench", "folder": "rot"}]
    assert {c.category for c in tltraining.load_cases(SuiteContext(moved, renamed))} == {"rot_clean"}
    del renamed["data"]["reuses"]
    with pytest.raises(DataError, match="toolalpaca/eval_real.json"):
        tltraining.load_cases(SuiteContext(moved, renamed))


# ----------------------------------------------------------------------------------------------------------------
# Import rules

#: Modules of the package that scorers and scorer libraries may import (the contract's one list, which README
#: "Adding a suite" quotes), and the top-level packages they never import.
ALLOWED = SCORER_MAY_IMPORT
FORBIDDEN_ROOTS = SCORER_MAY_NOT_IMPORT


def _imports(path: Path) -> list[str]:
    parts = path.relative_to(REPO).with_suffix("").parts
    package = ".".join(parts[:-1])  # an __init__.py's own package, else the module's package
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names.append(target)
            names += [f"{target}.{alias.name}" for alias in node.names]
    return names


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _scorer_roots() -> list[Path]:
    return sorted([*REPO.glob("suites/*/scorer"), *REPO.glob("suites/*/scorer.py")])


def test_every_shipped_suite_has_its_scorer_in_its_folder():
    assert [root.parent.name for root in _scorer_roots()] == sorted(
        path.parent.name for path in REPO.glob("suites/*/suite.yaml"))
    assert not (PACKAGE / "scorers").exists()


@pytest.mark.parametrize("root", ["suites", "scorer_lib", "parsing"])
def test_scorers_and_libraries_import_only_the_contract(root):
    # the example suite too: it is what a newcomer copies
    roots = [*_scorer_roots(), *REPO.glob("examples/*/suites/*/scorer")] if root == "suites" else [PACKAGE / root]
    problems = []
    for top in roots:
        files = [top] if top.suffix == ".py" else sorted(top.rglob("*.py"))
        for path in files:
            # a suite scorer may import itself (relative imports resolve under suites.<name>.scorer), nothing of
            # another suite, and of the plugin only the contract modules
            own = ".".join(top.relative_to(REPO).with_suffix("").parts) if root == "suites" else f"pytest_toolbench.{root}"
            for name in _imports(path):
                where = str(path.relative_to(REPO))
                if name.split(".")[0] in FORBIDDEN_ROOTS:
                    problems.append((where, name))
                elif _within(name, "suites") or name.startswith("toolbench_suite_"):
                    if root != "suites" or not _within(name, own):
                        problems.append((where, name))
                elif _within(name, "pytest_toolbench") and name != "pytest_toolbench":
                    if root == "parsing" and not _within(name, "pytest_toolbench.parsing"):
                        problems.append((where, name))
                    elif not any(_within(name, allowed) for allowed in ALLOWED):
                        problems.append((where, name))
    assert not problems, problems


def test_the_classifier_left_the_core():
    assert not (PACKAGE / "tl_failures.py").exists()
    assert (PACKAGE / "scorer_lib" / "tl_failures.py").is_file()
