"""Statistics in one room: every method of docs/statistics.md's table, once, as a pure function (no pytest, nothing
of ``report/`` or ``run/``; of the package only ``contract/``). ``report/`` (gates, comparisons, the leaderboard, the
profile) and ``run/`` use them; docs/adding-a-statistic.md says where a new one goes.

- ``distributions``: normal and t quantiles, log binomial coefficients, binomial and hypergeometric tails
- ``intervals``: Wilson (also at an effective sample size), t, stratified t, Newcombe, hypergeometric, MOVER
- ``mcnemar``, ``sign_flip``, ``swap``: the paired tests
- ``multiplicity``: Holm, Bonferroni, Westfall-Young, the simultaneous confidence; ``power``: mde80 and power
- ``bootstrap``: the stratified cluster bootstrap and the cluster sign-flip test
- ``sampling``: the stratified keyed-hash sample; ``estimation`` (``estimate``, ``strata``, ``ratio``): a sampled
  run's figures as design-based estimates of the full benchmark's
- ``pass_k``: pass@1, the pass^k curve, flaky cases
"""
