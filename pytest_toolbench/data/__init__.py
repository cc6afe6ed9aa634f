"""The benchmarks' upstream data: finding a suite's folder, verifying it against ``suite.yaml``'s sums, downloading
pinned files, Git LFS and overlays. Imports the contract and the suite definitions only."""
