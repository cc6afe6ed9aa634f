"""``--toolbench-sample``, the run's side: a suite's declared sampling unit. The design and the draw themselves (the
stratified keyed-hash sample, :class:`Design`, :func:`draw`) are :mod:`pytest_toolbench.stats.sampling`; they are
named here too for the run's modules that draw (``run.catalog``, ``run.context``) and the plugin's options."""

from __future__ import annotations

from typing import Any, Callable

from ..stats.sampling import DEFAULT_SEED, MINIMUM_PER_STRATUM, Design, SampleSpec, draw, parse_sample

__all__ = ["DEFAULT_SEED", "MINIMUM_PER_STRATUM", "Design", "SampleSpec", "draw", "parse_sample",
           "sampling_unit_function"]


def sampling_unit_function(benchmark: Any) -> Callable[[str, str], str] | None:
    """The suite's ``sampling_unit(case_id, category) -> unit id`` when it declares one (cases that must be drawn
    together); from the id and category alone, so that the case index draws the same sample as the loaded suite."""
    function = getattr(benchmark, "sampling_unit", None)
    return function if callable(function) else None
