"""The TensorFlow / Keras side of the model benchmarks.

Keras 3 models (``keras.applications`` ResNet50 and VGG16 with ``weights=None``, the Keras U-Net of
:mod:`~hwbench_gui.engine.models.unet`, the Keras Faster R-CNN R50-FPN of
:mod:`~hwbench_gui.engine.models.keras_fasterrcnn`) trained with a ``tf.function`` step (optionally XLA
``jit_compile``) under a ``tf.distribute`` strategy: the default one on one device,
``MirroredStrategy`` on several GPUs. TensorFlow never takes all VRAM: memory growth is switched on
before any GPU is touched. TensorFlow is imported inside the functions (the runner's child process
is the only place it loads).
"""

from __future__ import annotations

import math
import os
import time
from typing import Any, Callable

from hwbench_gui.engine.models import data as model_data
from hwbench_gui.engine.models.common import (
    LATENCY_STEPS_MAX,
    SYNTHETIC_CLASSES,
    ModelSpec,
    OutOfMemoryError,
    StepProgress,
    TimedRun,
    default_batch,
    oom_message,
    time_windows,
)
from hwbench_gui.engine.spec.benchmark import BenchmarkUnavailable, Reporter
from hwbench_gui.engine.spec.device import split_device
from hwbench_gui.engine.spec.precision import apply_keras, from_key

SGD_LR = 1e-3
SGD_MOMENTUM = 0.9
LATENCY_WARMUP = 3

#: What the TensorFlow Faster R-CNN is, in every result that measured it.
FASTERRCNN_TF_NOTE = ("Keras implementation of the torchvision architecture (fasterrcnn_resnet50_fpn), built in "
                      "hwbench: no maintained TensorFlow Faster R-CNN installs beside TensorFlow 2.21 (the Model "
                      "Garden pins TF 2.20, KerasHub has none); not a published TensorFlow model")

_OOM_TEXT = ("out of memory", "resource exhausted", "dst tensor is not initialized")


