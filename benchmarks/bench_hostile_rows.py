"""Hostile output through every BFCL row (issue 40, item 4): each of the 26 handler families' rows, replay and
generation, with the seeded corpus of ``benchmarks/hostile_corpus.py`` (huge integers, 10,000-deep nesting, lone
surrogates, truncated calls, 1 MB replies, NUL bytes, bytes that are not UTF-8 inside JSON strings).

    TOOLBENCH_DATA=../shared/data python benchmarks/bench_hostile_rows.py                 # every row, all paths
    python benchmarks/bench_hostile_rows.py --rows Qwen/Qwen3-0.6B-FC,microsoft/phi-4 --paths decoder,replay
    python benchmarks/bench_hostile_rows.py --paths generation --model /work/models/tiny   # a tokenizer folder

Three paths, each printed per row and in total:

* ``decoder``: every corpus output through the row's recorder and its ``decode_ast`` (single turn, in each of
  BFCL's three languages: python, java, javascript) and ``decode_execute`` (a multi-turn step), in process, as the
  BFCL scorer calls them (``scorer/handler_path.py``). Counted: outputs that raise anything but the decoder failure the scorer scores
  (crashes), the slowest decode.
* ``replay``: ``bfcl generate``-style result files (``BFCL_v4_<category>_result.json``) holding the corpus, one output
  per single-turn case and per multi-turn / agentic step, the non-UTF-8 bytes raw in the file, replayed by pytest
  with ``--toolbench-bfcl-model=<row>``, serially and with ``-n 2``. The script reads the run header's ``bfcl_row``:
  where the replay backend does not take the row (before issue 40's item 1 lands), the line says so ("row not
  taken: per-file decoding") and the decoder path above is what exercised the row's decoder.
* ``generation``: pytest with ``--model=<folder>`` and the row, its ``vllm`` module being ``benchmarks/stub_engine.py``
  answering every request (each multi-turn step too) with a corpus output (``TOOLBENCH_STUB_ANSWERS``); the
  plugin's own backend renders each request with the row's handler, tokenizes it with the folder's tokenizer, and
  records, caches and scores the answers as on a GPU. ``--model`` defaults to a tiny random-weight model built by
  ``tests/tiny_model.py`` (its tokenizer is byte-level, so every prompt is encodable).

For every pytest run: **crashes** (an exit status other than 0/1, ``INTERNALERROR`` or a traceback in the output),
**hangs** (the run passing ``--timeout``), **lost cases** (a selected case with no record, or recorded ``not_run`` /
``scorer_error``), **unexplained** failures (a failed case without a message), the cases passed (expected only
where no call is the right answer, irrelevance, or any call is, relevance; others are listed as
``passed_elsewhere``) and **parity** (the serial run's records equal to the ``-n 2`` run's). The exit status is 1
when anything is counted.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "tests"))

import hostile_corpus  # noqa: E402

SINGLE_TURN = ("simple_python", "simple_java", "simple_javascript", "multiple", "parallel", "parallel_multiple",
               "irrelevance", "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple",
               "live_irrelevance", "live_relevance")
#: multi-turn and agentic categories: (category, question file, the id's prefix in the file)
CONVERSATIONS = (("multi_turn_base", "multi_turn_base", "multi_turn_base"),
                 ("multi_turn_miss_func", "multi_turn_miss_func", "multi_turn_miss_func"),
                 ("memory_kv", "memory", "memory"), ("web_search_base", "web_search", "web_search"))
#: categories a hostile output may pass: no call is right (irrelevance), any call is right (relevance)
LENIENT = ("irrelevance", "live_irrelevance", "live_relevance")
SHIM = "import sys\nsys.path.insert(0, {here!r})\nfrom stub_engine import *  # noqa: F401,F403\n" \
       "from stub_engine import LLM, SamplingParams  # noqa: F401\n__version__ = 'stub'\n"


def row_per_handler() -> dict[str, str]:
    """Handler class -> one of its local rows (the first by name that this checkout can render, else the first)."""
    from pytest_toolbench.scorer_lib.bfcl_handlers import rows as bfcl_rows
    from pytest_toolbench.scorer_lib.bfcl_handlers import HANDLERS, bfcl_rows as rows

    out = {}
    for handler in HANDLERS:
        names = sorted(r.name for r in rows() if r.handler == handler and r.local)
        if not names:
            continue  # QuickTestingOSSHandler: no leaderboard row
        usable = []
        for name in names:
            try:
                bfcl_rows.check_row(name)
                usable.append(name)
            except bfcl_rows.RowError:
                pass
        out[handler] = (usable or names)[0]
    return out


# -- the decoder path ---------------------------------------------------------------------------------------------

def decoder_path(handler: str, corpus: list[dict], slow_s: float) -> dict:
    from pytest_toolbench.suites.bfcl.scorer import handler_path
    from pytest_toolbench.suites.bfcl.scorer.decoding import DecodeError
    from pytest_toolbench.suites.bfcl.scorer.multi_turn.executor import StepDecodeError

    crashes, slowest, decoded, failed = [], (0.0, ""), 0, 0
    step = handler_path.step_decoder(handler)
    for record in corpus:
        for kind in ("ast python", "ast java", "ast javascript", "execute"):
            started = time.perf_counter()
            try:
                if kind.startswith("ast"):
                    handler_path.decode_single(handler, record["text"], kind.split()[1])
                else:
                    step(handler_path.recorded(handler, record["text"]))
                decoded += 1
            except (DecodeError, StepDecodeError):
                failed += 1
            except BaseException as error:  # noqa: BLE001 - what the benchmark counts
                crashes.append(f"{kind} {record['id']}: {type(error).__name__}: {str(error)[:120]}")
            took = time.perf_counter() - started
            if took > slowest[0]:
                slowest = (took, f"{kind} {record['id']}")
    return {"outputs": len(corpus), "decoded": decoded, "decoder_failures": failed, "crashes": crashes,
            "slowest_s": round(slowest[0], 3), "slowest": slowest[1], "over_slow": slowest[0] > slow_s}


# -- the cases and the result files -------------------------------------------------------------------------------

def select_cases(data: Path, per_category: int, conversations: int) -> dict[str, list[tuple[str, int]]]:
    """category -> [(case id, turns)] : the first cases of each category's question file."""
    bfcl = data / "bfcl"
    out: dict[str, list[tuple[str, int]]] = {}
    for category in SINGLE_TURN:
        lines = (bfcl / f"BFCL_v4_{category}.json").read_text(encoding="utf-8").splitlines()[:per_category]
        out[category] = [(json.loads(line)["id"], 1) for line in lines]
    for category, file, prefix in CONVERSATIONS:
        lines = (bfcl / f"BFCL_v4_{file}.json").read_text(encoding="utf-8").splitlines()[:conversations]
        entries = [json.loads(line) for line in lines]
        out[category] = [(e["id"].replace(prefix, category, 1), len(e["question"])) for e in entries]
    return out


