"""RoTBench: tool use under five levels of noise, scored exactly as the official evaluation.

Upstream: Junjie-Ye/RoTBench @ 637e43ae9a978036774c92bb2ab11a83609e304b, ``Data/`` (the cases) and
``Code/Evaluation/evaluate.py --version 0`` (the scorer). Every case of both turns (First_Turn: 840, Third_Turn: 560)
and all five environments (clean, slight, medium, heavy, union) is one item. Upstream ids repeat across files (and
even within one), so a case id is ``<turn>-<level>-<position in the file>``, e.g. ``first_turn-clean-17``; the
category is ``<turn>_<level>`` and the scenario (TG, RS, DU, PL, AM, IR, FT) is a keyword.

The official scorer computes three nested per-case stages, TS (tool selection) ⊇ PI (parameter identification) ⊇
CF (content filling); an item passes when CF holds. Its parsing and matching rules, quirks included, are reproduced
in RoTBench's format library :mod:`pytest_toolbench.scorer_lib.rotbench` (``parse_react``, ``official_stages``,
shared with the ``tltraining`` suite, which reuses RoTBench's clean file); each quirk is commented where it is
implemented. TL-Training's failure categories are added when suite.yaml opts in (``libraries: [tl_failures]``).

Modules: ``loading`` (data files, cases), ``prompt`` (chat requests), ``decoding`` (the ReAct answer, through the
format library's official parser), ``checker`` (the verdict), ``aggregation``
(per-environment, per-scenario and robustness figures), ``replay`` (RoTBench's inference output files).
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
