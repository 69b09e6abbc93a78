"""The data-path bottleneck analyzer: stage rates (``stages``), verdict and advice (``verdict``), the
image folder it reads (``dataset``). The benchmark itself is ``engine/benchmarks/datapath_analyze.py``."""
