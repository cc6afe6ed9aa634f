"""The benchmark suites: one folder each (suite.yaml, a thin test module, samples, known defects)."""
