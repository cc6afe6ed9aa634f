"""Leaderboard rank: the rank a fully run BFCL figure would have on the published leaderboard, never for an
incomplete one (``report/leaderboard.py``, ``suites/bfcl/leaderboard.yaml``)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import REPO, shared_data_dir
from pytest_toolbench.contract.suite import Metric
from pytest_toolbench.report import leaderboard, markdown, terminal
from pytest_toolbench.report.json_results import document
from pytest_toolbench.report.html import summary_html
from pytest_toolbench.report.run_report import build
from pytest_toolbench.run.summary import RunSummary, SuiteSummary

BFCL = REPO / "suites" / "bfcl"
TINY = Path(__file__).parent / "data" / "leaderboard" / "tiny-bfcl.csv"
DATA = shared_data_dir()
REAL = sorted((DATA / "bfcl-leaderboard").glob("*.csv")) if DATA else []


def declaration() -> leaderboard.Declaration:
    return leaderboard.Declaration.load("bfcl", BFCL / leaderboard.DECLARATION)


def tiny_source() -> leaderboard.Source:
    return leaderboard.Source("bfcl", leaderboard.read(declaration(), TINY))


def test_ranks_are_competition_ranks_with_two_neighbours_each_side():
    scores = [("A", 0.90), ("B", 0.85), ("C", 0.80), ("D", 0.75), ("E", 0.70)]
    rank, entries = leaderboard.rank_of(0.82, scores)
    assert rank == 3
    assert [(e.rank, e.model) for e in entries] == [(1, "A"), (2, "B"), (3, "this run"), (4, "C"), (5, "D")]
    # a tie at the leaderboard's precision shares the better rank; nobody above the first
    rank, entries = leaderboard.rank_of(0.90004, scores)
    assert rank == 1 and [(e.rank, e.model) for e in entries] == [(1, "this run"), (1, "A"), (3, "B")]
    rank, entries = leaderboard.rank_of(0.10, scores)
    assert rank == 6 and [(e.rank, e.model) for e in entries] == [(4, "D"), (5, "E"), (6, "this run")]


def test_the_csv_is_read_as_published_and_agentic_is_the_mean_of_web_search_and_memory():
    board = tiny_source().leaderboard
    assert board.models == 5
    agentic = dict(board.scores["agentic"])
    assert agentic["Model A (FC)"] == pytest.approx(0.55)
    assert "Model B (FC)" not in agentic  # its Web Search is N/A: no Agentic figure
    assert dict(board.scores["overall_official"])["Model E (FC)"] == pytest.approx(0.40)


def test_the_declaration_names_the_categories_of_the_bfcl_aggregation():
    from suites.bfcl.scorer.categories import ALL_CATEGORIES, LIVE_AST, MEMORY, MULTI_TURN, NON_LIVE_AST, WEB_SEARCH

    figures = {spec.name: spec for spec in declaration().figures}
    assert figures["non_live_ast"].categories == NON_LIVE_AST
    assert figures["live_ast"].categories == LIVE_AST
    assert figures["multi_turn"].categories == MULTI_TURN
    assert figures["agentic"].categories == WEB_SEARCH + MEMORY
    assert figures["irrelevance_detection"].categories == ("irrelevance", "live_irrelevance")
    assert figures["overall_official"].categories is None  # every category
    assert set(ALL_CATEGORIES) >= set(figures["agentic"].categories)


def bfcl_summary(incomplete: str = "", scope: str = "", header: dict | None = None) -> RunSummary:
    metrics = [Metric("irrelevance", 1.0, 240, 240, group="category"),
               Metric("live_irrelevance", 0.5, 442, 884, group="category", scope=scope),
               Metric("irrelevance_detection", 0.75, group="aggregate", incomplete=incomplete),
               Metric("multi_turn", 0.2, group="aggregate", incomplete="INCOMPLETE: multi_turn_base did not run")]
    suite = SuiteSummary("bfcl", "BFCL", {"kind": "local"}, 1124, 682, metrics, {}, {}, {})
    return RunSummary(header=header or {"backend": "replay"}, suites=[suite])


def test_only_a_figure_whose_categories_ran_in_full_is_ranked():
    ranks = leaderboard.rank_run({"bfcl": tiny_source()}, bfcl_summary())["bfcl"]
    assert [r.figure for r in ranks.ranks] == ["irrelevance_detection"]
    assert ranks.ranks[0].rank == 5 and ranks.ranks[0].of == 6  # Model D 80% > 75% > Model E 70%
    assert ranks.not_ranked["multi_turn"].startswith("INCOMPLETE")
    assert ranks.not_ranked["non_live_ast"] == "not in this run's summary"
    for summary, why in ((bfcl_summary(incomplete="INCOMPLETE: 3 of 884 cases have no verdict"), "INCOMPLETE"),
                         (bfcl_summary(scope="over 10 of 884 cases (selection)"), "not every case of"),
                         (bfcl_summary(header={"backend": "gold", "limit": 4}), "--toolbench-limit 4")):
        ranks = leaderboard.rank_run({"bfcl": tiny_source()}, summary)["bfcl"]
        assert not ranks.ranks and ranks.not_ranked["irrelevance_detection"].startswith(why)


def test_every_writer_shows_the_rank_and_its_neighbours():
    ranks = leaderboard.rank_run({"bfcl": tiny_source()}, bfcl_summary())
    report = build(bfcl_summary(), leaderboards=ranks)
    lines = terminal.render(report)
    assert ("    Irrelevance (irrelevance_detection): 75.00%, rank 5 of 6 (no interval: no per-case records to "
            "resample); protocol unchecked: the replayed outputs' sampling is not recorded") in lines
    assert ("      3. Model C (Prompt) 90.00% | 4. Model D (Prompt) 80.00% | 5. this run 75.00% | "
            "6. Model E (FC) 70.00%") in lines
    text = markdown.render(report)
    assert ("| Irrelevance | 75.00% | 5 of 6 (no interval: no per-case records to resample) | 3. Model C (Prompt) 90.00% · 4. Model D (Prompt) 80.00% · "
            "**5. this run 75.00%** · 6. Model E (FC) 70.00% |") in text
    entry = json.loads(json.dumps(document(report)))["suites"]["bfcl"]["leaderboard"]
    assert entry["ranks"][0]["rank"] == 5 and entry["ranks"][0]["neighbours"][2]["this_run"]
    assert "multi_turn" in entry["not_ranked"] and entry["source"].endswith("tiny-bfcl.csv")
    page = summary_html(report)
    assert "Irrelevance: rank 5 of 6 (no interval" in page and "→ 5. this run" in page and "<svg" in page


def test_a_bad_leaderboard_file_named_on_the_command_line_is_one_error(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("Model,Overall Acc\nX,1%\n")
    definitions = [SimpleNamespace(name="bfcl", folder=BFCL)]
    with pytest.raises(leaderboard.LeaderboardError, match="no column 'Non-Live AST Acc'"):
        leaderboard.resolve(definitions, None, {"bfcl": bad})
    with pytest.raises(leaderboard.LeaderboardError, match="no suite named acebench"):
        leaderboard.resolve(definitions, None, {"acebench": TINY})
    # the default file under the data folder is the user's data: a broken one is a note, the run goes on
    (tmp_path / "bfcl-leaderboard").mkdir()
    (tmp_path / "bfcl-leaderboard" / "x.csv").write_text("Model\n")
    source = leaderboard.resolve(definitions, tmp_path, {})["bfcl"]
    assert source.leaderboard is None and "no column" in source.problem
    assert leaderboard.resolve(definitions, tmp_path / "nothing", {}) == {}  # no file: no rank, no note


def run_bfcl(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(str(BFCL), "-p", "no:randomly", "-p", "no:cacheprovider",
                                         f"--toolbench-data={DATA}", f"--toolbench-json={pytester.path / 'run.json'}", *args)


def results(pytester: pytest.Pytester) -> dict:
    return json.loads((pytester.path / "run.json").read_text())


@pytest.mark.skipif(not REAL, reason="needs the BFCL leaderboard copy under the shared data")
def test_the_gold_run_ranks_first_on_the_published_leaderboard(pytester: pytest.Pytester):
    result = run_bfcl(pytester, "-k", "irrelevance")
    assert result.ret == 0
    entry = results(pytester)["suites"]["bfcl"]["leaderboard"]
    # the same file, however the data folder was reached (a symlinked ../shared resolves)
    assert Path(entry["source"]).resolve() == REAL[0].resolve() and entry["models"] == 109
    ranked = {rank["figure"]: rank for rank in entry["ranks"]}
    assert list(ranked) == ["irrelevance_detection"]
    assert ranked["irrelevance_detection"]["rank"] == 1 and ranked["irrelevance_detection"]["value"] == 1.0
    assert set(entry["not_ranked"]) == {"overall_official", "non_live_ast", "live_ast", "multi_turn", "agentic"}
    result.stdout.fnmatch_lines(["*Irrelevance (irrelevance_detection): 100.00%, rank 1 of 110*",
                                 "*1. this run 100.00% | 1. *"])


@pytest.mark.skipif(not REAL, reason="needs the BFCL leaderboard copy under the shared data")
def test_a_replay_of_partial_outputs_shows_no_rank_for_the_incomplete_group(pytester: pytest.Pytester):
    # outputs for the irrelevance category only; --maxfail stops the run at the first live_irrelevance case
    # without one, so live_irrelevance (and the Irrelevance figure over it) is incomplete
    folder = pytester.path / "result" / "model" / "non_live"
    folder.mkdir(parents=True)
    (folder / "BFCL_v4_irrelevance_result.json").write_text("".join(
        json.dumps({"id": f"irrelevance_{index}", "result": "I cannot help with that."}) + "\n"
        for index in range(240)))
    result = run_bfcl(pytester, "-k", "irrelevance", "--toolbench-replay=result", "--maxfail=1")
    ranks = results(pytester)["suites"]["bfcl"]["leaderboard"]
    assert ranks["ranks"] == []
    assert ranks["not_ranked"]["irrelevance_detection"].startswith("INCOMPLETE")
    result.stdout.fnmatch_lines(["*irrelevance_detection: no rank (INCOMPLETE*"])
    assert "rank 1 of" not in result.stdout.str()


def test_a_leaderboard_option_that_cannot_be_used_stops_the_run_with_one_line(pytester: pytest.Pytester):
    result = pytester.runpytest_subprocess(str(BFCL), "-p", "no:cacheprovider", "--toolbench-no-download",
                                           "--toolbench-leaderboard=bfcl=missing.csv")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.stderr.lines[0].startswith("ERROR: --toolbench-leaderboard: ")
    assert result.stderr.lines[0].endswith("missing.csv: cannot read it (No such file or directory)")
    assert "Traceback" not in result.stderr.str()
    result = pytester.runpytest_subprocess(str(BFCL), "-p", "no:cacheprovider", "--toolbench-leaderboard=bfcl")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --toolbench-leaderboard expects SUITE=PATH, got 'bfcl'"])
