"""pytest-html: the benchmark summary, extra columns and per-case details; serial and xdist give the same page;
the page renders in headless Chromium (skipped when no Chromium is installed: Debian package ``chromium``)."""

from __future__ import annotations

from pytest_toolbench.contract.suite import SuiteContext
import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from test_report import echo, run, worse  # noqa: F401  (the echo fixture)

pytest.importorskip("pytest_html")

SUMMARY = re.compile(r'<section id="toolbench-summary">.*?</section>', re.S)


def report_data(page: Path) -> dict:
    blob = re.search(r'data-jsonblob="([^"]*)"', page.read_text(encoding="utf-8")).group(1)
    return json.loads(html.unescape(blob))


def summary_section(page: Path) -> str:
    section = SUMMARY.search(html.unescape(page.read_text(encoding="utf-8"))).group(0)
    return re.sub(r"<tr><th>Run</th><td>[^<]*</td></tr>", "", section)  # start time and duration differ


def rows(page: Path) -> dict[str, dict]:
    return {nodeid: entries[-1] for nodeid, entries in report_data(page)["tests"].items()}


def cell(entry: dict, column: str) -> str:
    found = [c for c in entry["resultsTableRow"] if re.search(rf'class="?col-{column}[" >]', c)]
    return re.sub(r"<[^>]+>", "", found[0]) if found else ""


def test_html_report_has_summary_columns_and_case_details(echo):
    run(echo, "--toolbench-json", "gold.json")
    result = worse(echo, "--html", "page.html", "--self-contained-html", "--toolbench-baseline", "reports/gold.json")
    assert result.ret == 0
    page = echo.path / "reports" / "page.html"
    section = summary_section(page)
    assert "<h3>echo: Echo (example suite)</h3>" in section
    assert "<td>aggregate</td><td>overall</td>" in section and "6.1–79.2" in section
    assert section.count('<svg class="tb-chart"') == 1 and 'class="tb-bar tb-base"' in section  # baseline bars
    assert "Failures by category and error type" in section
    assert 'href="#suites/echo/suite.yaml::echo_1"' in section  # newly failing, linked to its row

    entries = rows(page)
    failed = entries["suites/echo/suite.yaml::echo_1"]
    assert (cell(failed, "suite"), cell(failed, "category"), cell(failed, "errortype")) == \
        ("echo", "long", "wrong_text")
    details = failed["extras"][-1]["content"]
    for part in ("Request (2 messages)", "Raw model output", "Parsed calls", "Expected",
                 "Diff (expected → parsed)", "expected 'hello world, this is a longer text'"):
        assert part in details
    assert failed["log"] == ""  # the explanation lives in the details, not twice
    assert "<pre class=tb-message>wrong_text: expected 'hello world, this is a longer text'" in details  # message
    passed = entries["suites/echo/suite.yaml::echo_0"]
    assert cell(passed, "errortype") == ""
    # a passed row: an excerpt of its output and nothing else (the page stays small: docs/reports.md)
    assert passed["extras"][-1]["content"] == \
        "<div class=tb-case><pre>{\"name\": \"echo\", \"arguments\": {\"text\": \"hello\"}}</pre></div>"


def test_long_texts_are_cut_with_their_length_shown(echo):
    long_output = "x" * 50_000
    (echo.path / "long.jsonl").write_text(json.dumps({"id": "echo_2", "result": long_output}) + "\n")
    worse_run = run(echo, "--toolbench-replay", "long.jsonl", "-k", "echo_2", "--html", "page.html")
    assert worse_run.ret == 0
    details = rows(echo.path / "reports" / "page.html")["suites/echo/suite.yaml::echo_2"]
    content = details["extras"][-1]["content"]
    assert "Raw model output (50,000 characters" in content and "[3,000 of 50,000 characters shown]" in content
    assert len(content) < 6_000


