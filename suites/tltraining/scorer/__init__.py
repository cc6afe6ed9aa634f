"""TL-Training's single-turn evaluation protocol: nested TS / PI / CF on RoTBench Clean, BFCL executable and
ToolAlpaca eval_real, with TL-Training's error categories and reward on every failure.

TL-Training (arXiv 2412.15495, Junjie-Ye/TL-Training @ 77c875a9) ships no evaluation code; the protocol is the
paper's (§4.3-4.4, Table 2): TS = right tool, PI = right tool and parameter names, CF = right tool, names and
values, each counted over *all* cases (undecodable output is a failure). The stage rules are RoTBench's official
ones (RoTBench's format library, ``pytest_toolbench.scorer_lib.rotbench``, which the rotbench suite uses too; no
scorer imports another suite's scorer). TL-Training's categories come from ``pytest_toolbench.scorer_lib.tl_failures``
(suite.yaml ``libraries: [tl_failures]``).

Datasets (categories), all read from the shared data root (suite.yaml ``data.folder: "."``); the RoTBench and BFCL
files are other suites' data, read only because suite.yaml declares them (``data.reuses``: suite and folder):

* ``rot_clean``: RoTBench ``First_Turn/clean.json`` (105), with RoTBench's rules unchanged: any gold alternative,
  ``"None"`` values unchecked, finish/ask_to_user by position and exempt from values, and (option
  ``empty_input_fails``, default true as upstream) a call with empty arguments fails every stage;
* ``exec_simple|multiple|parallel|parallel_multiple``: BFCL's 240 retired executable cases (the paper's
  "239"); the gold call strings are parsed into calls (literal values; numeric expressions such as ``1/6`` are
  folded). The paper does not say how several calls are scored: here predicted and gold calls must pair up one to
  one (a multiset), and a stage holds when some pairing satisfies it for every pair;
* ``toolalpaca_real``: ToolAlpaca ``eval_real.json`` (114). Gold answers are sequences of steps; a single-turn answer
  is compared with the first step (its first predicted call against the first gold step).

Prompt. The paper runs each model in its own tool-use template (tools passed natively). Requests therefore carry
the tool docs in ``tools``; by default (option ``system_prompt: tl_codellama``) they also carry the only prompt the
TL-Training repository documents, the TL-CodeLLaMA-2 system message of Python ``def`` stubs (README @ 77c875a9,
"Inference"), so prompting-mode runs see the tools. Set ``system_prompt: none`` for native-only requests.

Output decoding is an explicit, ordered parser registry (the decoder used is recorded in ``details["parser"]``):
native ``tool_calls``; ``<tool_call>`` (Qwen-2.5/Hermes); ``[TOOL_CALLS]`` (Mistral); ReAct
``Action:``/``Action Input:`` with RoTBench's official parser (ToolLLaMA, Qwen-2); ``{"name", "parameters"}``
(Llama-3.1); ``[name(...)]`` and bare ``name(k=v)`` Python calls (NexusRaven, TL-CodeLLaMA-2); ``name\\n{json}``
(ChatGLM-4).

Modules: ``loading`` (the three datasets into cases), ``prompt`` (requests, TL-CodeLLaMA-2's system prompt),
``decoding`` (the parser registry; Python-call text is ``pytest_toolbench.parsing.python_calls.parse_literal_calls``),
``checker`` (TS / PI / CF and the verdict), ``tl`` (TL-Training categories), ``aggregation`` (per-dataset figures),
``replay`` (TL-Training ships no output files: the outputs its test sets' own harnesses write, RoTBench's inference
files and ``bfcl generate``'s exec result files).
"""

from .aggregation import aggregate
from .checker import gold_output, score
from .loading import load_cases
from .prompt import build_request
from .replay import replay_outputs

__all__ = [
    "load_cases",
    "build_request",
    "gold_output",
    "score",
    "aggregate",
    "replay_outputs",
]
