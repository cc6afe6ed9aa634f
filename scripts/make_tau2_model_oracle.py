"""Freeze a real model's τ²-bench conversations, graded by the official evaluator, as test data
(tests/data/tau2_small_model.json): the plugin's own trajectories, their rewards here and upstream's.

1. Run the plugin with a real model on a few tasks, keeping the run's records (the transcripts are the records'
   outputs), e.g. on the CPU engine (docs/cpu.md), agent and user on one engine:

       TOOLBENCH_DATA=../shared/data .venv/bin/python -m pytest suites/tau2bench/suite.yaml::airline_0 \\
           suites/tau2bench/suite.yaml::airline_1 suites/tau2bench/suite.yaml::retail_0 \\
           suites/tau2bench/suite.yaml::retail_1 --model=../models/qwen-coder-0.5b --toolbench-mode native \\
           --toolbench-max-tokens=128 --toolbench-max-model-len=16384 \\
           "--toolbench-suite-option=tau2bench.domains=[airline,retail]" \\
           --toolbench-suite-option=tau2bench.max_steps=16 --toolbench-json=run.json

   (``--toolbench-mode native`` is upstream's protocol; without it, the default prompt mode writes the tools as
   Hermes text, which the Qwen2.5 template renders to the same prompt: the same conversations for this model.)

2. Grade them with upstream 1.0.1's evaluator, in its own venv (Python 3.12; the tau2 source on the path, never a
   dependency of this project), and write the test data:

       PYTHONPATH=<tau2-bench 1.0.1>/src /work/oracle-venvs/tau2-101/bin/python \\
           scripts/make_tau2_model_oracle.py ../shared/data/tau2bench/upstream run.json

   (upstream reads ``$TAU2_DATA_DIR/tau2/domains/...``: the script points ``TAU2_DATA_DIR`` at a scratch folder
   whose ``tau2`` links to the data folder given, upstream's ``data/tau2/``, before it imports tau2).

For each τ²-bench record of the run: the transcript (messages, termination reason, the conversation's cost record),
the plugin's reward and breakdown, and upstream's ``evaluate_simulation`` (evaluation type ``all``, or
``all_with_nl_assertions`` for a basis with NL assertions: the tasks chosen have none, so no judge is called) on
the same messages, twice: as the conversation ended (``official``) and as if the user had ended it
(``official_as_user_stop``: termination ``user_stop``), so the parts of the breakdown (DB, COMMUNICATE, ...) are
compared on a model's trajectory even when it ended early (a premature end gets 0 without a breakdown).
``tests/test_tau2bench_small_model.py`` re-grades every trajectory with the plugin and checks both.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "tau2_small_model.json"


def records(results: dict) -> list[dict]:
    """The τ²-bench records of a results file (``--toolbench-json``)."""
    found = []

    def walk(node):
        if isinstance(node, dict):
            if node.get("suite") == "tau2bench" and "case_id" in node and "output" in node:
                found.append(node)
                return
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(results)
    return found


def official(transcript: dict, task, domain: str, termination: str) -> dict:
    from tau2.data_model.simulation import SimulationRun, TerminationReason
    from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation

    simulation = SimulationRun(id="plugin", task_id=task.id, start_time="", end_time="", duration=0.0, timestamp="",
                               termination_reason=TerminationReason(termination),
                               messages=transcript["messages"])
    basis = [str(getattr(b, "value", b)) for b in task.evaluation_criteria.reward_basis]
    kind = EvaluationType.ALL_WITH_NL_ASSERTIONS if "NL_ASSERTION" in basis else EvaluationType.ALL
    info = evaluate_simulation(simulation, task, kind, solo_mode=False, domain=domain)
    breakdown = None if info.reward_breakdown is None else {
        str(getattr(k, "value", k)): v for k, v in info.reward_breakdown.items()}
    return {"reward": info.reward, "reward_breakdown": breakdown}


def main(data: Path, results_path: Path, out: Path = OUT) -> None:
    scratch = Path(tempfile.mkdtemp(prefix="tau2-data-"))
    (scratch / "tau2").symlink_to(Path(data).resolve(), target_is_directory=True)
    os.environ["TAU2_DATA_DIR"] = str(scratch)
    from tau2.registry import registry

    results = json.loads(results_path.read_text(encoding="utf-8"))
    tasks = {}
    cases = []
    for record in sorted(records(results), key=lambda r: r["case_id"]):
        domain = record["category"]
        if domain not in tasks:
            tasks[domain] = {t.id: t for t in registry.get_tasks_loader(domain)(None)}
        transcript = json.loads(record["output"])
        task = tasks[domain][str(transcript["task_id"])]
        counts = record.get("counts") or {}
        plugin = {"reward": counts.get("reward"),
                  "reward_breakdown": {part: counts[f"reward_{part.lower()}"] for part in
                                       ("DB", "ENV_ASSERTION", "ACTION", "COMMUNICATE", "NL_ASSERTION")
                                       if f"reward_{part.lower()}" in counts} or None}
        row = {"case_id": record["case_id"], "domain": domain, "task_id": task.id, "transcript": transcript,
               "plugin": plugin,
               "official": official(transcript, task, domain, transcript["termination_reason"]),
               "official_as_user_stop": official(transcript, task, domain, "user_stop")}
        row["agree"] = (row["official"]["reward"] == plugin["reward"]
                        and row["official"]["reward_breakdown"] == plugin["reward_breakdown"])
        cases.append(row)
        print(f"{row['case_id']}: {transcript['termination_reason']}, plugin {plugin['reward']} "
              f"{plugin['reward_breakdown']}, official {row['official']['reward']} "
              f"{row['official']['reward_breakdown']}, as user_stop {row['official_as_user_stop']}")
    header = results.get("header") or {}
    document = {"about": "tau2bench conversations of a real model made by the plugin, graded by upstream 1.0.1's "
                         "evaluate_simulation (scripts/make_tau2_model_oracle.py)",
                "model": header.get("model"), "generation": header.get("generation"), "cases": cases}
    out.write_text(json.dumps(document, indent=1, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    print(f"{len(cases)} trajectories, {sum(c['agree'] for c in cases)} graded alike -> {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]) if len(sys.argv) > 3 else OUT)
