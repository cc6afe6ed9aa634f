"""TaskBench's data files read into cases: one case per labelled request (a line of ``data_<domain>/data.json``),
the category its domain, its graph type (``single`` / ``chain`` / ``dag``) a marker.

Files per domain folder ``data_<domain>/`` (microsoft/JARVIS @ c62e0fa ``taskbench/``):

* ``tool_desc.json``: ``{"nodes": [tool, ...]}``; huggingface and multimedia tools have ``input-type`` /
  ``output-type`` (resource dependencies), dailylifeapis tools ``parameters`` (temporal dependencies);
* ``user_requests.json`` (JSON Lines): ``{"id", "user_request"}``, what JARVIS's inference.py sends;
* ``data.json`` (JSON Lines): the labels. Not redistributable here: suite.yaml declares it as a download pinned by
  git blob. Two layouts are accepted, because upstream's own code disagrees with its data:

  - the released one (what the fork laminair/JARVIS documents for upstream's file, ``migrate_data_schema.py`` at
    59cd0fd, and what the HF dataset microsoft/Taskbench has as columns): ``id``, ``seed``, ``n_tools``, ``type``,
    ``sampled_nodes`` / ``sampled_links`` (JSON text), ``instruction``, and ``tool_steps`` / ``tool_nodes`` /
    ``tool_links`` as JSON **text** (ToLeaP ``json.loads`` each);
  - the one ``format_data.py`` writes (and ``evaluate.py`` reads): ``task_steps`` / ``task_nodes`` / ``task_links``
    as JSON values, and ``user_request`` instead of ``instruction``.

  Upstream ``evaluate.py`` reads ``label["task_nodes"]``, which the released layout lacks: run as is, it would skip
  every sample ("Parsing Error ... Ignore"). The suite reads both layouts into the same label (see README.md).

Ids repeat (huggingface 32742251 twice, dailylifeapis 29108446 and 14194530 twice, identical lines in
user_requests.json); every line stays a case, as in ToLeaP (which scores rows): the n-th occurrence of an id gets
the case id ``<domain>-<id>-<n>`` (n >= 2), the first ``<domain>-<id>`` (a few ids also occur in two domains).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from pytest_toolbench.contract.data_files import iter_jsonl, load_json, load_jsonl, validate
from pytest_toolbench.contract.errors import DataError
from pytest_toolbench.contract.suite import Case, SuiteContext

from .prompt import RESOURCE, TEMPORAL, tool_text

UPSTREAM_REPO = "microsoft/JARVIS"
UPSTREAM_COMMIT = "c62e0faac76c4a2907cabe2cfe4bbe5f2e613400"

#: Domain -> dependency type (``batch_evaluate.sh``: dailylifeapis is temporal, the others resource).
DOMAINS: dict[str, str] = {"huggingface": RESOURCE, "multimedia": RESOURCE, "dailylifeapis": TEMPORAL}
PROTOCOLS = ("toleap", "upstream")
GRAPH_TYPES = ("single", "chain", "dag")

#: Where the labels come from when a data folder lacks them (the git blobs of c62e0fa's tree).
LABEL_BLOBS = {
    "huggingface": "4c545595480bf029328ef7453ce114f78a6539ff",
    "multimedia": "9d6f07d1ba0f7f09ee8180fd05ee95cf42661a47",
    "dailylifeapis": "ea5e70584a144d1ff7a9a246805bab7c7fe0f511",
}
LABEL_URL = "https://raw.githubusercontent.com/" + UPSTREAM_REPO + "/" + UPSTREAM_COMMIT + "/taskbench/data_{}/data.json"

_RESOURCE_TOOL = {
    "type": "object",
    "required": ["id", "input-type", "output-type"],
    "properties": {"id": {"type": "string", "minLength": 1},
                   "input-type": {"type": "array", "items": {"type": "string"}},
                   "output-type": {"type": "array", "items": {"type": "string"}}},
}
_TEMPORAL_TOOL = {
    "type": "object",
    "required": ["id", "parameters"],
    "properties": {"id": {"type": "string", "minLength": 1},
                   "parameters": {"type": "array", "items": {"type": "object", "required": ["name"],
                                                              "properties": {"name": {"type": "string"}}}}},
}
TOOL_DESC_SCHEMAS = {
    RESOURCE: {"type": "object", "required": ["nodes"],
               "properties": {"nodes": {"type": "array", "minItems": 1, "items": _RESOURCE_TOOL}}},
    TEMPORAL: {"type": "object", "required": ["nodes"],
               "properties": {"nodes": {"type": "array", "minItems": 1, "items": _TEMPORAL_TOOL}}},
}
USER_REQUEST_SCHEMA = {
    "type": "object",
    "required": ["id", "user_request"],
    "properties": {"id": {"type": "string", "minLength": 1}, "user_request": {"type": "string"}},
}
_GRAPH = {"type": {"enum": list(GRAPH_TYPES)}, "id": {"type": "string", "minLength": 1},
          "n_tools": {"type": "integer"}}
LABEL_SCHEMA = {
    "type": "object",
    "required": ["id", "type"],
    "oneOf": [
        {"required": ["instruction", "tool_steps", "tool_nodes", "tool_links"],
         "properties": {"instruction": {"type": "string"}, "tool_steps": {"type": "string"},
                        "tool_nodes": {"type": "string"}, "tool_links": {"type": "string"}}},
        {"required": ["task_steps", "task_nodes", "task_links"],
         "properties": {"task_steps": {"type": "array"}, "task_nodes": {"type": "array"},
                        "task_links": {"type": "array"}}},
    ],
    "properties": _GRAPH,
}
#: What the three label fields must hold once decoded (ToLeaP joins the steps with "\n": they must be strings).
LABEL_PARTS_SCHEMA = {
    "type": "object",
    "required": ["task_steps", "task_nodes", "task_links"],
    "properties": {
        "task_steps": {"type": "array", "items": {"type": "string"}},
        "task_nodes": {"type": "array", "items": {"type": "object", "required": ["task"],
                                                  "properties": {"task": {"type": "string"},
                                                                 "arguments": {"type": "array"}}}},
        "task_links": {"type": "array", "items": {"type": "object"}},
    },
}
_PARTS = (("tool_steps", "task_steps"), ("tool_nodes", "task_nodes"), ("tool_links", "task_links"))


def case_id(domain: str, item_id: str, occurrence: int) -> str:
    return f"{domain}-{item_id}" if occurrence == 1 else f"{domain}-{item_id}-{occurrence}"


def options_of(definition: Mapping[str, Any]) -> dict[str, Any]:
    """The options with their defaults, the domains in upstream's order; the values were checked by the core against
    the schemas in suite.yaml (one usage error naming the option) before loading."""
    options = dict(definition.get("options") or {})
    domains = options.get("domains") or list(DOMAINS)
    if isinstance(domains, str):
        domains = [domains]
    options["domains"] = [d for d in DOMAINS if d in domains]
    options["protocol"] = options.get("protocol", "toleap")
    return options


def read_tools(folder: Path, domain: str, protocol: str) -> dict[str, Any]:
    """One domain's tools as every case of it shares them (one object: the loaded-suite pickle keeps it once)."""
    dependency = DOMAINS[domain]
    tools = load_json(folder / "tool_desc.json", TOOL_DESC_SCHEMAS[dependency])["nodes"]
    return {
        "dependency_type": dependency,
        "text": tool_text(tools, dependency, reduce_parameters=protocol == "upstream"),
        "names": [tool["id"] for tool in tools],
        # evaluate.py: tool_output_type_map = {id: output-type[0] if any else "none"} (resource only)
        "output_types": {tool["id"]: (tool["output-type"][0] if tool["output-type"] else "none")
                         for tool in tools} if dependency == RESOURCE else {},
        "parameters": {tool["id"]: [p["name"] for p in tool["parameters"]]
                       for tool in tools} if dependency == TEMPORAL else {},
    }