def write_results(folder: Path, cases: dict[str, list[tuple[str, int]]], corpus: list[dict], offset: int) -> None:
    """One result file per category; outputs taken round-robin from the corpus, starting at ``offset``."""
    folder.mkdir(parents=True, exist_ok=True)
    position = offset

    def take() -> dict:
        nonlocal position
        record = corpus[position % len(corpus)]
        position += 1
        return record

    for category, entries in cases.items():
        lines = []
        for case_id, turns in entries:
            if category in SINGLE_TURN:
                record = take()
                result, raw = record["text"], record["raw_bytes"]
            else:
                steps = [[take(), take()] for _ in range(turns)]
                result = [[r["text"] for r in turn] for turn in steps]
                raw = any(r["raw_bytes"] for turn in steps for r in turn)
            line = {"id": case_id, "result": result}
            lines.append(json.dumps(line, ensure_ascii=False).encode("utf-8", "surrogateescape") if raw
                         else json.dumps(line).encode("ascii"))
        (folder / f"BFCL_v4_{category}_result.json").write_bytes(b"\n".join(lines) + b"\n")


# -- pytest runs --------------------------------------------------------------------------------------------------

def pytest_run(args, work: Path, label: str, node_ids: list[str], extra: list[str], env_extra: dict,
               workers: int) -> dict:
    report = work / f"{label}.json"
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_XDIST_WORKER"}
    env["TOOLBENCH_NO_DOWNLOAD"] = "1"
    env.update(env_extra)
    command = [sys.executable, "-m", "pytest", *node_ids, "-q", "-p", "no:cacheprovider", "--no-header", "-rN",
               f"--toolbench-data={args.data}", f"--toolbench-json={report}",
               f"--toolbench-cache={work / (label + '-cache')}", *extra]
    if workers:
        command += ["-n", str(workers)]
    started = time.perf_counter()
    try:
        done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, errors="replace", env=env,
                              timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return {"hang": True, "wall_s": round(time.perf_counter() - started, 1)}
    wall = time.perf_counter() - started
    output = done.stdout + done.stderr
    crashed = done.returncode not in (0, 1) or "INTERNALERROR" in output or "Traceback" in output
    out = {"hang": False, "wall_s": round(wall, 1), "crash": crashed, "rc": done.returncode,
           "tail": output[-1500:] if crashed else ""}
    if report.is_file():
        document = json.loads(report.read_text(encoding="utf-8"))
        out["cases"] = document.get("cases") or []
        out["bfcl_row"] = (document.get("header") or {}).get("bfcl_row")
    else:
        out["cases"], out["crash"] = [], True
        out["tail"] = output[-1500:]
    return out