def import_tf() -> Any:
    """TensorFlow with its C++ info logs quietened (they would fill the run's log)."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf

    return tf


def select_devices(tf: Any, kind: str, index: int, count: int) -> list[Any]:
    """Memory growth on every GPU, then only GPUs ``index .. index+count-1`` visible (for the CPU: no
    GPU, and ``count`` logical CPU devices). Must run before TensorFlow touches a device."""
    gpus = tf.config.list_physical_devices("GPU")
    for gpu in gpus:
        tf.config.experimental.set_memory_growth(gpu, True)
    if kind == "cpu":
        tf.config.set_visible_devices([], "GPU")
        if count > 1:  # several logical CPU devices let MirroredStrategy run (and be tested) without GPUs
            cpu = tf.config.list_physical_devices("CPU")[0]
            tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * count)
        return []
    if not gpus:
        why = "built with CUDA; no driver or no visible GPU" if tf.test.is_built_with_cuda() else "a build without CUDA"
        raise BenchmarkUnavailable(f"TensorFlow {tf.__version__} sees no GPU ({why}); use device=cpu")
    if index + count > len(gpus):
        raise BenchmarkUnavailable(f"GPUs {index}..{index + count - 1} asked for; TensorFlow sees {len(gpus)}")
    chosen = gpus[index:index + count]
    tf.config.set_visible_devices(chosen, "GPU")
    return chosen


def build_model(spec: ModelSpec, num_classes: int, size: int) -> Any:
    import keras

    if spec.key == "resnet50":
        return keras.applications.ResNet50(weights=None, input_shape=(size, size, 3), classes=num_classes,
                                           classifier_activation=None)
    if spec.key == "vgg16":
        return keras.applications.VGG16(weights=None, input_shape=(size, size, 3), classes=num_classes,
                                        classifier_activation=None)
    if spec.key == "unet":
        from hwbench_gui.engine.models.unet import keras_unet

        if size % 16:
            raise BenchmarkUnavailable(f"U-Net needs an image size that is a multiple of 16, not {size}")
        return keras_unet(num_classes, size)
    if spec.key == "fasterrcnn":
        from hwbench_gui.engine.models import keras_fasterrcnn

        try:
            return keras_fasterrcnn.build(num_classes, size)
        except ValueError as exc:
            raise BenchmarkUnavailable(str(exc)) from None
    raise ValueError(f"unknown model {spec.key!r}")


def _is_oom(tf: Any, exc: BaseException) -> bool:
    if isinstance(exc, tf.errors.ResourceExhaustedError):
        return True
    return isinstance(exc, tf.errors.OpError) and any(t in str(exc).lower() for t in _OOM_TEXT)


def _total_memory_bytes(index: int) -> float | None:
    from hwbench_gui.engine import nvml

    info = nvml.query("nvmlDeviceGetMemoryInfo", nvml.handle(index)) if nvml.device_count() > index else None
    return float(info.total) if info is not None else None


def measure(spec: ModelSpec, params: dict[str, Any], reporter: Reporter, *, replicas: int = 1,
            tf_module: Any = None) -> tuple[TimedRun, dict[str, Any], str]:
    """Warm-up and timed steps on ``replicas`` GPUs (MirroredStrategy when more than one).

    ``select_devices`` must have been called (``tf_module`` is the imported TensorFlow then).
    Raises :class:`OutOfMemoryError` on a TensorFlow out-of-memory error.
    """
    tf = tf_module or import_tf()
    kind, index = split_device(params["device"])
    logical = tf.config.list_logical_devices("GPU" if kind == "cuda" else "CPU")
    if kind == "cuda":
        tf.config.experimental.reset_memory_stats("GPU:0")
    try:
        return _measure(tf, spec, params, reporter, replicas, kind, index, logical)
    except tf.errors.OpError as exc:
        if not _is_oom(tf, exc):
            raise
        if kind != "cuda":
            raise MemoryError(f"TensorFlow ran out of host memory at batch {params['batch']}: {exc.message[:200]}") \
                from None
    peak = tf.config.experimental.get_memory_info("GPU:0")["peak"]
    raise OutOfMemoryError(oom_message(params["batch"], peak, _total_memory_bytes(index)))


def _measure(tf: Any, spec: ModelSpec, params: dict[str, Any], reporter: Reporter, replicas: int, kind: str,
             index: int, logical: list[Any]) -> tuple[TimedRun, dict[str, Any], str]:
    import keras

    precision = from_key(params["precision"])
    batch = params["batch"] or default_batch(spec, kind)
    size, train = params["image_size"], params["mode"] == "train"
    keras.backend.clear_session()  # first: clear_session also resets the global dtype policy
    policy = apply_keras(precision)
    detect = spec.task == "detect"
    strategy, jit, warnings = _strategy(tf, spec, params, replicas, logical)
    global_batch = batch * replicas

    data = params["data"]
    if data == "synthetic":
        num_classes = SYNTHETIC_CLASSES[spec.task]
    else:
        num_classes = (len(model_data.image_folder_items(data)[1]) if spec.task == "classify"
                       else SYNTHETIC_CLASSES[spec.task])
    num_classes = max(2, num_classes)

    with strategy.scope():
        model = build_model(spec, num_classes, size)
        optimizer = keras.optimizers.SGD(learning_rate=SGD_LR, momentum=SGD_MOMENTUM)
        if precision.loss_scaling:
            optimizer = keras.optimizers.LossScaleOptimizer(optimizer)
        if train:
            optimizer.build(model.trainable_variables)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction=None)

    def replica_train(x, *targets):
        with tf.GradientTape() as tape:
            if detect:  # torchvision's four losses, each a mean over this replica's batch
                loss = tf.add_n(list(model.losses_for(x, *targets).values())) / strategy.num_replicas_in_sync
            else:
                per_pixel = loss_fn(targets[0], model(x, training=True))
                per_image = tf.reduce_mean(tf.reshape(per_pixel, (tf.shape(per_pixel)[0], -1)), axis=1)
                loss = tf.nn.compute_average_loss(per_image, global_batch_size=global_batch)
            scaled = optimizer.scale_loss(loss) if precision.loss_scaling else loss
        grads = tape.gradient(scaled, model.trainable_variables)
        optimizer.apply(grads, model.trainable_variables)
        return loss

    def replica_infer(x):
        if detect:
            return tf.reduce_sum(model.detect(x)[1])  # the detections' scores
        return tf.reduce_sum(tf.cast(model(x, training=False), tf.float32))

    replica_fn = tf.function(replica_train if train else replica_infer, jit_compile=jit)

    @tf.function
    def step(batch_values):
        out = strategy.run(replica_fn, args=batch_values if train else batch_values[:1])
        return strategy.reduce(tf.distribute.ReduceOp.SUM, out, axis=None)

    def synthetic(_context=None):
        if detect:
            from hwbench_gui.engine.models.keras_fasterrcnn import synthetic_batch

            return synthetic_batch(tf, batch, size, num_classes)
        x = tf.random.normal((batch, size, size, 3))
        shape = (batch, size, size) if spec.task == "segment" else (batch,)
        return x, tf.random.uniform(shape, 0, num_classes, dtype=tf.int32)

    stream = None
    if data == "synthetic":
        if replicas > 1:
            fixed = strategy.experimental_distribute_values_from_function(synthetic)
        else:
            with tf.device("/GPU:0" if kind == "cuda" else "/CPU:0"):
                fixed = synthetic()
        next_batch = lambda: fixed  # noqa: E731
    else:
        dataset = model_data.tf_dataset(spec.task, data, size, global_batch, params["workers"])
        if replicas > 1:
            dataset = strategy.experimental_distribute_dataset(dataset)
        stream = model_data.BatchStream(dataset)
        next_batch = stream.next

    progress = StepProgress(reporter, params, on_gpu=kind == "cuda")
    first_step_s, warmup_s = _warm_up(step, next_batch, params["warmup"], jit, reporter, progress)
    last_value: list[float | None] = [None]

    def run_steps(n: int) -> tuple[float, list[float], float]:
        wait_before = stream.wait_s if stream is not None else 0.0
        step_s: list[float] = []
        start = last = time.perf_counter()
        for _ in range(n):
            last_value[0] = float(step(next_batch()))  # fetching the scalar waits for the step
            now = time.perf_counter()
            step_s.append(now - last)
            last = now
            progress.step()
        return time.perf_counter() - start, step_s, (stream.wait_s - wait_before) if stream is not None else 0.0

    windows = time_windows(run_steps, params, reporter, on_gpu=kind == "cuda", progress=progress)
    step_s, total_s, data_wait_s = windows.step_s, sum(windows.window_s), windows.data_wait_s
    steps = sum(windows.window_steps)
    value = last_value[0]

    latency = [] if train else _latency_b1(tf, replica_infer, jit, strategy, replicas, next_batch, steps, reporter)

    run = TimedRun(batch=batch, steps=steps, total_s=total_s, step_s=step_s, data_wait_s=data_wait_s,
                   warmup_s=warmup_s, first_step_s=first_step_s, latency_b1_s=latency,
                   final_loss=value if train else None, window_s=windows.window_s,
                   window_steps=windows.window_steps)
    if windows.calibration:
        run.extra["calibration"] = windows.calibration
    if replicas > 1:
        run.extra["replicas"] = replicas
    where = _record_memory(tf, run, kind, replicas, index)
    return run, _details(tf, spec, model, policy, jit, num_classes, strategy, replicas, warnings, train), where


def _details(tf: Any, spec: ModelSpec, model: Any, policy: str, jit: bool, num_classes: int, strategy: Any,
             replicas: int, warnings: list[str], train: bool) -> dict[str, Any]:
    """What the result document's details say about how the step ran (versions, precision policy, model)."""
    import keras

    build = tf.sysconfig.get_build_info()
    details = {"tensorflow": tf.__version__, "keras": keras.__version__, "cuda_build": build.get("cuda_version"),
               "cudnn_build": build.get("cudnn_version"), "keras_policy": policy,
               "model_dtype_policy": model.dtype_policy.name,
               "tensor_float_32_execution": tf.config.experimental.tensor_float_32_execution_enabled(),
               "jit_compile": jit, "num_classes": num_classes, "source": spec.tf_source,
               "strategy": type(strategy).__name__, "replicas": replicas, "warnings": warnings,
               "optimizer": f"SGD lr {SGD_LR} momentum {SGD_MOMENTUM}" if train else None,
               "memory_growth": True,
               "trainable_parameters": sum(int(math.prod(v.shape)) for v in model.trainable_variables)}
    if spec.task == "detect":
        details["implementation"] = FASTERRCNN_TF_NOTE
    return details