def test_xdist_report_holds_every_case_and_the_same_summary(echo):
    run(echo, "--toolbench-json", "gold.json")
    common = ("--toolbench-replay", "worse.jsonl", "--toolbench-baseline", "reports/gold.json")
    run(echo, *common, "--html", "serial.html")
    run(echo, *common, "-n", "2", "--html", "parallel.html").assert_outcomes(passed=1, failed=2)
    serial, parallel = echo.path / "reports" / "serial.html", echo.path / "reports" / "parallel.html"
    assert summary_section(serial) == summary_section(parallel)
    serial_rows, parallel_rows = rows(serial), rows(parallel)
    assert sorted(serial_rows) == sorted(parallel_rows) and len(parallel_rows) == 3
    for nodeid, entry in serial_rows.items():
        if entry["result"] == "Failed":  # a passed row shows only an excerpt of its output
            assert "Request (2 messages" in entry["extras"][-1]["content"]  # built where the case was scored
        assert parallel_rows[nodeid]["extras"][-1]["content"] == entry["extras"][-1]["content"]
        assert parallel_rows[nodeid]["resultsTableRow"][2:5] == entry["resultsTableRow"][2:5]


# -- headless Chromium -----------------------------------------------------------------------------------------
CHECK_SCRIPT = """<script>
(function () {
  const out = {loadMs: performance.now()};
  const metrics = document.querySelector('#toolbench-summary table.tb-metrics');
  out.metricRows = metrics ? metrics.querySelectorAll('tr').length : 0;
  out.metricsHeight = metrics ? metrics.getBoundingClientRect().height : 0;
  const chart = document.querySelector('#toolbench-summary svg.tb-chart');
  out.chartHeight = chart ? chart.getBoundingClientRect().height : 0;
  out.barWidths = [...document.querySelectorAll('svg.tb-chart rect.tb-bar.tb-now')].map(r => r.getBBox().width);
  const failed = document.querySelector('tbody.failed');
  out.failedShown = !!failed && !failed.querySelector('.extras-row').classList.contains('hidden');
  const failedCase = failed && failed.querySelector('.tb-case');
  out.failedDetailsHeight = failedCase ? failedCase.getBoundingClientRect().height : 0;
  out.failedDetailsText = failedCase ? failedCase.innerText : '';
  const request = failed && failed.querySelector('.tb-case details:not([open])');
  out.requestClosed = !!request;
  if (request) { request.open = true; out.requestText = request.querySelector('pre').innerText; }
  const passedId = document.querySelector('tbody.passed').id;
  out.passedHiddenBefore = document.querySelector('tbody.passed .extras-row').classList.contains('hidden');
  document.querySelector('tbody.passed .collapsible td.col-result').click();
  const passedAfter = document.getElementById(passedId);
  out.passedHiddenAfter = passedAfter.querySelector('.extras-row').classList.contains('hidden');
  out.passedDetailsHeight = passedAfter.querySelector('.tb-case').getBoundingClientRect().height;
  out.rows = document.querySelectorAll('#results-table tbody.results-table-row').length;
  document.body.setAttribute('data-toolbench-check', JSON.stringify(out));
})();
</script>"""


def chromium() -> str | None:
    return next((path for path in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if path),
                None)


def run_chromium(binary: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           "--disable-dev-shm-usage", "--window-size=1400,1800", *args],
                          capture_output=True, text=True, timeout=120)


def check_in_browser(binary: str, page: Path) -> dict:
    """Append a small inline script that records what rendered and clicks a passed row open, then dump the DOM."""
    probe = page.with_name(page.stem + ".probe.html")
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", CHECK_SCRIPT + "</body>"),
                     encoding="utf-8")
    dom = run_chromium(binary, "--virtual-time-budget=5000", "--dump-dom", probe.as_uri()).stdout
    found = re.search(r'data-toolbench-check="([^"]*)"', dom)
    assert found, f"the check script did not run; chromium printed {dom[:500]!r}"
    return json.loads(html.unescape(found.group(1)))