def judge(runs: list[dict], selected: list[str]) -> dict:
    """Crashes, hangs, lost cases, unexplained failures, passes, parity over a row's serial and -n 2 runs."""
    verdict = {"crashes": sum(bool(r.get("crash")) for r in runs), "hangs": sum(bool(r.get("hang")) for r in runs),
               "lost": 0, "unexplained": 0, "passed": 0, "cases": len(selected),
               "wall_s": [r.get("wall_s") for r in runs], "notes": [r["tail"] for r in runs if r.get("tail")]}
    for run in runs:
        if run.get("hang"):
            continue
        by_id = {case["case_id"]: case for case in run["cases"] if case.get("suite") == "bfcl"}
        lost = [c for c in selected if c not in by_id or by_id[c].get("error_type") in ("not_run", "scorer_error")]
        verdict["lost"] = max(verdict["lost"], len(lost))
        if lost:
            verdict.setdefault("lost_examples", lost[:5])
        failed = [case for case in by_id.values() if not case.get("passed")]
        verdict["unexplained"] = max(verdict["unexplained"],
                                     sum(1 for case in failed if not (case.get("message") or "").strip()))
        passed = [case["case_id"] for case in by_id.values() if case.get("passed")]
        verdict["passed"] = max(verdict["passed"], len(passed))
        verdict["passed_elsewhere"] = [c for c in passed if not c.startswith(LENIENT)][:5]
    complete = [r for r in runs if not r.get("hang") and r.get("cases")]
    verdict["bfcl_row"] = [(r.get("bfcl_row") or {}).get("row") for r in runs if not r.get("hang")]
    # parity: the same records and the same row named in both headers (an xdist controller once lost it)
    verdict["parity"] = len(complete) == 2 and complete[0]["cases"] == complete[1]["cases"] \
        and len(set(verdict["bfcl_row"])) <= 1
    return verdict


