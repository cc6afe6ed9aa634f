"""The exact McNemar test of a paired count (pure functions): the discordant pairs split as a fair coin under "no
change" (McNemar 1947; the exact binomial form, Fagerland, Lydersen & Laake 2013). Its interval is Newcombe's
(:func:`.intervals.newcombe_paired_interval`)."""

from __future__ import annotations

from .distributions import binomial_two_sided_half, binomial_upper_half


def mcnemar_exact_p(flipped_to_pass: int, flipped_to_fail: int) -> float:
    """Exact McNemar, two-sided: the discordant pairs split as a fair coin under "no change"."""
    return binomial_two_sided_half(flipped_to_pass, flipped_to_pass + flipped_to_fail)


def mcnemar_one_sided_p(worse: int, better: int) -> float:
    """Exact McNemar, one-sided: P(at least ``worse`` of the ``worse + better`` discordant pairs lean the worse
    way) under "no change"."""
    return binomial_upper_half(worse, worse + better)
