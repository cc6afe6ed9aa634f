"""A sampled run's estimate of one figure of the full benchmark, and the names of the methods that make its interval
(the modules of :mod:`.estimation`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

#: Two figures closer than this (relative) are the same.
TOLERANCE = 1e-9

STRATIFIED = "stratified, Agresti-Coull adjusted strata, fpc (Cochran 5.7)"
STRATIFIED_WILSON = "stratified variance (Agresti-Coull adjusted strata, fpc), Wilson with effective sample size"
HYPERGEOMETRIC = "exact hypergeometric (finite population)"
RATIO_WILSON = "combined ratio estimator, Wilson with effective sample size (Korn-Graubard), fpc"
RATIO_NORMAL = "combined ratio estimator, linearized variance, fpc (Cochran 6.11)"
INFLUENCE = "linearized (influence function) stratified variance, fpc (Woodruff 1971)"
NO_INTERVAL = "none"

MetricKey = tuple[str, str]


@dataclass(frozen=True)
class Estimate:
    """One figure's estimate of its full-benchmark value. ``coefficients``: ``c_h`` per stratum for a figure linear
    in the categories' pass rates (what the paired difference against a baseline needs), else None."""

    value: float | None
    interval95: tuple[float, float] | None
    sampled: int
    population: int
    seed: int
    method: str
    note: str = ""
    coefficients: Mapping[str, float] | None = None

    def to_json(self) -> dict[str, Any]:
        data = {"value": self.value, "interval95": list(self.interval95) if self.interval95 else None,
                "sampled": self.sampled, "population": self.population, "seed": self.seed, "method": self.method}
        if self.note:
            data["note"] = self.note
        if self.coefficients is not None:
            data["coefficients"] = dict(self.coefficients)
        return data

