"""τ²-bench's tasks -> cases: ``domains/<domain>/tasks.json`` of the data folder (upstream ``data/tau2/``), the
split of ``split_tasks.json`` named by the ``split`` option (upstream's default ``base``: every airline, retail and
mock task, telecom's 114 of 2,285; telecom also has ``small`` 20 and ``full`` 2,285, which the other domains do not
have: a split a selected domain lacks is refused in one line), one case per task, its category the domain. With the
option ``agent: llm_agent_solo`` (:mod:`.solo`) only telecom and mock may be selected (others are refused in one
line), and only the tasks upstream's solo agent accepts are loaded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_toolbench.contract.errors import DataError, UsageProblem
from pytest_toolbench.contract.suite import Case, SuiteContext

from .domains.registry import unreadable
from .evaluation import needs_judge, reward_basis
from .solo import SOLO_AGENT, agent_name, solo_refusal, valid_solo_task

DOMAIN_ORDER = ("airline", "retail", "telecom", "banking_knowledge", "mock")
#: the splits a case is marked with (``split_<name>``) when it belongs to them, whichever split is loaded (so a run of
#: telecom's ``full`` split selects its ``base`` tasks with ``-m split_base``); ``full`` is every task
SPLIT_MARKERS = ("base", "small", "train", "test")


def domain_dir(data_dir: Path, domain: str) -> Path:
    return Path(data_dir) / "domains" / domain


def case_id_for(domain: str, task_id: str) -> str:
    return f"{domain}_{task_id}"


def _read(path: Path) -> Any:
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError) as error:
        raise DataError(path, f"cannot read: {error}") from None


def load_cases(context: SuiteContext) -> list[Case]:
    options = context.options
    split = options.get("split", "base")
    refusal = solo_refusal(options)
    if refusal:
        raise UsageProblem(refusal)
    solo = agent_name(options) == SOLO_AGENT
    cases = []
    for domain in [d for d in DOMAIN_ORDER if d in (options.get("domains") or ())]:
        folder = domain_dir(context.data_dir, domain)
        if not folder.is_dir():
            continue  # the shipped samples hold the mock domain only
        if unreadable(domain):
            raise DataError(folder, unreadable(domain))
        # banking_knowledge: upstream's get_tasks reads tasks/task_*.json (13 of which differ from tasks.json)
        tasks = [_read(path) for path in sorted((folder / "tasks").glob("task_*.json"))] \
            if domain == "banking_knowledge" else _read(folder / "tasks.json")
        splits_file = folder / "split_tasks.json"
        membership: dict[str, set] = {}
        if splits_file.is_file():
            splits = _read(splits_file)
            if split not in splits:
                raise DataError(splits_file, f"the {domain} domain has no split {split!r} (its splits: "
                                             f"{', '.join(sorted(splits))}); deselect it with the domains option")
            wanted = set(splits[split])
            tasks = [task for task in tasks if task["id"] in wanted]
            membership = {name: set(ids) for name, ids in splits.items() if name in SPLIT_MARKERS}
        if solo:  # upstream's task filter for llm_agent_solo (the tasks it cannot run are not run)
            tasks = [task for task in tasks if valid_solo_task(task)]
        for task in tasks:
            basis = reward_basis(task)
            keywords = tuple(f"reward_{b.lower()}" for b in basis) + (("needs_judge",) if needs_judge(task) else ()) \
                + tuple(f"split_{name}" for name in SPLIT_MARKERS if task["id"] in membership.get(name, ()))
            cases.append(Case(case_id_for(domain, task["id"]), domain, {"domain": domain, "task": task},
                              keywords))
    return context.bind(cases)


def run_info(context: SuiteContext) -> dict[str, str]:
    options = context.options
    return {"tau2bench": f"domains {', '.join(options.get('domains') or ())}, split {options.get('split', 'base')}; "
                         "gold and replay only (no generation with a model yet)"}