def test_report_renders_in_headless_chromium(echo):
    binary = chromium()
    if binary is None:
        pytest.skip("chromium is not installed (Debian package: chromium)")
    run(echo, "--toolbench-json", "gold.json")
    worse(echo, "--html", "page.html", "--self-contained-html", "--toolbench-baseline", "reports/gold.json")
    page = echo.path / "reports" / "page.html"

    shot = echo.path / "page.png"
    run_chromium(binary, f"--screenshot={shot}", page.as_uri())
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000

    seen = check_in_browser(binary, page)
    assert seen["metricRows"] == 4 and seen["metricsHeight"] > 40  # header + long, short, overall
    assert seen["chartHeight"] > 40
    assert seen["barWidths"] == [pytest.approx(0), pytest.approx(150)]  # long 0/1, short 1/2
    assert seen["failedShown"] and seen["failedDetailsHeight"] > 100
    assert "Diff (expected → parsed)" in seen["failedDetailsText"]
    assert seen["requestClosed"] and "Echo this:" in seen["requestText"]
    assert seen["passedHiddenBefore"] and not seen["passedHiddenAfter"] and seen["passedDetailsHeight"] > 20
    assert seen["rows"] == 3


# -- a BFCL case: given against accepted, per parameter (issue 35 item 12) ---------------------------------------
def bfcl_record(case_id: str, text: str) -> dict:
    from shipped import scorer

    from pytest_toolbench.contract.suite import CaseRecord, Generation
    from pytest_toolbench.run import records

    bfcl = scorer("bfcl")
    case = {c.case_id: c for c in bfcl.load_cases(SuiteContext(Path(__file__).parents[1] / "suites/bfcl/samples", {}))}[case_id]
    verdict = bfcl.score(case, Generation(text=text))
    return records.build_record(dict(suite="bfcl", case_id=case_id, category=case.category,
                                     passed=verdict.passed, error_type=verdict.error_type,
                                     decoded=verdict.decoded, expected=verdict.expected, output=text,
                                     comparison=verdict.comparison))


def compared_rows(details: str) -> list[tuple[str, str]]:
    return [(re.sub(r"<[^>]+>", "", part).split(" ")[0], status) for status, part in
            re.findall(r'<tr class="tb-(pass|fail)"><td>[^<]*</td><td>(.*?)</td>', details)]


def test_bfcl_details_mark_only_the_parameter_that_failed():
    from pytest_toolbench.report.html import case_details

    # year is wrong; the author is one of the two accepted spellings; tags is the second accepted list
    record = bfcl_record("simple_python_1",
                         "[library.search_books(author='Ursula K. Le Guin', year=1970, tags=['sci-fi'])]")
    details = case_details(record)
    assert compared_rows(details) == [("library.search_books.author", "pass"), ("library.search_books.year", "fail"),
                                      ("library.search_books.tags", "pass")]
    assert "(1 of 3 fails)" in details and "1970" in details and "[1969]" in details
    assert "Diff (expected → parsed)" not in details  # it marked every parameter, accepted ones too
    # parallel calls: paired by function; a parameter that may be left out and was is not a failure
    record = bfcl_record("parallel_multiple_0", "[convert_currency(amount=10.0, source='GBP', target='JPY'), "
                                                "get_weather(city='Kyoto')]")
    assert compared_rows(case_details(record)) == [
        ("convert_currency.amount", "pass"), ("convert_currency.source", "pass"), ("convert_currency.target", "pass"),
        ("get_weather.city", "fail"), ("get_weather.metric", "pass")]
    # a missing required parameter and an unexpected one
    record = bfcl_record("simple_python_0", "[geometry.rectangle_area(width=3.0, depth=2)]")
    assert compared_rows(case_details(record)) == [
        ("geometry.rectangle_area.width", "pass"), ("geometry.rectangle_area.height", "fail"),
        ("geometry.rectangle_area.unit", "pass"), ("geometry.rectangle_area.depth", "fail")]
    assert bfcl_record("simple_python_1", "[library.search_books(author='Ursula Le Guin', year=1969, "
                                          "tags=['science fiction'])]").passed


