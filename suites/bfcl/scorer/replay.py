"""Reading ``bfcl generate`` result files, of BFCL v4 and of BFCL v3, for the replay backend.

Layouts (a single file, or any folder tree holding them, e.g. ``result/<model>/non_live/...``):

- v4: ``BFCL_v4_<category>_result.json``, JSON lines ``{"id", "result", ...}`` with v4 ids (``simple_python_3``).
- v3: ``BFCL_v3_<category>_result.json`` (what ``bfcl generate`` wrote before v4, flat in ``result/<model>/``, and
  what most published results are). Categories and ids are mapped to v4 as upstream renamed them, see below.
- A single file of another name is read as v4 JSON lines.

Where several records hold the same case, the first read counts (v4 files are read before v3 ones) and each
repeat is a warning naming file and line.

Result files of categories this suite does not run (the retired exec / rest / sql / chatable ones) are skipped with
one warning listing them. ``BFCL_v4_format_sensitivity_result.json`` (ids ``format_sensitivity_<n>:<config>:<id>``)
is read as a prompting file whatever ``--toolbench-replay-mode`` says: upstream runs the category for prompting
models only, and its ``decode_ast`` fails on a result that is not a string, so such a result is kept as a reply
with no text calls, which the format-sensitivity scorer fails as a decoder failure.

**Mode.** Upstream decodes every output of a model with that model's handler: an FC handler's ``decode_ast`` /
``decode_execute`` never read text (a text step of an FC model is an empty turn), a prompting handler's never read
structured calls. A result file does not name its model, so the mode is decided per file: a file in which any record
holds a structured call (a list ``result`` in single-turn, a list step in multi-turn) is an FC file, every other one
a prompting file; ``--toolbench-replay-mode=fc|prompting`` (``mode``) states it for every file instead. In an FC
file a text ``result`` goes to the FC decoder (a non-empty text does not decode); in a prompting file a list
``result`` is its JSON text, which the prompting decoder refuses as upstream's does (upstream raises on a non-string;
deviation: the list ``[]`` decodes here to no call, so it is ``wrong_count`` where upstream says
``ast_decoder:decoder_failed``, the verdict being the same).

**Row.** With a BFCL row (``--toolbench-bfcl-model``, or the row ``--model`` matches by checkpoint id or family, as
the generation path matches it; the replay backend hands it over as ``row``), every file is read as that row's
handler made it, whatever ``--toolbench-replay-mode`` or the per-file rule would say: ``bfcl generate`` writes the
handler's recorded answer (``model_responses``) as ``result``, a text for the handlers that record the reply (every
prompting handler, and the local FC ones such as QwenFCHandler, HammerHandler, Llama 3.1 FC: the raw text, its
calls not yet parsed) or a list of ``{name: arguments}`` (PhiFC, Granite 3, Arch, Mistral), and ``bfcl evaluate``
decodes it with the handler's ``decode_ast`` (single turn) and ``decode_execute`` (each multi-turn or agentic step).
A single-turn record travels as :func:`.handler_path.replayed_generation`; a multi-turn one is wrapped
``{"mode": "prompting", "result": ..., "handler": <class>}`` as a conversation the generation path ran under the
row. Without a row, the per-file rule below holds.

Multi-turn (and agentic) records keep upstream's nested ``result`` (turns -> steps -> raw text, or FC steps
``[{name: "<arguments JSON>"}]``) as JSON text wrapped with the file's mode, ``{"mode": "fc" | "prompting",
"result": ...}``, which the multi-turn scorer reads (:func:`.multi_turn.conversation.transcript_of`). A string
``result`` there (``Error during inference: ...``) is kept as the JSON string it is, so the checker sees a non-list
result (``multi_turn:inference_error``), as upstream does.

**BFCL v3 -> v4** (gorilla #1019, the V4 release of 2025-07-17, CHANGELOG "Test category rename"; checked against the
last v3 data, gorilla ``58f57e91^``, and the v4 data at ``6ea57973``):

- categories ``simple`` -> ``simple_python``, ``java`` -> ``simple_java``, ``javascript`` -> ``simple_javascript``
  (file names and ids: ``simple_12`` -> ``simple_python_12``, ``java_3`` -> ``simple_java_3``,
  ``javascript_7`` -> ``simple_javascript_7``); every other single-turn category keeps its name.
- the V4 release also moved two live_relevance entries to live_irrelevance and renumbered the rest (same prompt
  and functions, new id): v3 ``live_relevance_13-13-0`` -> ``live_irrelevance_882-882-0``, ``14-14-0`` ->
  ``live_relevance_13-13-0``, ``15-15-0`` -> ``live_irrelevance_883-883-0``, ``16-16-0`` -> ``live_relevance_14-14-0``,
  ``17-17-0`` -> ``live_relevance_15-15-0``.
- v3 data from gorilla #739 (2024-11) to #1022 (2025-05-19) named the last live_multiple entry
  ``live_multiple_1052-79-0``, a typo #1022 fixed: it maps to ``live_multiple_1052-279-0`` (same prompt).
- every other id is unchanged. Verified: each of the 3,641 last-v3 single-turn entries maps to a distinct v4 entry
  (all 3,641 covered) with the same question and functions, except six the V4 release edited (:data:`V3_EDITED`:
  ``parallel_84`` and ``parallel_170`` reworded, ``irrelevance_7`` with another function doc,
  ``live_simple_137-90-0`` / ``live_simple_138-91-0`` with other times, ``live_multiple_44-17-0`` with one sentence
  less): a v3 output there answers another prompt, and reading a v3 file that holds them gives one warning.
- v3 data itself changed over time. Ids are as above for files generated since gorilla #789 (2024-11); before it
  live_relevance had 41 entries (ids such as ``live_relevance_7-6-1``, mostly unknown now, a few reused for other
  prompts). Prompts and function docs were still being fixed later (e.g. #826's enum types in 176 live_multiple docs,
  #963), so an output from older v3 data may answer a slightly different prompt; a file does not say which data it
  was generated on. From #789 to #1086 (2025-06-30) two live_relevance entries shared the id
  ``live_relevance_3-3-0``: a file of that time holds it twice, in no reliable order, so the first one counts, with
  the duplicate warning.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Collection, Mapping

from pytest_toolbench.contract.replay_files import ReplayOutputs, json_lines, leading_id
from pytest_toolbench.contract.suite import Generation
from .categories import AGENTIC, FORMAT_SENSITIVITY, MULTI_TURN, RUN_CATEGORIES
from pytest_toolbench.scorer_lib.bfcl_handlers import handlers as bfcl_handlers
from .format_sensitivity import case_id_of
from .handler_path import replayed_generation
from .single_turn.fc import replay_generation

RESULT_SCHEMA = {"type": "object", "required": ["id", "result"]}
RESULT_FILE = re.compile(r"^BFCL_(?P<version>v3|v4)_(?P<category>\w+?)_result\.json$")

V3_CATEGORIES = {"simple": "simple_python", "java": "simple_java", "javascript": "simple_javascript"}
V3_IDS = {
    "live_relevance_13-13-0": "live_irrelevance_882-882-0",
    "live_relevance_14-14-0": "live_relevance_13-13-0",
    "live_relevance_15-15-0": "live_irrelevance_883-883-0",
    "live_relevance_16-16-0": "live_relevance_14-14-0",
    "live_relevance_17-17-0": "live_relevance_15-15-0",
    # a v3-era id typo fixed by gorilla #1022 (2025-05-19); same prompt and functions
    "live_multiple_1052-79-0": "live_multiple_1052-279-0",
}
#: v4 ids whose question or functions the V4 release edited (so a v3 output answers a different prompt).
V3_EDITED = frozenset({"parallel_84", "parallel_170", "irrelevance_7", "live_simple_137-90-0",
                       "live_simple_138-91-0", "live_multiple_44-17-0"})


def v4_category(v3_category: str) -> str:
    return V3_CATEGORIES.get(v3_category, v3_category)


def v4_id(v3_id: str) -> str:
    """The v4 id of a BFCL v3 single-turn entry (see the module docstring)."""
    if v3_id in V3_IDS:
        return V3_IDS[v3_id]
    prefix, _, number = v3_id.rpartition("_")
    if prefix in V3_CATEGORIES and number.isdigit():
        return f"{V3_CATEGORIES[prefix]}_{number}"
    return v3_id


def result_files(path: Path) -> list[Path]:
    """``path`` itself, or the result files under it: v4 files first, so that where a v3 file holds the same case
    the v4 output counts (the v3 one is a duplicate)."""
    if path.is_file():
        return [path]
    found = [p for p in path.rglob("BFCL_v*_result.json") if p.is_file() and RESULT_FILE.match(p.name)]
    return sorted(found, key=lambda p: (p.name.startswith("BFCL_v3_"), p))


def output_text(result: object, mode: str | None = None) -> Any:
    """What the scorer reads. A string ``result`` is the raw prompting-mode text. A list ``result`` is an FC-mode
    record (``[{name: "<arguments JSON>"}]``): it travels unchanged to the FC path
    (:func:`.single_turn.fc.replay_generation`), which decodes it as the FC handler's ``decode_ast`` does, unless the
    file is a prompting one (``mode``), where it is its JSON text. Any other shape is JSON-encoded and fails to
    decode. May raise RecursionError on absurd nesting."""
    if isinstance(result, str):
        return result
    if isinstance(result, list):
        text = json.dumps(result)  # the same RecursionError / encoding failure a text would meet
        return text if mode == "prompting" else replay_generation(result)
    return json.dumps(result)


def has_structured_step(result: Any) -> bool:
    """A multi-turn ``result`` (turns of steps) holds an FC step (a list of calls)."""
    if not isinstance(result, list):
        return False
    return any(isinstance(turn, list) and any(isinstance(step, list) for step in turn) for turn in result)


def read_results(path: Path, categories: Collection[str], mode: str | None = None,
                 handler: str | None = None) -> ReplayOutputs:
    """Every result file under ``path`` (see the module docstring), tolerating bad lines and files; ``mode``
    (``fc`` / ``prompting``) states how every file was made, None decides per file; ``handler`` (a row's handler
    class) reads every file as that handler's records."""
    path = Path(path)
    outputs = ReplayOutputs()
    if not path.exists():
        outputs.error("no such result file or folder", path)
        return outputs
    files = result_files(path)
    if not files:
        outputs.error("no BFCL result files here: expected BFCL_v4_<category>_result.json (or v3's "
                      "BFCL_v3_<category>_result.json), as `bfcl generate` writes them", path)
        return outputs
    skipped: dict[str, list[str]] = defaultdict(list)
    for file in files:
        match = RESULT_FILE.match(file.name)
        version = match.group("version") if match else "v4"
        if match:
            category = v4_category(match.group("category")) if version == "v3" else match.group("category")
            if category not in categories:
                skipped[category].append(file.name)
                continue
        nested = bool(match) and category in MULTI_TURN + AGENTIC
        if match and category == FORMAT_SENSITIVITY:
            # its own return formats decode it, never a row's handler (upstream runs it for prompting rows only)
            _read_file(outputs, file, version, text_only=True)
        else:
            _read_file(outputs, file, version, nested, mode, handler)
    if skipped:
        names = ", ".join(f"{category} ({len(names)} file{'s' if len(names) > 1 else ''})"
                          for category, names in sorted(skipped.items()))
        outputs.warning(f"result files of categories this suite does not run were skipped: {names}", path)
    return outputs


