"""Tools for working on mindprobe itself (not needed to run benchmarks)."""
