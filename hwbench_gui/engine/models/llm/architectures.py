"""Decoder-only architectures, declared once, and a user's Hugging Face ``config.json`` read into the same type.

The built-in configurations are the public ``config.json`` values of each model (vocabulary, widths,
heads, RoPE base). Weights are never downloaded: a built-in model is random-initialised, and a user's own
folder is read by :mod:`.weights`. Nothing here imports torch.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Any, Literal

from hwbench_gui.engine.foreign import ForeignFileError, read_json
from hwbench_gui.engine.shown_text import shown_path
from hwbench_gui.engine.spec.benchmark import ParamError

NormKind = Literal["layernorm", "rmsnorm"]
MlpKind = Literal["gelu", "swiglu"]
PositionKind = Literal["learned", "rope"]
#: Which linear layers carry a bias: none (Llama), the q/k/v projections only (Qwen2), every one (GPT-2).
BiasKind = Literal["none", "qkv", "all"]

CONFIG_MAX_BYTES = 1 << 20  # a config.json is a few KiB; anything near this is not one


@dataclass(frozen=True)
class RopeScaling:
    """Llama 3.1's frequency rescaling ("rope_type": "llama3"): long wavelengths are divided by
    ``factor``, short ones kept, the band between blended."""

    factor: float
    low_freq_factor: float
    high_freq_factor: float
    original_max_positions: int

    def to_hf(self) -> dict[str, Any]:
        """The ``rope_scaling`` entry of a Hugging Face config.json that :func:`from_hf_config` reads back."""
        return {"rope_type": "llama3", "factor": self.factor, "low_freq_factor": self.low_freq_factor,
                "high_freq_factor": self.high_freq_factor,
                "original_max_position_embeddings": self.original_max_positions}


@dataclass(frozen=True)
class Architecture:
    """One decoder-only transformer's shape. ``head_dim`` × ``heads`` need not equal ``hidden``
    (it does in every built-in model). ``kv_heads`` < ``heads`` is grouped-query attention."""

    name: str
    vocab: int
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    norm: NormKind
    mlp: MlpKind
    positional: PositionKind
    tied_embeddings: bool
    bias: BiasKind
    max_positions: int
    norm_eps: float
    rope_theta: float = 0.0
    rope_scaling: RopeScaling | None = None
    source: str = ""  # where the values come from

    def __post_init__(self) -> None:
        for field_name in ("vocab", "hidden", "layers", "heads", "kv_heads", "head_dim", "intermediate",
                           "max_positions"):
            value = getattr(self, field_name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ParamError(f"model {self.name}: {field_name} must be a positive whole number, not {value!r}")
        if self.heads % self.kv_heads:
            raise ParamError(f"model {self.name}: {self.heads} attention heads do not divide into "
                             f"{self.kv_heads} key/value heads")
        if self.positional == "rope" and (self.head_dim % 2 or self.rope_theta <= 0):
            raise ParamError(f"model {self.name}: rotary positions need an even head_dim and a positive rope_theta")

    @property
    def q_size(self) -> int:
        return self.heads * self.head_dim

    @property
    def kv_size(self) -> int:
        return self.kv_heads * self.head_dim

    @property
    def qkv_bias(self) -> bool:
        return self.bias in ("qkv", "all")

    @property
    def other_bias(self) -> bool:
        """Bias on the output projection and the MLP (GPT-2)."""
        return self.bias == "all"


_LLAMA3_ROPE = RopeScaling(factor=32.0, low_freq_factor=1.0, high_freq_factor=4.0, original_max_positions=8192)
_LLAMA31_ROPE = RopeScaling(factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0, original_max_positions=8192)

BUILT_IN: dict[str, Architecture] = {a.name: a for a in (
    Architecture("gpt2-124m", vocab=50257, hidden=768, layers=12, heads=12, kv_heads=12, head_dim=64,
                 intermediate=3072, norm="layernorm", mlp="gelu", positional="learned", tied_embeddings=True,
                 bias="all", max_positions=1024, norm_eps=1e-5,
                 source="huggingface.co/openai-community/gpt2 config.json"),
    Architecture("llama-3.2-1b", vocab=128256, hidden=2048, layers=16, heads=32, kv_heads=8, head_dim=64,
                 intermediate=8192, norm="rmsnorm", mlp="swiglu", positional="rope", tied_embeddings=True,
                 bias="none", max_positions=131072, norm_eps=1e-5, rope_theta=500000.0, rope_scaling=_LLAMA3_ROPE,
                 source="huggingface.co/meta-llama/Llama-3.2-1B config.json"),
    Architecture("llama-3.1-8b", vocab=128256, hidden=4096, layers=32, heads=32, kv_heads=8, head_dim=128,
                 intermediate=14336, norm="rmsnorm", mlp="swiglu", positional="rope", tied_embeddings=False,
                 bias="none", max_positions=131072, norm_eps=1e-5, rope_theta=500000.0, rope_scaling=_LLAMA31_ROPE,
                 source="huggingface.co/meta-llama/Llama-3.1-8B config.json"),
    Architecture("qwen2.5-7b", vocab=152064, hidden=3584, layers=28, heads=28, kv_heads=4, head_dim=128,
                 intermediate=18944, norm="rmsnorm", mlp="swiglu", positional="rope", tied_embeddings=False,
                 bias="qkv", max_positions=131072, norm_eps=1e-6, rope_theta=1000000.0,
                 source="huggingface.co/Qwen/Qwen2.5-7B config.json"),
    Architecture("llama-3.1-70b", vocab=128256, hidden=8192, layers=80, heads=64, kv_heads=8, head_dim=128,
                 intermediate=28672, norm="rmsnorm", mlp="swiglu", positional="rope", tied_embeddings=False,
                 bias="none", max_positions=131072, norm_eps=1e-5, rope_theta=500000.0, rope_scaling=_LLAMA31_ROPE,
                 source="huggingface.co/meta-llama/Llama-3.1-70B config.json"),
    Architecture("qwen2.5-72b", vocab=152064, hidden=8192, layers=80, heads=64, kv_heads=8, head_dim=128,
                 intermediate=29568, norm="rmsnorm", mlp="swiglu", positional="rope", tied_embeddings=False,
                 bias="qkv", max_positions=32768, norm_eps=1e-5, rope_theta=1000000.0,
                 source="huggingface.co/Qwen/Qwen2.5-72B config.json"),
    # A Llama-shaped model small enough for tests and CPUs: grouped-query attention, RoPE, SwiGLU, q/k/v bias
    # (so the Qwen path runs too).
    Architecture("tiny", vocab=512, hidden=128, layers=2, heads=4, kv_heads=2, head_dim=32, intermediate=256,
                 norm="rmsnorm", mlp="swiglu", positional="rope", tied_embeddings=False, bias="qkv",
                 max_positions=32768, norm_eps=1e-5, rope_theta=10000.0, source="hwbench"),
)}


def builtin(name: str) -> Architecture:
    """The built-in architecture ``name``; ParamError naming the known ones otherwise."""
    try:
        return BUILT_IN[name.strip().lower()]
    except KeyError:
        raise ParamError(f"model: {name!r} is not one of {', '.join(BUILT_IN)} "
                         "(or a folder with config.json)") from None


def read_json_file(path: str, max_bytes: int, what: str = "a JSON file") -> Any:
    """A regular file's JSON (:func:`hwbench_gui.engine.foreign.read_json`: checked on the open file, its size
    and nesting bounded before it is parsed); ParamError naming the file otherwise."""
    try:
        return read_json(path, max_bytes, what)
    except ForeignFileError as exc:
        raise ParamError(str(exc)) from None


#: The largest value of each size a configuration may give, far above any published model's (vocabulary:
#: Gemma 3's 262,144; width: Llama 3.1 405B's 16,384, its MLP 53,248, its 126 layers and 128 heads; head
#: width 256; context: Llama 4 Scout's 10M positions; learned position tables: GPT-2's 1,024). Checked as
#: the file is read, before any arithmetic: 10^18 positions or 10^7 layers would otherwise reach the
#: memory estimate and the tables built from it.
SIZE_LIMITS = {"vocab": 1 << 20, "hidden": 1 << 16, "layers": 1024, "heads": 1024, "kv_heads": 1024,
               "head_dim": 1024, "intermediate": 1 << 18, "max_positions": 1 << 24, "learned_positions": 1 << 16}
#: Bounds of the configuration's other numbers: RoPE bases (Qwen2.5-1M's 10^7), rescaling factors, epsilons.
FLOAT_LIMITS = {"rope_theta": (0.0, 1e12), "factor": (0.0, 1024.0), "low_freq_factor": (0.0, 1024.0),
                "high_freq_factor": (0.0, 1024.0), "layer_norm_epsilon": (0.0, 1.0), "rms_norm_eps": (0.0, 1.0)}


def _int(config: dict, *keys: str, limit: int, where: str = "config.json", default: int | None = None) -> int:
    for key in keys:
        value = config.get(key)
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, int):
                raise ParamError(f"{where}: {key} is {_short(value)}, not a whole number")
            if not 1 <= value <= limit:
                raise ParamError(f"{where}: {key} is {_short(value)}, not between 1 and {limit:,} (no real model "
                                 "has more)" if value > 0 else f"{where}: {key} is {value}, not a positive number")
            return value
    if default is None:
        raise ParamError(f"{where}: {' / '.join(keys)} is missing")
    return default


def _float(config: dict, key: str, default: float, where: str = "config.json") -> float:
    value = config.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParamError(f"{where}: {key} is {_short(value)}, not a number")
    low, high = FLOAT_LIMITS.get(key, (0.0, 1e12))
    if not low < value <= high:  # NaN fails too
        raise ParamError(f"{where}: {key} is {_short(value)}, not above {low:g} and at most {high:g}")
    return float(value)


def _short(value: Any) -> str:
    """``value`` for a one-line message: huge numbers by their digit count, long text cut."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**20:
        return f"a number of {len(str(abs(value)))} digits"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _rope(config: dict, where: str) -> tuple[float, RopeScaling | None]:
    # transformers 5 folds rope_theta and rope_scaling into rope_parameters; 4.x keeps them apart.
    params = config.get("rope_parameters") if isinstance(config.get("rope_parameters"), dict) else {}
    theta = _float(params, "rope_theta", _float(config, "rope_theta", 10000.0, where), where)
    scaling = config.get("rope_scaling") if isinstance(config.get("rope_scaling"), dict) else params
    kind = scaling.get("rope_type", scaling.get("type", "default")) if scaling else "default"
    if kind in (None, "default"):
        return theta, None
    if kind != "llama3":
        raise ParamError(f"{where}: rope scaling {_short(kind)} is not supported (default and llama3 are)")
    return theta, RopeScaling(_float(scaling, "factor", 8.0, where), _float(scaling, "low_freq_factor", 1.0, where),
                              _float(scaling, "high_freq_factor", 4.0, where),
                              _int(scaling, "original_max_position_embeddings", limit=SIZE_LIMITS["max_positions"],
                                   where=where, default=8192))


