"""One scorer module per benchmark: pure functions implementing the Benchmark protocol."""