def _read_file(outputs: ReplayOutputs, file: Path, version: str, nested: bool = False,
               mode: str | None = None, handler: str | None = None, text_only: bool = False) -> None:
    # v3 ids to v4; a format-sensitivity id (upstream's, ending in its entry's id) to this suite's case id
    to_v4: Callable[[str], str] = v4_id if version == "v3" else case_id_of if text_only else (lambda case_id: case_id)

    def case_of(_position: int, text: str) -> str | None:
        found = leading_id(text)
        return to_v4(found) if isinstance(found, str) else None

    edited = []
    texts: list[str] = []  # ids whose result is a text: FC text answers when the file holds FC records
    transcripts: list[str] = []  # multi-turn ids added from this file, wrapped with the file's mode at the end
    fc_file = mode == "fc"
    for _, number, record in json_lines(outputs, file, RESULT_SCHEMA, what="BFCL result record", case_of=case_of):
        record_id = record["id"]
        if not isinstance(record_id, str):
            outputs.bad_line(file, number, f"id {record_id!r} is not a string: BFCL ids are strings such as "
                                           "'simple_python_0'; line skipped")
            continue
        case_id = to_v4(record_id)
        if version == "v3" and case_id in V3_EDITED:
            edited.append(record_id)
        try:
            if text_only and not isinstance(record["result"], str):
                # not a text: upstream's prompting decode_ast raises on it (the scorer fails a reply with calls)
                text = Generation(text=json.dumps(record["result"], ensure_ascii=False), finish_reason="stop",
                                  tool_calls=[])
            elif text_only:
                text = output_text(record["result"], mode)
            elif nested:
                text = json.dumps(record["result"], ensure_ascii=False)
            elif handler is not None:
                text = replayed_generation(handler, record["result"])
            else:
                text = output_text(record["result"], mode)
        except RecursionError:
            outputs.bad_line(file, number, f"the result of {record_id} is nested too deeply to turn into call text",
                             case_id)
            continue
        except Exception as exc:  # noqa: BLE001 - one odd result fails its case, never the file
            outputs.bad_line(file, number, f"the result of {record_id} cannot be turned into call text "
                                           f"({type(exc).__name__}: {exc})", case_id)
            continue
        if not outputs.add(case_id, text, file, number):
            continue
        if nested:
            transcripts.append(case_id)
            fc_file = fc_file or (mode is None and has_structured_step(record["result"]))
        elif handler is not None:
            continue
        elif isinstance(text, str) and isinstance(record["result"], str):
            texts.append(case_id)
        elif not isinstance(text, str) and not text_only:
            fc_file = True
    if transcripts:
        wrapper = '{"mode": "%s", %s"result": ' % ("prompting" if handler else "fc" if fc_file else "prompting",
                                                   f'"handler": {json.dumps(handler)}, ' if handler else "")
        for case_id in transcripts:  # the result's JSON text as it is: no second encoding of deep nesting
            outputs[case_id] = wrapper + outputs[case_id] + "}"
    elif fc_file and handler is None:
        # An FC handler records a reply without calls as its text; in an FC file such a text is read by the FC
        # decoder (a non-empty text does not decode), never as Python-call text.
        for case_id in texts:
            outputs[case_id] = Generation(text=outputs[case_id], finish_reason="stop", tool_calls=[])
    if edited:
        outputs.warning(f"BFCL v4 edited the prompt of {', '.join(edited)}: the v3 output answers the older prompt",
                        file)


def replay_outputs(path: Path, mode: str | None = None, row: Mapping[str, Any] | None = None) -> dict[str, str]:
    """Read ``bfcl generate`` result files (v4 ``BFCL_v4_<category>_result.json`` and v3
    ``BFCL_v3_<category>_result.json``, mapped to v4 ids): a single file or any folder tree holding them.

    Tolerant: a bad line is a problem naming file and line and the rest still counts (see the module docstring, which
    also documents how v3 categories and ids map to v4 and how list-form FC results become call text). Returns a
    :class:`~pytest_toolbench.contract.replay_files.ReplayOutputs` (a dict that also carries the problems found).
    ``mode``: ``--toolbench-replay-mode`` (``fc`` / ``prompting``), or None to decide per file. ``row``: the BFCL
    row the run decodes as (``RowChoice.to_json()``: its ``handler`` reads every file), or None.
    """
    handler = row.get("handler") if isinstance(row, Mapping) else None
    if handler is not None and handler not in bfcl_handlers.HANDLERS:
        raise ValueError(f"BFCL handler {handler!r} is not reproduced here")
    return read_results(Path(path), RUN_CATEGORIES, mode, handler)