def _warm_up(step: Callable[[Any], Any], next_batch: Callable[[], Any], warmup: int, jit: bool, reporter: Reporter,
             progress: StepProgress) -> tuple[float | None, float | None]:
    """``warmup`` untimed steps: (the first step's seconds, XLA compilation included; the warm-up's seconds)."""
    reporter.progress(0.0, f"warm-up ({warmup} steps{', XLA compiling' if jit else ''})")
    first_step_s = None
    reporter.phase("warmup", "start")
    t0 = time.perf_counter()
    for i in range(warmup):
        float(step(next_batch()))  # fetching the scalar waits for the step
        if i == 0:
            first_step_s = time.perf_counter() - t0
        progress.step()
    warmup_s = time.perf_counter() - t0 if warmup else None
    reporter.phase("warmup", "end")
    return first_step_s, warmup_s


def _strategy(tf: Any, spec: ModelSpec, params: dict[str, Any], replicas: int,
              logical: list[Any]) -> tuple[Any, bool, list[str]]:
    """(the distribution strategy, whether the step compiles with XLA, why XLA is off where it was asked)."""
    jit = bool(params["compile"])
    warnings: list[str] = []
    detect = spec.task == "detect"
    if detect and jit:
        jit = False  # dynamic_partition and NMS have no XLA kernels
        warnings.append("compile (XLA) is off for Faster R-CNN: its RoI level split and NMS do not compile with XLA")
    if detect and params["data"] != "synthetic":
        raise BenchmarkUnavailable("the TensorFlow Faster R-CNN reads synthetic data only (framework=torch reads a "
                                   "Pascal VOC folder)")
    if replicas > 1:
        strategy = tf.distribute.MirroredStrategy([d.name for d in logical[:replicas]])
        if jit:
            jit = False
            warnings.append("compile (XLA) is off under MirroredStrategy: Keras does not combine jit_compile "
                            "with tf.distribute")
    else:
        strategy = tf.distribute.get_strategy()
    return strategy, jit, warnings


