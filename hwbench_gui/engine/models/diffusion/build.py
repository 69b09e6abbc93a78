"""diffusers' and transformers' own model classes built from :mod:`.architectures`' configs, random-initialised
in the run's dtype on the run's device, and called the way their pipelines call them.

Why the field's classes and not a re-implementation: the figure is meant to say what SDXL and Flux run at on this
machine, and diffusers' ``UNet2DConditionModel`` / ``FluxTransformer2DModel`` (with transformers' CLIP and T5) are
what ComfyUI-class tools and diffusers' pipelines execute; a copy would measure hwbench's code instead. torch,
diffusers and transformers are imported by the functions that need them.
"""

from __future__ import annotations

import contextlib
import importlib.util
from typing import Any, Iterator

from hwbench_gui.engine.models.diffusion.architectures import CLIP, CLIP_PROJECTED, MMDIT, UNET, Architecture, \
    Encoder

#: Flux packs 2×2 latent pixels into one token (its ``in_channels`` is 4 × the VAE's latent channels).
FLUX_PATCH = 2
#: The denoising timestep and Flux's guidance of the step built (a mid-schedule step; the speed does not depend on it).
TIMESTEP, FLUX_GUIDANCE = 500.0, 3.5


def missing_reason() -> str | None:
    """Why the models cannot be built here, or None (a cheap module lookup, nothing imported)."""
    for module, extra in (("torch", ""), ("diffusers", " (pip install 'hwbench[gen]')")):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed{extra}"
    return None


def encoders_missing_reason() -> str | None:
    if importlib.util.find_spec("transformers") is None:
        return "transformers is not installed, so the text encoders (CLIP, T5) were not built or timed"
    return None


@contextlib.contextmanager
def building(device: Any, dtype: Any) -> Iterator[None]:
    """Parameters made inside are made on ``device`` in ``dtype`` directly (no FP32 copy on the CPU first): an
    11.9 B model is built in its BF16 24 GB on the GPU, not 48 GB of FP32 host memory converted afterwards."""
    import torch

    before = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with torch.device(device):
            yield
    finally:
        torch.set_default_dtype(before)


def denoiser(arch: Architecture, device: Any, dtype: Any) -> Any:
    """The UNet or MMDiT, random-initialised (PyTorch's default initialisation), in eval mode."""
    from diffusers import FluxTransformer2DModel, UNet2DConditionModel

    cls = UNet2DConditionModel if arch.kind == UNET else FluxTransformer2DModel
    with building(device, dtype):
        return cls.from_config(dict(arch.denoiser)).eval()


def vae(arch: Architecture, device: Any, dtype: Any) -> Any:
    from diffusers import AutoencoderKL

    with building(device, dtype):
        return AutoencoderKL.from_config(dict(arch.vae)).eval()


def encoder(spec: Encoder, device: Any, dtype: Any) -> Any:
    """One text encoder from its transformers config (needs transformers)."""
    import transformers as tf

    if spec.kind == CLIP:
        cls, config = tf.CLIPTextModel, tf.CLIPTextConfig(**spec.config)
    elif spec.kind == CLIP_PROJECTED:
        cls, config = tf.CLIPTextModelWithProjection, tf.CLIPTextConfig(**spec.config)
    else:
        cls, config = tf.T5EncoderModel, tf.T5Config(**spec.config)
    config._attn_implementation = "sdpa"
    with building(device, dtype):
        return cls(config).eval()


def parameter_count(arch: Architecture, part: str = "denoiser") -> int:
    """Parameters of ``part`` ("denoiser", "vae" or an encoder's name), counted on PyTorch's meta device (shapes
    only, nothing allocated)."""
    import torch

    if part == "denoiser":
        model = denoiser(arch, "meta", torch.float32)
    elif part == "vae":
        model = vae(arch, "meta", torch.float32)
    else:
        model = encoder(next(e for e in arch.encoders if e.name == part), "meta", torch.float32)
    return sum(p.numel() for p in model.parameters())


def latent_side(arch: Architecture, size: int) -> int:
    return size // arch.vae_scale