def read_labels(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """``(line, record)`` per labelled request, the record carrying ``label``: the decoded steps, nodes and links."""
    if not path.is_file():
        domain = path.parent.name.removeprefix("data_")
        raise DataError(path, "TaskBench's labels are missing (data.json is not redistributed): the plugin downloads "
                              f"it from {LABEL_URL.format(domain)} (git blob {LABEL_BLOBS.get(domain, '?')}); on a "
                              "machine without network put that file here by hand")
    records: list[tuple[int, dict[str, Any]]] = []
    for number, record in iter_jsonl(path, LABEL_SCHEMA):
        label = {}
        for text_key, key in _PARTS:
            if text_key in record:
                try:
                    label[key] = json.loads(record[text_key])
                except json.JSONDecodeError as exc:
                    raise DataError(path, f"{text_key} is not JSON text ({exc.msg} at column {exc.colno})",
                                    line=number, field=text_key) from None
            else:
                label[key] = record[key]
        validate(label, LABEL_PARTS_SCHEMA, path, line=number)
        record["label"] = label
        records.append((number, record))
    return records


def load_cases(context: SuiteContext) -> list[Case]:
    data_dir, definition = Path(context.data_dir), context.definition
    options = options_of(definition)
    protocol = options["protocol"]
    cases: list[Case] = []
    for domain in options["domains"]:
        folder = data_dir / f"data_{domain}"
        tools = read_tools(folder, domain, protocol)
        requests: dict[str, list[str]] = {}
        for row in load_jsonl(folder / "user_requests.json", USER_REQUEST_SCHEMA):
            requests.setdefault(row["id"], []).append(row["user_request"])
        labels_path = folder / "data.json"
        records = read_labels(labels_path)
        total: dict[str, int] = {}
        for _, record in records:
            total[record["id"]] = total.get(record["id"], 0) + 1
        seen: dict[str, int] = {}
        for number, record in records:
            item_id = record["id"]
            occurrence = seen[item_id] = seen.get(item_id, 0) + 1
            if protocol == "upstream":
                # inference.py reads user_requests.json; a repeated id takes its repeated line
                asked = requests.get(item_id, [])
                if not asked:
                    raise DataError(labels_path, f"id {item_id} has no line in user_requests.json, which the "
                                                 "upstream protocol prompts with", line=number, field="id")
                request = asked[min(occurrence, len(asked)) - 1]
            else:
                # ToLeaP prompts with the dataset's instruction (format_data.py's layout calls it user_request)
                request = record["instruction"] if "instruction" in record else record.get("user_request")
                if not isinstance(request, str):
                    raise DataError(labels_path, "a label line needs its request: 'instruction' (or "
                                                 "'user_request')", line=number, field="instruction")
            payload = {
                "domain": domain, "id": item_id, "occurrence": occurrence, "line": number,
                "type": record["type"], "n_tools": record.get("n_tools"),
                "request": request, "label": record["label"], "tools": tools,
                # evaluate.py keys labels and predictions by id: a later line with the same id replaces this one
                "superseded": occurrence < total[item_id],
            }
            cases.append(Case(case_id=case_id(domain, item_id, occurrence), category=domain,
                              payload=payload, keywords=(record["type"],)))
    return context.bind(cases)


def run_info(context: SuiteContext) -> dict[str, str]:
    """Shown beside the data source: which domains have their labels (data.json) in the data folder."""
    present = [d for d in DOMAINS if (context.data_dir / f"data_{d}" / "data.json").is_file()]
    missing = [d for d in DOMAINS if d not in present]
    text = "data.json present for " + (", ".join(present) or "no domain")
    if missing:
        text += f"; missing for {', '.join(missing)}"
    return {"labels": text}