def tiny_model(work: Path) -> Path:
    from tiny_model import build_tiny_model

    folder = work / "tiny-model"
    if not (folder / "config.json").is_file():
        build_tiny_model(folder)
    return folder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=os.environ.get("TOOLBENCH_DATA", str(REPO.parent / "shared" / "data")))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rows", default="", help="comma-separated row names (default: one row per handler)")
    parser.add_argument("--paths", default="decoder,replay,generation")
    parser.add_argument("--per-category", type=int, default=10, help="replay: single-turn cases per category")
    parser.add_argument("--conversations", type=int, default=1, help="multi-turn / agentic cases per category")
    parser.add_argument("--gen-per-category", type=int, default=2, help="generation: single-turn cases per category")
    parser.add_argument("--model", default=None, help="generation: a model folder (default: a tiny random model)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds before a pytest run counts as a hang")
    parser.add_argument("--slow-s", type=float, default=30.0, help="decoder: one decode longer than this is a hang")
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None, help="write every figure here")
    args = parser.parse_args(argv)
    paths = set(args.paths.split(","))
    corpus = hostile_corpus.corpus(args.seed)
    handlers = row_per_handler()
    if args.rows:  # in the order given
        wanted = args.rows.split(",")
        handlers = {h: r for r in wanted for h, named in handlers.items() if named == r}
    work = args.work or Path(tempfile.mkdtemp(prefix="hostile-rows-"))
    corpus_file = work / "corpus.jsonl"
    work.mkdir(parents=True, exist_ok=True)
    with open(corpus_file, "wb") as handle:
        for record in corpus:
            handle.write(hostile_corpus.line_bytes(record))
    print(f"corpus: {len(corpus)} outputs (seed {args.seed}); {len(handlers)} rows; work folder {work}", flush=True)
    figures: dict = {"seed": args.seed, "corpus": len(corpus), "rows": {}}
    replay_cases = select_cases(Path(args.data), args.per_category, args.conversations)
    gen_cases = select_cases(Path(args.data), args.gen_per_category, args.conversations)
    model = None
    if "generation" in paths:
        model = Path(args.model) if args.model else tiny_model(work)
        shim = work / "shim" / "vllm"
        shim.mkdir(parents=True, exist_ok=True)
        (shim / "__init__.py").write_text(SHIM.format(here=str(HERE)))
    totals = {"crashes": 0, "hangs": 0, "lost": 0, "unexplained": 0, "parity_broken": 0}
    for index, (handler, row) in enumerate(handlers.items() if args.rows else sorted(handlers.items())):
        entry: dict = {"handler": handler}
        line = [f"{row} ({handler})"]
        if "decoder" in paths:
            found = decoder_path(handler, corpus, args.slow_s)
            entry["decoder"] = found
            totals["crashes"] += len(found["crashes"])
            totals["hangs"] += int(found["over_slow"])
            line.append(f"decoder: {len(found['crashes'])} crashes, slowest {found['slowest_s']} s")
        for path, cases in (("replay", replay_cases), ("generation", gen_cases)):
            if path not in paths:
                continue
            selected = [case_id for entries in cases.values() for case_id, _ in entries]
            node_ids = [f"suites/bfcl/suite.yaml::{case_id}" for case_id in selected]
            if path == "replay":
                folder = work / f"replay-{index}"
                write_results(folder, cases, corpus, offset=index * 7)
                extra = ["--toolbench-backend=replay", f"--toolbench-replay={folder}", f"--toolbench-bfcl-model={row}"]
                env: dict = {}
            else:
                extra = [f"--model={model}", f"--toolbench-bfcl-model={row}", "--toolbench-max-tokens=64",
                         "--toolbench-max-model-len=100000", "--toolbench-temperature=0", "--toolbench-seed=0"]
                env = {"TOOLBENCH_STUB_ANSWERS": str(corpus_file), "TOOLBENCH_STUB_ENGINE": "instant",
                       "PYTHONPATH": os.pathsep.join([str(work / "shim"), str(REPO),
                                                      *filter(None, [os.environ.get("PYTHONPATH")])])}
            runs = [pytest_run(args, work, f"{path}-{index}-{label}", node_ids, extra, env, workers)
                    for label, workers in (("serial", 0), ("parallel", args.workers))]
            verdict = judge(runs, selected)
            refused = [r for r in runs if r.get("rc") == 4 or (r.get("crash") and "--toolbench-bfcl-model" in
                                                              r.get("tail", "") and not r.get("cases"))]
            if refused and len(refused) == len(runs):
                verdict = {"refused": runs[0]["tail"].strip().splitlines()[-1:] or ["?"],
                           "wall_s": verdict["wall_s"]}
                line.append(f"{path}: refused the row: {verdict['refused'][0][:160]}")
            else:
                for key in ("crashes", "hangs", "lost", "unexplained"):
                    totals[key] += verdict[key]
                totals["parity_broken"] += int(not verdict["parity"])
                taken = verdict["bfcl_row"][:1] == [row]  # the serial run's header
                headers = ("" if len(set(verdict["bfcl_row"])) <= 1 else
                           f"; the run headers' bfcl_row differ (serial, -n 2): {verdict['bfcl_row']}")
                line.append(f"{path}: {verdict['cases']} cases, {verdict['crashes']} crashes, {verdict['hangs']} "
                            f"hangs, {verdict['lost']} lost, {verdict['unexplained']} unexplained, "
                            f"{verdict['passed']} passed, parity {'yes' if verdict['parity'] else 'NO'}, "
                            f"row {'taken' if taken else 'not taken: per-file decoding'} ({verdict['wall_s']} s)"
                            + headers)
                for note in verdict["notes"][:1]:
                    line.append("    " + note.replace("\n", "\n    "))
            entry[path] = verdict
        figures["rows"][row] = entry
        print("\n  ".join(line), flush=True)
        if args.json:  # after every row: a long run's figures so far
            args.json.write_text(json.dumps(figures, indent=1, default=str), encoding="utf-8")
    figures["totals"] = totals
    print("TOTAL: " + ", ".join(f"{k} {v}" for k, v in totals.items()))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1, default=str), encoding="utf-8")
    return 1 if any(totals.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
