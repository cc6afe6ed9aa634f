"""BFCL's handlers as the core sees them: the :class:`HandlerLibrary` that ``suites/bfcl/suite.yaml`` names
(``generation.handlers: bfcl_handlers.library``). Everything the core needs to prompt and decode BFCL as a leaderboard
row is here, as plain values and functions: the renderers (:mod:`.family_formats`, :mod:`.row_formats`), the row
choice (:mod:`.rows`), the option that names a row (``--toolbench-bfcl-model``, registered by the plugin in the
generation group) and the run header's key (``bfcl_row``).

Pure; standard library only.
"""

from __future__ import annotations

from pytest_toolbench.scorer_lib.handler_library import HandlerLibrary, RowOption

from .family_formats import HANDLER_FORMATS, UPSTREAM
from .row_formats import handler_format
from .rows import GOLD_CHOICE, check_option, choose_row, gold_refusal, replay_row, replay_words

OPTION = RowOption(
    flag="--toolbench-bfcl-model", dest="toolbench_bfcl_model", metavar="ROW",
    help="Prompt and decode BFCL as this leaderboard row (its registry name in bfcl-eval 2026.3.23, "
         "e.g. Qwen/Qwen3-8B-FC), e.g. for a fine-tuned checkpoint; the row's mode follows. Default: "
         "the row whose model is the checkpoint's id, else the family's prompting handler, else the "
         "chat template (the header says which). With --toolbench-replay: the replayed BFCL files are "
         "decoded by the row's handler, as bfcl evaluate does (default: the row --model matches, else "
         "the per-file rule).")

#: ``--toolbench-replay-mode`` (registered by the replay backend)
REPLAY_MODE_HELP = ("How replayed BFCL result files were made: fc (a native-mode model's files) or "
                    "prompting; default: per file, FC when any record of the file holds a structured call "
                    "step.")

LIBRARY = HandlerLibrary(
    name="bfcl_handlers.library", upstream=UPSTREAM, header_key="bfcl_row", row_label="BFCL row",
    renderers_words="BFCL's handlers for Qwen, Llama 3/4, Gemma 3",
    option=OPTION,
    families=HANDLER_FORMATS, handler_format=handler_format, choose_row=choose_row, check_option=check_option,
    replay_row=replay_row, gold_choice=GOLD_CHOICE, gold_refusal=gold_refusal, replay_words=replay_words,
    replay_mode_help=REPLAY_MODE_HELP)
