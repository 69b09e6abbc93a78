"""Benchmarks that only tests register (through ``$HWBENCH_EXTRA_BENCHMARKS``).

``crashy`` exports several benchmarks as ``BENCHMARKS = [...]`` (the registry accepts that as
well as a single ``BENCHMARK``); each one ends a different way: ok, segfault, SIGKILL, hang past
its timeout, slow (to be cancelled) with a grandchild process, exception, garbage on stdout, a flood
of stderr lines, out of memory, unavailable. Their ids all start with ``test.``.
"""
