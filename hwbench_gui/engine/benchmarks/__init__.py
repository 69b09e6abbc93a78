"""One module per benchmark (family): each exports ``BENCHMARK`` or ``BENCHMARKS`` for the registry."""