def denoiser_inputs(arch: Architecture, images: int, size: int, device: Any, dtype: Any) -> dict[str, Any]:
    """The keyword arguments the pipeline passes to the denoiser at one step for ``images`` images of ``size``²
    pixels (with classifier-free guidance, prompt and empty prompt: twice the batch), random (never zeros)."""
    import torch

    n = images * arch.passes_per_image
    side = latent_side(arch, size)

    def randn(*shape: int) -> Any:
        return torch.randn(*shape, device=device, dtype=dtype)

    if arch.kind == UNET:
        return {"sample": randn(n, arch.latent_channels, side, side),
                "timestep": torch.tensor(TIMESTEP, device=device),
                "encoder_hidden_states": randn(n, arch.prompt_tokens, arch.prompt_width),
                "added_cond_kwargs": {"text_embeds": randn(n, arch.pooled_width),
                                      "time_ids": torch.tensor([size, size, 0, 0, size, size], device=device,
                                                               dtype=dtype).repeat(n, 1)},
                "return_dict": False}
    if arch.kind != MMDIT:
        raise ValueError(f"unknown denoiser kind {arch.kind!r}")
    grid = side // FLUX_PATCH
    image_ids = torch.zeros(grid, grid, 3, device=device, dtype=dtype)
    image_ids[..., 1] = torch.arange(grid, device=device, dtype=dtype)[:, None]
    image_ids[..., 2] = torch.arange(grid, device=device, dtype=dtype)[None, :]
    return {"hidden_states": randn(n, grid * grid, int(arch.denoiser["in_channels"])),
            "timestep": torch.full((n,), TIMESTEP / 1000, device=device, dtype=dtype),
            "guidance": torch.full((n,), FLUX_GUIDANCE, device=device, dtype=dtype)
            if arch.denoiser.get("guidance_embeds") else None,
            "pooled_projections": randn(n, arch.pooled_width),
            "encoder_hidden_states": randn(n, arch.prompt_tokens, arch.prompt_width),
            "txt_ids": torch.zeros(arch.prompt_tokens, 3, device=device, dtype=dtype),
            "img_ids": image_ids.reshape(grid * grid, 3), "return_dict": False}


def channels_last_inputs(inputs: dict[str, Any]) -> dict[str, Any]:
    """``inputs`` with the UNet's 4-D latents in channels-last memory (read by a channels-last UNet as they are)."""
    import torch

    sample = inputs.get("sample")
    if sample is None:
        return inputs
    return {**inputs, "sample": sample.contiguous(memory_format=torch.channels_last)}


def step(model: Any, inputs: dict[str, Any]) -> Any:
    """One denoising step's model call, as the pipeline makes it (its noise prediction)."""
    return model(**inputs)[0]


def latents(arch: Architecture, images: int, size: int, device: Any, dtype: Any) -> Any:
    """The VAE's input at the end of the loop: ``images`` latents of ``size``² pixels, unscaled as the pipeline
    unscales them (÷ scaling factor, + shift where the VAE has one)."""
    import torch

    side = latent_side(arch, size)
    z = torch.randn(images, arch.latent_channels, side, side, device=device, dtype=dtype)
    return z / float(arch.vae["scaling_factor"]) + float(arch.vae.get("shift_factor") or 0.0)


def decode(model: Any, z: Any) -> Any:
    return model.decode(z, return_dict=False)[0]


def prompt_ids(spec: Encoder, images: int, device: Any) -> Any:
    """Random token ids (one prompt per image) at the encoder's full length, as the pipelines pad them."""
    import torch

    vocab = int(spec.config["vocab_size"])
    return torch.randint(1, vocab - 1, (images, spec.tokens), device=device)


def encode(model: Any, spec: Encoder, ids: Any) -> Any:
    """The encoder's pass as the pipeline makes it: SDXL reads CLIP's penultimate hidden state, so it asks for every
    hidden state; T5 and Flux's CLIP give their last (or pooled) output."""
    if spec.kind in (CLIP, CLIP_PROJECTED):
        return model(ids, output_hidden_states=True)
    return model(ids)[0]


def fast_settings(model: Any, arch: Architecture) -> list[str]:
    """What a careful engineer sets before running the denoiser, applied to ``model``; returns what was set.
    diffusers' own switches (its "speed up inference" guide): the attention's query, key and value projections
    fused into one matmul, a UNet's activations in channels-last memory (cuDNN's NHWC convolutions); attention
    already runs through PyTorch's SDPA (diffusers' default processors)."""
    import torch

    done = []
    model.fuse_qkv_projections()
    done.append("fused QKV projections (fuse_qkv_projections)")
    if arch.kind == UNET:
        model.to(memory_format=torch.channels_last)
        done.append("channels-last")
    done.append("SDPA attention (diffusers' default processors)")
    return done


#: An FP8 matmul's sides must be multiples of 16 (torch._scaled_mm's requirement).
FP8_ALIGN = 16


def fp8_linears(model: Any) -> int:
    """Every ``nn.Linear`` of ``model`` whose sides ``_scaled_mm`` accepts becomes an FP8-weight layer (per output
    channel scales, activations quantised per token: :class:`..llm.fp8.Fp8Linear`); convolutions, norms and
    attention stay BF16. Returns how many were replaced."""
    import torch

    from hwbench_gui.engine.models.llm.fp8 import Fp8Linear

    swapped = 0
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if not isinstance(child, torch.nn.Linear) or child.in_features % FP8_ALIGN or \
                    child.out_features % FP8_ALIGN:
                continue
            layer = Fp8Linear(child.in_features, child.out_features, child.bias is not None,
                              device=child.weight.device)
            layer.set_weight(child.weight)
            if child.bias is not None:
                with torch.no_grad():
                    layer.bias.copy_(child.bias)
            setattr(parent, name, layer)
            swapped += 1
    return swapped
