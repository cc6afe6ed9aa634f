"""τ²-bench's domains: each one's records (``models``), tools and environment factory."""