def from_hf_config(config: Any, name: str, where: str = "config.json") -> Architecture:
    """A Hugging Face ``config.json`` (already parsed) as an :class:`Architecture`: GPT-2, Llama,
    Mistral (without sliding window) and Qwen2 layouts; ParamError naming the file (``where``) and the field
    that is missing, out of :data:`SIZE_LIMITS` or unsupported."""
    if not isinstance(config, dict):
        raise ParamError(f"{where}: not a JSON object")
    lim = SIZE_LIMITS

    def size(*keys: str, limit: int, default: int | None = None) -> int:
        return _int(config, *keys, limit=limit, where=where, default=default)

    kind = config.get("model_type")
    if kind == "gpt2":
        hidden = size("n_embd", limit=lim["hidden"])
        heads = size("n_head", limit=lim["heads"])
        if hidden % heads:
            raise ParamError(f"{where}: n_embd {hidden} is not a multiple of n_head {heads}")
        if config.get("activation_function", "gelu_new") not in ("gelu_new", "gelu_pytorch_tanh"):
            raise ParamError(f"{where}: activation {_short(config.get('activation_function'))} is not supported")
        if hidden // heads > lim["head_dim"]:
            raise ParamError(f"{where}: n_embd / n_head is {hidden // heads}, more than {lim['head_dim']}")
        return Architecture(name, vocab=size("vocab_size", limit=lim["vocab"]), hidden=hidden,
                            layers=size("n_layer", limit=lim["layers"]), heads=heads, kv_heads=heads,
                            head_dim=hidden // heads,
                            intermediate=size("n_inner", limit=lim["intermediate"], default=4 * hidden),
                            norm="layernorm", mlp="gelu", positional="learned", tied_embeddings=True, bias="all",
                            max_positions=size("n_positions", limit=lim["learned_positions"]),
                            norm_eps=_float(config, "layer_norm_epsilon", 1e-5, where), source=name)
    if kind in ("llama", "mistral", "qwen2"):
        if config.get("hidden_act", "silu") != "silu":
            raise ParamError(f"{where}: activation {_short(config.get('hidden_act'))} is not supported (silu is)")
        if config.get("use_sliding_window") or (kind == "mistral" and config.get("sliding_window")):
            raise ParamError(f"{where}: sliding-window attention is not supported")
        if config.get("mlp_bias"):
            raise ParamError(f"{where}: mlp_bias is not supported")
        hidden = size("hidden_size", limit=lim["hidden"])
        heads = size("num_attention_heads", limit=lim["heads"])
        kv_heads = size("num_key_value_heads", limit=lim["kv_heads"], default=heads)
        if heads % kv_heads:
            raise ParamError(f"{where}: num_attention_heads {heads} is not a multiple of num_key_value_heads "
                             f"{kv_heads}")
        if "head_dim" not in config and hidden % heads:
            raise ParamError(f"{where}: hidden_size {hidden} is not a multiple of num_attention_heads {heads} "
                             "(and no head_dim is given)")
        head_dim = size("head_dim", limit=lim["head_dim"], default=hidden // heads)
        theta, scaling = _rope(config, where)
        qkv_bias = kind == "qwen2" or bool(config.get("attention_bias"))
        if kind != "qwen2" and config.get("attention_bias"):
            raise ParamError(f"{where}: attention_bias on the output projection is not supported")
        return Architecture(name, vocab=size("vocab_size", limit=lim["vocab"]), hidden=hidden,
                            layers=size("num_hidden_layers", limit=lim["layers"]), heads=heads, kv_heads=kv_heads,
                            head_dim=head_dim, intermediate=size("intermediate_size", limit=lim["intermediate"]),
                            norm="rmsnorm", mlp="swiglu", positional="rope",
                            tied_embeddings=bool(config.get("tie_word_embeddings", False)),
                            bias="qkv" if qkv_bias else "none",
                            max_positions=size("max_position_embeddings", limit=lim["max_positions"]),
                            norm_eps=_float(config, "rms_norm_eps", 1e-6, where), rope_theta=theta,
                            rope_scaling=scaling, source=name)
    raise ParamError(f"{where}: model_type {_short(kind)} is not supported (gpt2, llama, mistral, qwen2 are)")


def read_hf_config(folder: str) -> Architecture:
    """``folder/config.json`` read (a regular file, bounded) into an :class:`Architecture` named for the folder
    (escaped: a folder name that is not UTF-8 still makes a name that can be shown and saved)."""
    path = os.path.join(folder, "config.json")
    return from_hf_config(read_json_file(path, CONFIG_MAX_BYTES, "a config.json"), shown_path(os.path.abspath(folder)),
                          shown_path(path))


def resolve(model: str) -> Architecture:
    """``-p model=``'s value: a built-in name, or a folder holding a Hugging Face ``config.json``."""
    text = str(model).strip()
    if text.lower() in BUILT_IN:
        return BUILT_IN[text.lower()]
    if os.sep in text or text.startswith(".") or os.path.isdir(text):
        if not os.path.isdir(text):
            raise ParamError(f"model: {shown_path(text)} is not a folder")
        return read_hf_config(text)
    return builtin(text)


def with_max_positions(arch: Architecture, max_positions: int) -> Architecture:
    """``arch`` with a different context limit (a test's shorter tables)."""
    return replace(arch, max_positions=max_positions)
