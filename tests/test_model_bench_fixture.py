"""A benchmark for test_model_bench.py that drives model_torch.measure into a CUDA out-of-memory error
without a GPU: the child patches torch.cuda so measure() takes its CUDA path, and the model step
raises torch.cuda.OutOfMemoryError as PyTorch's caching allocator does. No tests in this file."""

from __future__ import annotations

from types import SimpleNamespace

from hwbench_gui.engine.models.common import MODELS, model_params
from hwbench_gui.engine.spec.benchmark import Benchmark

PEAK_BYTES = 130 * (1 << 30)
TOTAL_BYTES = int(139.8 * (1 << 30))


def _raise_cuda_oom(params, reporter):
    import torch

    from hwbench_gui.engine.models import torch_measure as model_torch

    def step(*args, **kwargs):
        raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 12.00 GiB. GPU 0 has a total "
                                          "capacity of 139.80 GiB of which 1.2 GiB is free.")

    torch.cuda.is_available = lambda: True
    torch.cuda.device_count = lambda: 1
    torch.cuda.set_device = lambda device: None
    torch.cuda.reset_peak_memory_stats = lambda device=None: None
    torch.cuda.max_memory_reserved = lambda device=None: PEAK_BYTES
    torch.cuda.get_device_properties = lambda device=None: SimpleNamespace(total_memory=TOTAL_BYTES)
    torch.cuda.empty_cache = lambda: None
    model_torch._measure = step
    return model_torch.measure(MODELS["resnet50"], params, reporter)


BENCHMARKS = [
    Benchmark(id="test.model_oom", title="CUDA OOM inside model_torch.measure", category="test",
              description="raises torch.cuda.OutOfMemoryError in the model step",
              params=model_params(MODELS["resnet50"]), run=_raise_cuda_oom),
]
