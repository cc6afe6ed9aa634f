"""Suite tau2bench: τ²-bench's environments and grading (see suite.yaml)."""
