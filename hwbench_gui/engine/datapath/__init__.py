"""The data-path bottleneck analyzer: stage rates (``stages``), verdict and advice (``verdict``), the
image folder it reads (``dataset``), its auto parameters (``defaults``), the loader-fed training of one
configuration and the what-ifs within a budget (``end_to_end``, ``tryouts``, ``sampler``), decode and
augmentation on the device (``gpu_augment``). The benchmark itself is ``engine/benchmarks/datapath_analyze.py``."""
