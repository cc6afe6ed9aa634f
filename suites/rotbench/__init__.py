"""Suite rotbench: RoTBench (TS / PI / CF under noise) (see suite.yaml)."""