# -- the page at 1280x800: fits, answers first (issue 35 item 16) ------------------------------------------------
FIRST_SCREEN_PROBE = """<script>
window.addEventListener('load', () => setTimeout(() => {
  const top = (selector) => { const el = document.querySelector(selector);
                              return el ? el.getBoundingClientRect().top + window.scrollY : null; };
  const out = {inner: window.innerWidth, scroll: document.documentElement.scrollWidth,
               verdict: top('.tb-verdict'), gates: top('.tb-verdict .tb-gates'), environment: top('#environment'),
               wide: [...document.querySelectorAll('body *')].filter(el => el.getBoundingClientRect().right >
                        window.innerWidth + 1).slice(0, 5).map(el => el.tagName + '.' + el.className),
               emptyLogBoxes: [...document.querySelectorAll('.logwrapper')].filter(el =>
                        !el.querySelector('.log') && el.getBoundingClientRect().height > 0).length,
               groupCellLines: [...document.querySelectorAll('.tb-metrics td:first-child')].map(td => {
                        const range = document.createRange(); range.selectNodeContents(td);
                        return range.getClientRects().length; }),
               failureTableOverflow: [...document.querySelectorAll('.tb-scroll')].map(d => d.scrollWidth - d.clientWidth),
               verdictText: (document.querySelector('.tb-verdict') || {}).innerText || ''};
  document.body.setAttribute('data-first-screen', JSON.stringify(out));
}, 300));
</script>"""


def test_bfcl_page_fits_1280_and_shows_the_verdict_first_in_headless_chromium(pytester):
    binary = chromium()
    if binary is None:
        pytest.skip("chromium is not installed (Debian package: chromium)")
    samples = Path(__file__).parents[1] / "suites" / "bfcl" / "samples"
    # wrong answers of many kinds, so the failures table has many long error types (BFCL's real runs have ~20)
    wrong = ["[]", "I cannot help with that.", "[get_weather(city='Paris')]", "[f(x=1), g(y=2)]", "[a(b=)]"]
    replay = pytester.path / "replay"
    replay.mkdir()
    for path in samples.glob("BFCL_v4_*.json"):
        ids = [json.loads(line)["id"] for line in path.read_text().splitlines() if line.strip()]
        (replay / path.name.replace(".json", "_result.json")).write_text("".join(
            json.dumps({"id": case_id, "result": wrong[n % len(wrong)]}) + "\n" for n, case_id in enumerate(ids)))
    page = pytester.path / "page.html"
    # a missed gate (a threshold gate on the shipped samples is refused before the run: a drop gate against the
    # samples' gold answers instead)
    base = pytester.path / "base.json"
    pytester.runpytest_subprocess(str(Path(__file__).parents[1] / "suites" / "bfcl"), "--toolbench-no-download",
                                  f"--toolbench-json={base}", "-p", "no:cacheprovider", "-p", "no:randomly")
    result = pytester.runpytest_subprocess(
        str(Path(__file__).parents[1] / "suites" / "bfcl"), "--toolbench-no-download", f"--toolbench-replay={replay}",
        f"--html={page}", "--self-contained-html", f"--toolbench-baseline={base}", "--toolbench-max-drop=2",
        "-p", "no:cacheprovider", "-p", "no:randomly")
    assert page.is_file(), result.stdout.str()[-2000:]
    probe = page.with_name("probe.html")
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", FIRST_SCREEN_PROBE + "</body>"),
                     encoding="utf-8")
    dom = subprocess.run([binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                          "--disable-dev-shm-usage", "--window-size=1280,800", "--virtual-time-budget=5000",
                          "--dump-dom", probe.as_uri()], capture_output=True, text=True, timeout=120).stdout
    found = re.search(r'data-first-screen="([^"]*)"', dom)
    assert found, f"the probe did not run; chromium printed {dom[:500]!r}"
    seen = json.loads(html.unescape(found.group(1)))
    assert seen["inner"] == 1280
    assert seen["scroll"] <= 1280, seen["wide"]  # no sideways scrolling, the failures table included
    assert seen["failureTableOverflow"] and max(seen["failureTableOverflow"]) <= 0  # it fits, not only scrolls
    # the first screen (800 px) answers: pass count, gates and headline figures, above pytest-html's environment
    assert seen["verdict"] is not None and seen["verdict"] < 400 and seen["gates"] < 800
    assert seen["environment"] > seen["verdict"]
    assert re.search(r"\d+ of \d+ cases passed", seen["verdictText"]) and "overall_official" in seen["verdictText"]
    assert "MISSED" in seen["verdictText"]
    assert seen["emptyLogBoxes"] == 0  # no empty "expand [+]" box on a failed row
    assert seen["groupCellLines"] and max(seen["groupCellLines"]) == 1  # "aggregate" never wraps
