"""Benchmarks: declarations (``api``), the registry, the child-process runner and result documents."""
