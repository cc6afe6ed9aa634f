"""Repeated samples (``--toolbench-repeat``): pass@1, tau-bench's pass^k curve and the flaky cases (pure functions).

pass^k of one case with ``c`` of ``n`` samples passing is estimated without bias by C(c, k) / C(n, k) (Yao et al.
2024, *τ-bench*, arXiv:2406.12045 section 4; the analogue of Chen et al. 2021's pass@k)."""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence


def pass_hat(passes: int, samples: int, k: int) -> float:
    """tau-bench's unbiased estimator of pass^k for one case with ``passes`` of ``samples`` passing: the chance that
    ``k`` of its samples drawn without replacement all pass, C(c, k) / C(n, k) (Yao et al. 2024, arXiv:2406.12045,
    section 4; the analogue of Chen et al. 2021's pass@k). Needs ``1 <= k <= samples``."""
    return math.comb(passes, k) / math.comb(samples, k)


def reliability(outcomes: Mapping[str, Sequence[bool]], samples: int) -> dict[str, Any]:
    """The reliability figures of ``samples`` repeated samples per case (``outcomes``: case id -> its samples'
    verdicts, in the suite's order): ``pass_at_1``, the mean over cases of each case's pass rate c/n; ``pass_hat``,
    for every k = 1..K the mean over cases of :func:`pass_hat`, each point with the cases it is over and how many
    were left out of it for having fewer than k samples (such a case counts, with its own n, at every k it has
    samples for); ``pass_hat_k``, the curve's last point (k = K); ``flaky``, the share of cases whose samples
    disagree, and their ids (``flaky_cases``)."""
    cases = len(outcomes)
    curve = []
    for k in range(1, samples + 1):
        eligible = [passed for passed in outcomes.values() if len(passed) >= k]
        curve.append({"k": k, "value": (sum(pass_hat(sum(p), len(p), k) for p in eligible) / len(eligible)
                                        if eligible else None),
                      "cases": len(eligible), "excluded": cases - len(eligible)})
    flaky = [case_id for case_id, passed in outcomes.items() if any(passed) and not all(passed)]
    return {
        "samples": samples, "cases": cases,
        "pass_at_1": sum(sum(p) / len(p) for p in outcomes.values()) / cases if cases else None,
        "pass_hat_k": curve[-1]["value"] if curve else None,
        "pass_hat": curve,
        "flaky": len(flaky) / cases if cases else None,
        "flaky_cases": flaky,
    }