def _latency_b1(tf: Any, replica_infer: Callable[[Any], Any], jit: bool, strategy: Any, replicas: int,
                next_batch: Callable[[], Any], steps: int, reporter: Reporter) -> list[float]:
    """Seconds of each inference call on one image (of the first replica's batch), after the untimed ones."""
    reporter.progress(0.99, f"latency at batch 1 ({min(steps, LATENCY_STEPS_MAX)} calls)")
    one_fn = tf.function(replica_infer, jit_compile=jit)
    sample = next_batch()[0]
    if replicas > 1:
        sample = strategy.experimental_local_results(sample)[0]
    one = sample[:1]
    latency = []
    for i in range(LATENCY_WARMUP + min(steps, LATENCY_STEPS_MAX)):
        t = time.perf_counter()
        float(one_fn(one))
        if i >= LATENCY_WARMUP:
            latency.append(time.perf_counter() - t)
    return latency


def _record_memory(tf: Any, run: TimedRun, kind: str, replicas: int, index: int) -> str:
    """Each GPU's allocator peak into ``run``; returns where the run ran, in words."""
    if kind != "cuda":
        run.peak_reason = "peak memory is measured on GPUs only"
        return f"cpu ({os.cpu_count()} CPUs) via TensorFlow"
    peaks = [tf.config.experimental.get_memory_info(f"GPU:{i}")["peak"] for i in range(replicas)]
    run.peak_allocated_bytes = float(peaks[0])
    run.peak_reason = "TensorFlow reports its allocator's peak (reserved memory is not reported)"
    run.total_memory_bytes = _total_memory_bytes(index)
    run.extra["peak_allocated_gib_per_gpu"] = [p / (1 << 30) for p in peaks]
    details_name = tf.config.experimental.get_device_details(tf.config.list_physical_devices("GPU")[0])
    return f"cuda:{index} ({details_name.get('device_name', 'GPU')}) via TensorFlow"


def method_text(params: dict[str, Any], task: str = "classify") -> str:
    text = ("TensorFlow/Keras: one tf.function step per batch (XLA jit_compile when compile=true), run through "
            "strategy.run; each step ends by fetching its scalar loss (training) or output sum (inference), so "
            "per-step times are wall times between fetches. FP32 = enable_tensor_float_32_execution(False); TF32 "
            "= True (TensorFlow's default); AMP = Keras mixed_float16 / mixed_bfloat16 policies (LossScaleOptimizer "
            "with FP16). Memory growth on: TensorFlow does not pre-allocate all VRAM.")
    if params["mode"] == "infer":
        text += f" Latency at batch 1: each call fetched, after {LATENCY_WARMUP} warm-up calls."
    if task == "detect":
        text += f" Faster R-CNN: {FASTERRCNN_TF_NOTE}."
    if params["data"] != "synthetic":
        text += (" Data: tf.data (parallel map decoding, prefetch AUTOTUNE); the time spent waiting for the next "
                 "batch is data_wait_s.")
    return text
