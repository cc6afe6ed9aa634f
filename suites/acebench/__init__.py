"""Suite acebench: ACEBench (Normal / Special / Agent, en + zh) (see suite.yaml)."""
