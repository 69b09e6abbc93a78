"""Running benchmarks: the registry, the child process and its JSON-lines protocol, the parent that
watches it, suites, the max-batch search and a Qt-free run queue with per-run status."""
