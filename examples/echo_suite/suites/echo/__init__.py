"""Suite echo: the example suite (see suite.yaml and README.md)."""
