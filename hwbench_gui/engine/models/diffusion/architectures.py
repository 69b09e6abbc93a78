"""The diffusion models diffusion.infer builds, declared once: each denoiser's, VAE's and text encoder's config as
its public release publishes it (diffusers' and transformers' ``config.json`` keys), so the field's own model
classes build them random-initialised without a download.

SDXL base 1.0: UNet2DConditionModel (2.57 B parameters), two CLIP text encoders (ViT-L/14's and OpenCLIP
ViT-bigG/14's), the SDXL VAE; classifier-free guidance runs the UNet on a batch of 2 per image. Flux.1-dev:
FluxTransformer2DModel (an MMDiT of 11.9 B: 19 double-stream and 38 single-stream blocks), T5-XXL's encoder and
CLIP ViT-L/14's, a 16-channel VAE; guidance is distilled into the model (one pass per image, a guidance input).
The ``tiny`` ones keep every kind of layer at a few thousand parameters for tests and CPUs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hwbench_gui.engine.spec.benchmark import ParamError

UNET, MMDIT = "unet", "mmdit"
CLIP, CLIP_PROJECTED, T5 = "clip", "clip-projected", "t5"


@dataclass(frozen=True)
class Encoder:
    """A text encoder: ``kind`` (CLIP text model, CLIP with its projection, T5's encoder), its transformers
    config and the tokens it reads per prompt."""

    name: str
    kind: str
    config: dict[str, Any]
    tokens: int


@dataclass(frozen=True)
class Architecture:
    name: str
    kind: str  # UNET or MMDIT
    denoiser: dict[str, Any]
    vae: dict[str, Any]
    encoders: tuple[Encoder, ...]
    #: Images are ``vae_scale`` times the latents' side (three 2× upsamplings of the VAE decoder).
    vae_scale: int = 8
    #: Classifier-free guidance: the denoiser sees the prompt and the empty prompt, a batch of 2 per image.
    cfg: bool = True
    default_size: int = 1024
    #: The hidden width the denoiser reads the prompt in (the encoders' outputs as the pipeline joins them).
    prompt_width: int = 0
    pooled_width: int = 0
    source: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def latent_channels(self) -> int:
        return int(self.vae["latent_channels"])

    @property
    def passes_per_image(self) -> int:
        return 2 if self.cfg else 1

    @property
    def prompt_tokens(self) -> int:
        """Positions of the prompt the denoiser attends to (the first encoder's length where two are joined)."""
        return max(e.tokens for e in self.encoders if e.kind != CLIP or self.kind == UNET)


def _vae(block_out: list[int], latent_channels: int, scaling: float, **extra: Any) -> dict[str, Any]:
    layers = len(block_out)
    return {"act_fn": "silu", "block_out_channels": block_out, "in_channels": 3, "out_channels": 3,
            "down_block_types": ["DownEncoderBlock2D"] * layers, "up_block_types": ["UpDecoderBlock2D"] * layers,
            "latent_channels": latent_channels, "layers_per_block": 2, "norm_num_groups": 32,
            "scaling_factor": scaling, **extra}


def _clip(hidden: int, layers: int, heads: int, act: str, projection: int | None = None) -> dict[str, Any]:
    config = {"hidden_size": hidden, "intermediate_size": 4 * hidden, "num_hidden_layers": layers,
              "num_attention_heads": heads, "max_position_embeddings": 77, "vocab_size": 49408, "hidden_act": act}
    if projection:
        config["projection_dim"] = projection
    return config


SDXL_UNET = {
    "act_fn": "silu", "addition_embed_type": "text_time", "addition_embed_type_num_heads": 64,
    "addition_time_embed_dim": 256, "attention_head_dim": [5, 10, 20], "block_out_channels": [320, 640, 1280],
    "cross_attention_dim": 2048, "down_block_types": ["DownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D"],
    "flip_sin_to_cos": True, "freq_shift": 0, "in_channels": 4, "layers_per_block": 2,
    "mid_block_type": "UNetMidBlock2DCrossAttn", "norm_eps": 1e-5, "norm_num_groups": 32, "out_channels": 4,
    "projection_class_embeddings_input_dim": 2816, "sample_size": 128, "transformer_layers_per_block": [1, 2, 10],
    "up_block_types": ["CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "UpBlock2D"], "use_linear_projection": True,
}

FLUX_DEV = {
    "attention_head_dim": 128, "guidance_embeds": True, "in_channels": 64, "joint_attention_dim": 4096,
    "num_attention_heads": 24, "num_layers": 19, "num_single_layers": 38, "patch_size": 1,
    "pooled_projection_dim": 768, "axes_dims_rope": [16, 56, 56],
}

#: The tiny encoders' vocabulary, with CLIP's begin and end tokens inside it.
TINY_VOCAB = {"vocab_size": 1000, "bos_token_id": 1, "eos_token_id": 2}

T5_XXL = {"d_model": 4096, "d_ff": 10240, "d_kv": 64, "num_heads": 64, "num_layers": 24, "vocab_size": 32128,
          "feed_forward_proj": "gated-gelu", "relative_attention_num_buckets": 32, "dense_act_fn": "gelu_new",
          "is_gated_act": True}

BUILT_IN: dict[str, Architecture] = {a.name: a for a in (
    Architecture(
        "sdxl", UNET, SDXL_UNET, _vae([128, 256, 512, 512], 4, 0.13025),
        (Encoder("CLIP ViT-L/14", CLIP, _clip(768, 12, 12, "quick_gelu"), 77),
         Encoder("OpenCLIP ViT-bigG/14", CLIP_PROJECTED, _clip(1280, 32, 20, "gelu", 1280), 77)),
        prompt_width=2048, pooled_width=1280,
        source="stabilityai/stable-diffusion-xl-base-1.0 (unet, vae, text_encoder, text_encoder_2 config.json)"),
    Architecture(
        "flux-dev", MMDIT, FLUX_DEV,
        _vae([128, 256, 512, 512], 16, 0.3611, shift_factor=0.1159, use_quant_conv=False, use_post_quant_conv=False),
        (Encoder("T5-XXL encoder", T5, T5_XXL, 512), Encoder("CLIP ViT-L/14", CLIP, _clip(768, 12, 12, "quick_gelu"),
                                                            77)),
        cfg=False, prompt_width=4096, pooled_width=768,
        source="black-forest-labs/FLUX.1-dev (transformer, vae, text_encoder, text_encoder_2 config.json)",
        notes=("guidance-distilled: one pass per image with a guidance input, no classifier-free batch of 2",)),
    Architecture(
        "tiny", UNET,
        {**SDXL_UNET, "attention_head_dim": [2, 4], "block_out_channels": [32, 64], "cross_attention_dim": 32,
         "down_block_types": ["DownBlock2D", "CrossAttnDownBlock2D"], "layers_per_block": 1,
         "addition_time_embed_dim": 8, "projection_class_embeddings_input_dim": 32 + 6 * 8, "sample_size": 8,
         "norm_num_groups": 8, "transformer_layers_per_block": [1, 1],
         "up_block_types": ["CrossAttnUpBlock2D", "UpBlock2D"]},
        _vae([16, 32], 4, 0.13025, norm_num_groups=8),
        (Encoder("tiny CLIP", CLIP, {**_clip(16, 2, 2, "quick_gelu"), "max_position_embeddings": 16,
                                     **TINY_VOCAB}, 16),
         Encoder("tiny CLIP (projected)", CLIP_PROJECTED, {**_clip(16, 2, 2, "gelu", 32), "max_position_embeddings": 16,
                                                          **TINY_VOCAB}, 16)),
        vae_scale=2, default_size=64, prompt_width=32, pooled_width=32,
        source="SDXL's layer kinds at a few channels (hwbench's own, for tests and CPUs)"),
    Architecture(
        "tiny-mmdit", MMDIT,
        {**FLUX_DEV, "attention_head_dim": 16, "joint_attention_dim": 32, "num_attention_heads": 2, "num_layers": 1,
         "num_single_layers": 1, "pooled_projection_dim": 16, "axes_dims_rope": [4, 6, 6], "in_channels": 16},
        _vae([16, 32], 4, 0.3611, shift_factor=0.1159, norm_num_groups=8, use_quant_conv=False,
             use_post_quant_conv=False),
        (Encoder("tiny T5", T5, {**T5_XXL, "d_model": 32, "d_ff": 64, "d_kv": 16, "num_heads": 2, "num_layers": 2,
                                 "vocab_size": 1000}, 16),
         Encoder("tiny CLIP", CLIP, {**_clip(16, 2, 2, "quick_gelu"), "max_position_embeddings": 16,
                                     **TINY_VOCAB}, 16)),
        cfg=False, vae_scale=2, default_size=64, prompt_width=32, pooled_width=16,
        source="Flux's layer kinds at a few channels (hwbench's own, for tests and CPUs)"),
)}


def resolve(name: str) -> Architecture:
    try:
        return BUILT_IN[name]
    except KeyError:
        raise ParamError(f"model: {name!r} is not one of {', '.join(BUILT_IN)}") from None
