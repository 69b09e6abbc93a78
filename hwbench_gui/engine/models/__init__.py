"""Model benchmarks' code: model specs and parameters (``common``), data loaders (``data``), the
PyTorch and TensorFlow measurements, U-Net, and the multi-GPU launch."""
