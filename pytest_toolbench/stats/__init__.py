"""Statistics in one room: every method of docs/statistics.md's table, once, as pure functions."""
