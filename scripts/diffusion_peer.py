"""The peers diffusion.infer is held against: the same diffusers model (built from hwbench's declaration of the
public config, random-initialised) called the way diffusers' pipeline calls it, at two settings:

- ``default``: what a user gets from the pipeline as its documentation loads it: SDXL in FP16
  (``StableDiffusionXLPipeline.from_pretrained(..., torch_dtype=torch.float16)``, whose VAE is upcast to FP32 for
  the decode: the SDXL VAE's ``force_upcast``), Flux in BF16 (``FluxPipeline ... torch_dtype=torch.bfloat16``);
  eager, diffusers' default SDPA attention processors, no fused projections, contiguous memory.
- ``fast``: diffusers' documented speed-up ("Accelerate inference of text-to-image diffusion models"): BF16,
  ``fuse_qkv_projections()``, the UNet in channels-last, Inductor's ``conv_1x1_as_mm``,
  ``coordinate_descent_tuning``, ``epilogue_fusion = False`` and ``coordinate_descent_check_all_directions``, and
  ``torch.compile(denoiser, mode="max-autotune", fullgraph=True)`` (``--compile-mode`` to change; the guide also
  compiles the VAE's decode, which this script leaves eager and says so).

Figures as hwbench's: seconds per denoising step (median and p5-p95 over windows after warm-up), each text encoder
and the VAE decode timed apart, images per minute at ``--steps`` steps = 60 × batch ÷ (encoders + steps × step +
VAE). The pipeline's scheduler step (a few elementwise operations on the latents) is not timed, as in hwbench.

    python3 scripts/diffusion_peer.py --model sdxl --variant default --out /tmp/peer.json        (GPU box)
    python3 scripts/diffusion_peer.py --model tiny --variant default --device cpu --out /tmp/p.json   (a check)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from hwbench_gui.engine.measure.stats import percentile  # noqa: E402
from hwbench_gui.engine.models.diffusion import build  # noqa: E402
from hwbench_gui.engine.models.diffusion.architectures import BUILT_IN, UNET  # noqa: E402

#: The dtype each model's pipeline is loaded in by its documentation.
DEFAULT_DTYPE = {"sdxl": "float16", "tiny": "float16", "flux-dev": "bfloat16", "tiny-mmdit": "bfloat16"}
#: The SDXL VAE's ``force_upcast``: the pipeline decodes in FP32 when the VAE is FP16.
UPCAST_VAE = {"sdxl", "tiny"}


def timed(torch, fn, count: int) -> float:
    cuda = torch.cuda.is_available()
    if cuda:
        torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(count):
        fn()
    if cuda:
        torch.cuda.synchronize()
    return (time.perf_counter() - start) / count


def fast_inductor(torch) -> list[str]:
    config = torch._inductor.config
    config.conv_1x1_as_mm = True
    config.coordinate_descent_tuning = True
    config.epilogue_fusion = False
    config.coordinate_descent_check_all_directions = True
    return ["inductor conv_1x1_as_mm, coordinate_descent_tuning, epilogue_fusion=False, "
            "coordinate_descent_check_all_directions"]


def denoiser_seconds(torch, args, arch, dtype, device, result) -> list[float]:
    model = build.denoiser(arch, device, dtype)
    inputs = build.denoiser_inputs(arch, args.batch, args.size, device, dtype)
    settings = ["SDPA attention (diffusers' default processors)"]
    call = model
    if args.variant == "fast":
        settings += fast_inductor(torch)
        model.fuse_qkv_projections()
        settings.append("fuse_qkv_projections()")
        if arch.kind == UNET:
            model.to(memory_format=torch.channels_last)
            inputs = build.channels_last_inputs(inputs)
            settings.append("channels-last")
        if device.type == "cuda":
            call = torch.compile(model, mode=args.compile_mode, fullgraph=True)
            settings.append(f"torch.compile(mode={args.compile_mode!r}, fullgraph=True)")
    result["settings"] = settings
    with torch.no_grad():
        start = time.perf_counter()
        timed(torch, lambda: build.step(call, inputs), 1)
        result["first_step_s"] = time.perf_counter() - start  # compilation included
        one = timed(torch, lambda: build.step(call, inputs), 2)
        per_window = max(1, min(50, int(args.window_s / one)))
        return [timed(torch, lambda: build.step(call, inputs), per_window) for _ in range(args.windows)]


def parts_seconds(torch, args, arch, dtype, device, result) -> tuple[dict[str, float], float]:
    encoders: dict[str, float] = {}
    if build.encoders_missing_reason():
        result["encoders_reason"] = build.encoders_missing_reason()
    else:
        for spec in arch.encoders:
            model = build.encoder(spec, device, dtype)
            ids = build.prompt_ids(spec, args.batch, device)
            with torch.no_grad():
                timed(torch, lambda: build.encode(model, spec, ids), 1)
                encoders[spec.name] = statistics.median(
                    timed(torch, lambda: build.encode(model, spec, ids), 1) for _ in range(3))
            del model
            torch.cuda.empty_cache() if device.type == "cuda" else None
    vae_dtype = torch.float32 if args.variant == "default" and args.model in UPCAST_VAE else dtype
    result["vae_dtype"] = str(vae_dtype).replace("torch.", "")
    vae = build.vae(arch, device, vae_dtype)
    z = build.latents(arch, args.batch, args.size, device, vae_dtype)
    with torch.no_grad():
        timed(torch, lambda: build.decode(vae, z), 1)
        vae_s = statistics.median(timed(torch, lambda: build.decode(vae, z), 1) for _ in range(3))
    return encoders, vae_s


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="sdxl", choices=tuple(BUILT_IN))
    parser.add_argument("--variant", default="default", choices=("default", "fast"))
    parser.add_argument("--size", type=int, default=0)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--windows", type=int, default=5)
    parser.add_argument("--window-s", type=float, default=0.5)
    parser.add_argument("--compile-mode", default="max-autotune")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    import diffusers
    import torch

    arch = BUILT_IN[args.model]
    args.size = args.size or arch.default_size
    device = torch.device(args.device)
    dtype = getattr(torch, DEFAULT_DTYPE[args.model] if args.variant == "default" else "bfloat16")
    result = {"peer": f"diffusers-{args.variant}", "model": args.model, "size": args.size, "steps": args.steps,
              "batch": args.batch, "dtype": str(dtype).replace("torch.", ""), "diffusers": diffusers.__version__,
              "torch": torch.__version__, "device": torch.cuda.get_device_name(device) if device.type == "cuda"
              else "cpu", "scheduler_step": "not timed (as in hwbench)"}
    torch.manual_seed(0)
    try:
        step_s = denoiser_seconds(torch, args, arch, dtype, device, result)
        torch.cuda.empty_cache() if device.type == "cuda" else None
        encoders, vae_s = parts_seconds(torch, args, arch, dtype, device, result)
        image_s = [sum(encoders.values()) + args.steps * s + vae_s for s in step_s]
        result.update({
            "step_s": step_s, "step_s_median": statistics.median(step_s),
            "step_s_p5_p95": [percentile(step_s, 5), percentile(step_s, 95)],
            "encoders_s": encoders, "vae_decode_s": vae_s, "vae_compiled": False,
            "images_per_minute": statistics.median(60 * args.batch / s for s in image_s),
            "status": "ok"})
    except Exception as exc:  # a peer that fails is recorded with its message, never hidden
        result.update({"status": "failed", "error": f"{type(exc).__name__}: {exc}",
                       "traceback": traceback.format_exc()[-4000:]})
    with open(args.out, "w") as fh:
        json.dump(result, fh, indent=1)
    print(json.dumps({k: v for k, v in result.items() if k not in ("traceback", "step_s")}))
    return 0 if result["status"] == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
