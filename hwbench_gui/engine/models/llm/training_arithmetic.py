"""What a language-model training step costs: FLOPs per token (full training and a frozen-base LoRA
step), model FLOPs utilisation against the datasheet peak and against a measured matmul rate, and
the memory a step holds (weights, gradients, AdamW states, activations, the loss's logits) against a
GPU's memory. Pure Python: ``llm.train`` computes it before a run (to refuse what cannot fit) and
puts it in the document; the GUI's "what fits" table reads the same functions.

Counting conventions, stated once:

* FLOPs are *model* FLOPs (PaLM, appendix B; nanoGPT's ``estimate_mfu``; llm.c): a multiply-add is 2
  FLOPs, a training step of a matrix is 3 times its forward (forward, gradient of the input, gradient
  of the weight), recomputation under activation checkpointing is not counted, and attention is
  counted over the whole sequence (12 · layers · heads · head_dim · seq per token), causal masking
  or not. Only the matrices of matrix multiplies count (biases, norms and the embedding lookup do
  not); the output projection does, also when it is the tied token embedding (counted once).
* A frozen-base LoRA step: forward 2N, gradients of the activations 2N (the base's weight gradients
  are never computed), attention as in full training (its backward only has activation gradients),
  plus each adapter's 6 · r · (in + out) (the adapters train).
* Memory, mixed precision as torch.amp trains: FP32 master weights (4 bytes), FP32 gradients (4),
  AdamW's two FP32 moments (8) = 16 bytes per trainable parameter, plus autocast's BF16/FP16 copy of
  each matrix (2 bytes) held from the forward pass to the backward. LoRA keeps the frozen base in
  BF16 (2 bytes, no gradient, no optimizer state) and trains FP32 adapters (16 bytes each).
* Activations are counted from what each block saves for its backward, eager or compiled: a compiled
  block (``torch.compile``, a GPU run's default) saves less, because AOTAutograd's min-cut partitioner
  recomputes the second norm's input and SwiGLU's SiLU in the backward instead of keeping them
  (:func:`compiled_saved_bytes_per_token_layer`: 2·hidden + 2·intermediate bytes a token and layer
  fewer in full training, 20 GiB of Llama-3.2-1B's 32 × 2048 tokens). The autocast weight copies are
  saved for the backward either way; the norms' outputs and the rotated q/k are saved either way.
* FP8 (full training only, :mod:`.fp8_training`): the blocks' q/k/v, out, up and down matmuls take the FP32
  master weight and a 16-bit input and save exactly those (the weight by reference: no autocast copy of the
  block matrices; the input as the BF16 path saves it), casting to FP8 again in the backward. Eager, the saved
  activations are therefore the BF16 path's; compiled, fewer (the partitioner recomputes the 16-bit inputs
  with their casts: :func:`compiled_saved_bytes_per_token_layer`). What FP8 adds is transient, one matmul at a
  time: the FP8 copies of one product's operands, counted at the widest matmul's backward (the gradient, the
  input and the weight in FP8 and each once more transposed, 2 · (T·out + T·in + out·in) bytes), plus, eager,
  the one FP32 temporary a cast divides in (4 bytes an element of the largest cast; a compiled block fuses it
  into the cast's kernel).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from hwbench_gui.engine.models.llm import arithmetic
from hwbench_gui.engine.models.llm.architectures import Architecture

GIB = 1 << 30
#: Bytes per trainable parameter under mixed-precision AdamW: FP32 weight + FP32 gradient + 2 FP32 moments.
ADAMW_MIXED_BYTES = 16
#: Bytes of autocast's 16-bit copy of a matrix (cached from its first use in the forward pass to the backward).
AUTOCAST_COPY_BYTES = 2
#: Bytes of a frozen base parameter in a LoRA run (BF16).
FROZEN_BASE_BYTES = 2
#: Logits per chunk of the fused output projection and loss (tokens × vocabulary): 2^27 FP32 logits are
#: 512 MiB (1,024 tokens of a 128k vocabulary): large enough for full-speed matrix multiplies, small
#: beside a model's states.
CHUNK_LOGITS = 1 << 27
#: The auto micro-batch search stops at this many tokens per micro-batch (nanoGPT's 64 × 1024): past it a
#: GPU's matrix multiplies are as busy as they get, and the search would only spend time.
MAX_MICRO_TOKENS = 1 << 16


def chunk_tokens(vocab: int) -> int:
    """Tokens per chunk of the fused loss for a vocabulary of ``vocab`` (a multiple of 64, at least 64)."""
    return max(64, (CHUNK_LOGITS // max(1, vocab)) // 64 * 64)


@dataclass(frozen=True)
class Dims:
    """The numbers of one decoder the formulas read (taken from its declared config, never typed here).

    ``matmul_params``: elements of every matrix that takes part in a matrix multiply, the output
    projection included once. ``params``: every parameter (what the optimizer holds in full training).
    ``adapted``: (in_features, out_features) of each matrix LoRA adapts, one entry per matrix (all layers).
    ``saved_bytes_per_token_layer``: bytes one layer keeps for its backward per token without
    checkpointing; ``checkpoint_bytes_per_token_layer``: with per-layer checkpointing (the layer's input);
    ``outside_bytes_per_token``: what the embedding and the final norm keep.
    """

    layers: int
    hidden: int
    heads: int
    head_dim: int
    vocab: int
    params: int
    matmul_params: int
    saved_bytes_per_token_layer: float
    checkpoint_bytes_per_token_layer: float
    outside_bytes_per_token: float = 0.0
    adapted: tuple[tuple[int, int], ...] = ()
    compiled: bool = False  # the saved bytes are a compiled block's (:func:`compiled_saved_bytes_per_token_layer`)
    #: (in_features, out_features) of one layer's q/k/v, out, up and down matrices (what FP8 multiplies).
    block_matrices: tuple[tuple[int, int], ...] = ()


def attention_flops_per_token(layers: int, heads: int, head_dim: int, seq: int) -> int:
    """Training FLOPs per token of the attention scores and their weighted sum: 12 · L · H · d · T
    (forward 2 · 2 · H · d · T per layer, backward twice that), as PaLM and nanoGPT count it."""
    return 12 * layers * heads * head_dim * seq


def full_flops_per_token(dims: Dims, seq: int) -> int:
    """Full training: 6 · matmul parameters + attention."""
    return 6 * dims.matmul_params + attention_flops_per_token(dims.layers, dims.heads, dims.head_dim, seq)


def adapter_flops_per_token(adapted: tuple[tuple[int, int], ...] | list[tuple[int, int]], rank: int) -> int:
    """Training FLOPs per token of LoRA adapters of rank ``rank`` on matrices ``(in, out)``: each adapter's
    two matrices (r × in, out × r) forward 2 · r · (in + out), backward twice that."""
    return sum(6 * rank * (n_in + n_out) for n_in, n_out in adapted)


def lora_flops_per_token(dims: Dims, seq: int, rank: int) -> int:
    """A frozen-base LoRA step: 4 · matmul parameters (forward and activation gradients) + attention +
    the adapters'."""
    return (4 * dims.matmul_params + attention_flops_per_token(dims.layers, dims.heads, dims.head_dim, seq)
            + adapter_flops_per_token(dims.adapted, rank))


def flops_per_token(dims: Dims, seq: int, method: str, rank: int = 0) -> int:
    """FLOPs per token of ``method`` ("full" or "lora")."""
    if method == "full":
        return full_flops_per_token(dims, seq)
    if method == "lora":
        return lora_flops_per_token(dims, seq, rank)
    raise ValueError(f"unknown training method {method!r} (full, lora)")


def block_matmul_params(dims: Dims) -> int:
    """Elements of every block's q/k/v, out, up and down matrices (all layers): what FP8 training multiplies."""
    return dims.layers * sum(n_in * n_out for n_in, n_out in dims.block_matrices)


def fp8_flops_per_token(dims: Dims) -> int:
    """Of full training's FLOPs per token, those FP8 runs (the block matmuls': forward, input and weight
    gradients, 6 · their parameters); the rest (attention, the output projection) runs in BF16."""
    return 6 * block_matmul_params(dims)


def fp8_cast_bytes(dims: Dims, tokens: int) -> float:
    """The transient bytes of FP8's casts at their largest, one matmul's backward (see the module's docstring):
    FP8 copies of the gradient, the input and the weight, each once more transposed, and eager the FP32
    temporary of the largest cast."""
    most = 0.0
    for n_in, n_out in dims.block_matrices:
        sizes = (tokens * n_out, tokens * n_in, n_out * n_in)
        most = max(most, 2.0 * sum(sizes) + (0.0 if dims.compiled else 4.0 * max(sizes)))
    return most


def mfu(tokens_per_s: float, flops_per_token_: float, peak_tflops: float | None) -> float | None:
    """Model FLOPs utilisation: achieved model FLOP/s over ``peak_tflops`` (TFLOP/s, dense); None
    without a peak. Not clipped: a figure above 1 says the peak is wrong (nanoGPT's A100 figure on an
    H100), and is shown as such."""
    if not peak_tflops or peak_tflops <= 0:
        return None
    return tokens_per_s * flops_per_token_ / (peak_tflops * 1e12)


@dataclass
class TrainingMemory:
    """Bytes a training step holds on one GPU at its peak, by what holds them.

    ``persistent`` lives through the whole step (weights, optimizer states); ``forward`` is what is
    live when the forward pass ends (saved activations, autocast's weight copies, the loss's buffers);
    ``gradients`` fill in as the backward pass frees ``forward`` layer by layer. The peak is therefore
    persistent + the larger of the two (the backward pass trades one for the other about linearly).
    """

    scheme: str
    persistent: dict[str, float] = field(default_factory=dict)
    forward: dict[str, float] = field(default_factory=dict)
    gradients: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def total(self) -> float:
        """The peak estimate in bytes."""
        return float(sum(self.persistent.values()) + max(sum(self.forward.values()), sum(self.gradients.values())))

    def to_json(self) -> dict[str, object]:
        return {"scheme": self.scheme, "persistent_bytes": dict(self.persistent),
                "forward_bytes": dict(self.forward), "gradient_bytes": dict(self.gradients),
                "peak_bytes": self.total, "peak_gib": self.total / GIB, "notes": list(self.notes)}

    def lines(self) -> list[str]:
        """One line per part, ``"AdamW moments (FP32): 9.31 GiB"``, then the peak and how it was summed."""
        out = [f"{name}: {value / GIB:.2f} GiB" for part in (self.persistent, self.forward, self.gradients)
               for name, value in part.items()]
        forward, grads = sum(self.forward.values()), sum(self.gradients.values())
        which = "end of the forward pass" if forward >= grads else "end of the backward pass"
        return out + [f"peak (at the {which}): {self.total / GIB:.2f} GiB"]


def loss_bytes(tokens: int, hidden: int, vocab: int, chunk_tokens: int | None, head_trainable: bool,
               hidden_bytes: int = 4) -> float:
    """Bytes the loss holds when the forward pass ends, beyond the model's activations.

    Unchunked (``chunk_tokens`` None), the textbook step: the logits in FP32 (autocast runs the
    cross-entropy in FP32) kept for the backward, and their gradient, 2 · tokens · vocab · 4 bytes
    (8 GiB each for 16 × 2048 tokens of a 128k vocabulary). Chunked (:mod:`.linear_cross_entropy`):
    one chunk's FP32 logits and its softmax (8 bytes a logit) and its 16-bit gradient (2), the
    gradient of the hidden states for every token, the FP32 gradient of the output matrix when it
    trains, and, where the hidden states are FP32 (full training), their 16-bit copy that the chunks
    read (live while the loss's forward runs, beside every block's activations). The output matrix's
    16-bit copy is the one the estimate counts with autocast's weight copies.
    """
    if chunk_tokens is None:
        return 2.0 * tokens * vocab * 4
    chunk = min(chunk_tokens, tokens)
    copy = tokens * hidden * 2.0 if hidden_bytes == 4 else 0.0
    return (chunk * vocab * 10.0 + tokens * hidden * hidden_bytes + copy
            + (vocab * hidden * 4.0 if head_trainable else 0.0))


#: Bytes a token id takes on the device, as input and as target (int64 each).
TOKEN_ID_BYTES = 16


def training_memory(dims: Dims, *, method: str, micro_batch: int, seq: int, checkpointing: bool,
                    chunk_tokens: int | None, lora_params: int = 0, sharding: str = "none",
                    world: int = 1, fp8: bool = False, grad_accum: int = 1) -> TrainingMemory:
    """The peak memory of one micro-batch's step on one GPU: states by the scheme in the module's
    docstring, activations of ``micro_batch · seq`` tokens (all layers; with checkpointing every
    layer's input plus one layer's saved tensors while it is recomputed), :func:`loss_bytes`.
    ``sharding``: "none" (one GPU), "ddp" (gradients live in DDP's buckets the whole step), "fsdp"
    (states and gradients divided by ``world``; one layer's weights gathered, and the next prefetched).
    ``fp8``: the block matmuls in FP8 (full training only; the module's docstring says what that changes).
    ``grad_accum``: micro-batches per step, whose token ids (inputs and targets) are made once and held.
    Every size is a Python number: a configuration far beyond any machine is counted, never allocated."""
    tokens = micro_batch * seq
    if fp8 and method != "full":
        raise ValueError("FP8 training is counted for full training only")
    share = float(world) if sharding == "fsdp" else 1.0
    if method == "full":
        memory = TrainingMemory("mixed-precision AdamW: FP32 master weights under autocast, 16 bytes a parameter")
        memory.persistent["weights (FP32)"] = dims.params * 4.0 / share
        memory.persistent["AdamW moments (FP32)"] = dims.params * 8.0 / share
        grads = {"gradients (FP32)": dims.params * 4.0 / share}
        if fp8:
            memory.scheme += "; the blocks' matmuls in FP8 from the FP32 masters (no 16-bit copy of them)"
            memory.forward["autocast 16-bit weight copies (outside the blocks)"] = (
                (dims.matmul_params - block_matmul_params(dims)) * float(AUTOCAST_COPY_BYTES))
            memory.forward["FP8 casts of one matmul's backward (transient)"] = fp8_cast_bytes(dims, tokens)
        else:
            memory.forward["autocast 16-bit weight copies"] = dims.matmul_params * float(AUTOCAST_COPY_BYTES)
        if sharding == "fsdp":
            memory.forward["gathered layers (2 at a time, FP32)"] = 2.0 * 4 * dims.params / max(1, dims.layers)
    elif method == "lora":
        memory = TrainingMemory("LoRA: frozen base in BF16, FP32 adapters with AdamW (16 bytes an adapter parameter)")
        memory.persistent["frozen base (BF16)"] = dims.params * float(FROZEN_BASE_BYTES) / share
        memory.persistent["adapters and AdamW moments (FP32)"] = lora_params * 12.0
        grads = {"adapter gradients (FP32)": lora_params * 4.0}
        if sharding == "fsdp":
            memory.forward["gathered layers (2 at a time, BF16)"] = 2.0 * 2 * dims.params / max(1, dims.layers)
    else:
        raise ValueError(f"unknown training method {method!r} (full, lora)")
    if sharding == "ddp":
        memory.persistent.update(grads)
        memory.notes.append("DDP: gradients are views into its communication buckets, allocated for the whole run")
    else:
        memory.gradients.update(grads)
    if checkpointing:
        activations = tokens * (dims.layers * dims.checkpoint_bytes_per_token_layer + dims.saved_bytes_per_token_layer
                                + dims.outside_bytes_per_token)
        memory.notes.append("activation checkpointing: each layer's input is kept; one layer's activations "
                            "live while it is recomputed")
    else:
        activations = tokens * (dims.layers * dims.saved_bytes_per_token_layer + dims.outside_bytes_per_token)
    if dims.compiled:
        memory.notes.append("compiled blocks: AOTAutograd's partitioner recomputes the second norm's input and "
                            "SwiGLU's SiLU in the backward instead of keeping them (2 bytes a hidden and an "
                            "intermediate element fewer per token and layer than eager)")
    memory.persistent["token ids (int64 inputs and targets, every micro-batch)"] = float(
        TOKEN_ID_BYTES * tokens * grad_accum)
    memory.forward["activations"] = float(activations)
    memory.forward["loss (logits, their gradient)"] = loss_bytes(
        tokens, dims.hidden, dims.vocab, chunk_tokens, head_trainable=method == "full",
        hidden_bytes=4 if method == "full" else 2)
    return memory


def largest_micro_batch(fits_bytes: float, memory_at: Callable[[int], TrainingMemory]) -> int:
    """The largest micro-batch whose :class:`TrainingMemory` (``memory_at(micro_batch)``) fits in
    ``fits_bytes`` (0 when not even one does); memory grows with the micro-batch, so doubling then
    bisection finds it in a few dozen evaluations."""
    if memory_at(1).total > fits_bytes:
        return 0
    low, high = 1, 2
    while memory_at(high).total <= fits_bytes:
        low, high = high, high * 2
        if high > 1 << 20:
            return low
    while high - low > 1:
        mid = (low + high) // 2
        if memory_at(mid).total <= fits_bytes:
            low = mid
        else:
            high = mid
    return low


#: The projections :mod:`.lora` adapts in :mod:`.model`'s blocks (q/k/v share one matrix there, as do
#: SwiGLU's gate and up).
LORA_TARGETS = ("qkv", "out", "up", "down")


def lora_shapes(arch: Architecture) -> tuple[tuple[int, int], ...]:
    """(in, out) of every matrix LoRA adapts, all layers: the fused q/k/v, the attention output, the MLP's
    (fused gate and) up and its down projection."""
    up = 2 * arch.intermediate if arch.mlp == "swiglu" else arch.intermediate
    one = ((arch.hidden, arch.q_size + 2 * arch.kv_size), (arch.q_size, arch.hidden), (arch.hidden, up),
           (arch.intermediate, arch.hidden))
    return one * arch.layers


def saved_bytes_per_token_layer(arch: Architecture, method: str, norm_saves_output: bool = False,
                                lora_rank: int = 0, low_bytes: int = 2, norm_input_bytes: int = 4,
                                compiled: bool = False, fp8: bool = False) -> float:
    """Bytes one block of :mod:`.model` keeps for its backward per token (no checkpointing), counted from
    what each operation saves under autocast (eager PyTorch, flash attention; ``compiled``: what
    AOTAutograd's min-cut partitioner saves instead, see :func:`compiled_saved_bytes_per_token_layer`):

    * each norm's input (``norm_input_bytes`` an element: full training's FP32 residual stream; in LoRA
      autocast's FP32 copy of the 16-bit stream where autocast runs the norm in FP32, as CUDA's autocast
      lists LayerNorm; the CPU's autocast keeps LayerNorm in 16 bits) and its statistics;
      ``norm_saves_output``: also the normalised output, which the CPU's unfused RMSNorm keeps for its
      weight's gradient (CUDA's fused kernel does not);
    * the 16-bit inputs of the q/k/v and MLP-up matrices;
    * the q/k/v matrix's output (attention keeps v, a view of it) and, with rotary positions, the rotated q
      and k; attention's output (the output projection's input too: the same storage) and its FP32
      log-sum-exp per head;
    * the MLP's up output and the activation's output (SwiGLU: gate and up 2 · 2I, silu 2I, product 2I;
      GELU: 2I, 2I);
    * LoRA: each adapter's r-wide intermediate.

    Eager FP8 blocks (``fp8``) save exactly this: the FP8 matmul keeps the 16-bit input the BF16 one keeps.
    """
    if compiled:
        return compiled_saved_bytes_per_token_layer(arch, method, lora_rank, low_bytes, fp8)
    h, q, kv, inner = arch.hidden, arch.q_size, arch.kv_size, arch.intermediate
    stats = 8 if arch.norm == "layernorm" else 4
    norm_out = 4 * h if norm_saves_output and arch.norm == "rmsnorm" else 0
    norms = 2 * (norm_input_bytes * h + stats + norm_out)
    matmul_inputs = 2 * low_bytes * h
    qkv = low_bytes * (q + 2 * kv) + (low_bytes * (q + kv) if arch.positional == "rope" else 0)
    attention = low_bytes * q + 4 * arch.heads
    mlp = (4 if arch.mlp == "swiglu" else 2) * low_bytes * inner
    adapters = len(LORA_TARGETS) * low_bytes * lora_rank if method == "lora" else 0
    return float(norms + matmul_inputs + qkv + attention + mlp + adapters)


def compiled_saved_bytes_per_token_layer(arch: Architecture, method: str, lora_rank: int = 0,
                                        low_bytes: int = 2, fp8: bool = False) -> float:
    """Bytes one block keeps per token when it is compiled (``torch.compile``): AOTAutograd's min-cut
    partitioner saves the fewest bytes from which the backward can recompute cheap elementwise work. Read
    from the backward graph of a compiled block (tests/test_llm_train_compiled_saved.py counts them on the
    CPU), against the eager count of :func:`saved_bytes_per_token_layer`:

    * the first norm keeps its input as it arrives, the residual stream (FP32 in full training, 16-bit in
      LoRA: autocast's FP32 copy is recomputed), and its statistics;
    * the second norm's input ``x + out(y)`` is not kept: the attention output projection's 16-bit output
      is (the sum is recomputed from it and the block's input), and the statistics;
    * the norms' 16-bit outputs (the q/k/v and MLP-up matrices' inputs), the q/k/v output and the rotated q
      and k, attention's output and log-sum-exp, as eager (the partitioner does not recompute RoPE: its
      output is the attention kernel's input);
    * SwiGLU: gate and up (2 · 2I) and the product (2I, the down matrix's input); SiLU's output is
      recomputed. GELU: the up output and GELU's output (2I each), as eager;
    * LoRA: each adapter's r-wide intermediate;
    * ``fp8`` (the block matmuls in FP8): the norms' outputs and the down matrix's input are not kept (2 · 2h +
      2I bytes fewer, counted on the CPU as the rest).
    """
    h, q, kv, inner = arch.hidden, arch.q_size, arch.kv_size, arch.intermediate
    stats = 8 if arch.norm == "layernorm" else 4
    residual = 4 if method == "full" else low_bytes
    norms = residual * h + low_bytes * h + 2 * stats
    matmul_inputs = 2 * low_bytes * h
    qkv = low_bytes * (q + 2 * kv) + (low_bytes * (q + kv) if arch.positional == "rope" else 0)
    attention = low_bytes * q + 4 * arch.heads
    mlp = (3 if arch.mlp == "swiglu" else 2) * low_bytes * inner
    adapters = len(LORA_TARGETS) * low_bytes * lora_rank if method == "lora" else 0
    if fp8:
        # An FP8 matmul's 16-bit input feeds only its FP8 cast in the backward, which the partitioner fuses with
        # recomputing the input: the two norms' outputs (the q/k/v and MLP-up inputs, from the kept stream, the
        # out-projection's output and the statistics) and the down matrix's input (from gate and up, or the up
        # output) are not kept. Attention's output, the out matrix's input, is the attention kernel's own.
        matmul_inputs = 0
        mlp -= low_bytes * inner
    return float(norms + matmul_inputs + qkv + attention + mlp + adapters)


def saved_bytes_per_token_outside(arch: Architecture, method: str, norm_saves_output: bool = False) -> float:
    """Bytes per token saved outside the blocks. Full training: the token id (and position id), the final
    norm's FP32 input and statistics (and output, as above), RoPE's FP32 cos and sin rows (shared by every
    block). LoRA: the same less the ids and the first block's norm input, which nothing needs (the frozen
    embedding wants no gradient), about as much as the final norm keeps: RoPE's rows only."""
    rope = 2 * 4 * arch.head_dim if arch.positional == "rope" else 0
    if method == "lora":
        return float(rope)
    ids = 8 * (2 if arch.positional == "learned" else 1)
    stats = 8 if arch.norm == "layernorm" else 4
    norm_out = 4 * arch.hidden if norm_saves_output and arch.norm == "rmsnorm" else 0
    return float(ids + 4 * arch.hidden + stats + norm_out + rope)


def dims_of(arch: Architecture, method: str, lora_rank: int = 0, device_type: str = "cuda",
            compiled: bool = False, fp8: bool = False) -> Dims:
    """The numbers :func:`training_memory` and the FLOPs read, for ``arch`` trained by ``method`` on a
    ``device_type`` device (the CPU's RMSNorm saves more, see :func:`saved_bytes_per_token_layer`), its
    blocks ``compiled`` or eager. Checkpointing keeps each block's input: the residual stream, FP32 in full
    training, 16-bit in LoRA; the block being recomputed saves what the compiled or eager block saves. ``fp8``:
    the block matmuls in FP8 (full training)."""
    residual = 4 if method == "full" else 2
    norm_out = device_type == "cpu" and method == "full"
    norm_input = 4 if method == "full" or device_type != "cpu" or arch.norm == "rmsnorm" else 2
    return Dims(layers=arch.layers, hidden=arch.hidden, heads=arch.heads, head_dim=arch.head_dim,
                vocab=arch.vocab, params=arithmetic.total_params(arch), matmul_params=arithmetic.matmul_params(arch),
                saved_bytes_per_token_layer=saved_bytes_per_token_layer(arch, method, norm_out, lora_rank,
                                                                        norm_input_bytes=norm_input,
                                                                        compiled=compiled, fp8=fp8),
                checkpoint_bytes_per_token_layer=float(residual * arch.hidden),
                outside_bytes_per_token=saved_bytes_per_token_outside(arch, method, norm_out),
                adapted=lora_shapes(arch) if method == "lora" else (), compiled=compiled,
                block_matrices=lora_shapes(arch)[:len(LORA_TARGETS)])


@dataclass(frozen=True)
class Fit:
    """Whether ``model`` trains by ``method`` at ``seq`` on a GPU of the given memory: the peak at micro-batch
    1 without and with checkpointing, and the largest micro-batch without (0: not even one sequence)."""

    model: str
    method: str
    params: int
    peak_bytes: float
    peak_checkpointed_bytes: float
    largest_micro_batch: int

    @property
    def verdict(self) -> str:
        if self.largest_micro_batch:
            return f"fits, micro-batch up to {self.largest_micro_batch}"
        return "fits with checkpointing only" if self.peak_checkpointed_bytes else "does not fit"


def what_fits(archs: list[Architecture], memory_bytes: float, seq: int, lora_rank: int,
              fit_fraction: float, compiled: bool = True, fp8: bool = False) -> list[Fit]:
    """For each architecture and method (full, LoRA), what a GPU of ``memory_bytes`` holds at ``seq``
    (``fit_fraction`` of it usable: the CUDA context and workspaces take the rest), its blocks ``compiled``
    (``llm.train``'s default on a GPU) or eager. ``peak_checkpointed_bytes`` is 0 when even checkpointed
    micro-batch 1 does not fit. ``fp8``: full training's rows with the block matmuls in FP8 (LoRA's stay BF16)."""
    budget = memory_bytes * fit_fraction
    out = []
    for arch in archs:
        for method in ("full", "lora"):
            dims = dims_of(arch, method, lora_rank, compiled=compiled, fp8=fp8 and method == "full")
            adapters = sum(lora_rank * (i + o) for i, o in dims.adapted)

            def at(micro_batch: int, checkpointing: bool = False) -> TrainingMemory:
                return training_memory(dims, method=method, micro_batch=micro_batch, seq=seq,
                                       checkpointing=checkpointing, chunk_tokens=chunk_tokens(arch.vocab),
                                       lora_params=adapters, fp8=fp8 and method == "full")

            plain, checkpointed = at(1).total, at(1, True).total
            out.append(Fit(arch.name, method, dims.params, plain, checkpointed if checkpointed <= budget else 0.0,
                           largest_micro_batch(budget, at)))
    return out


def largest_trainable(fits: list[Fit], families: dict[str, tuple[str, ...]]) -> dict[str, dict[str, str | None]]:
    """Per family (name -> its models, smallest first) and method, the largest model that trains here at
    micro-batch 1 (with checkpointing where it needs it), or None."""
    by = {(f.model, f.method): f for f in fits}
    out: dict[str, dict[str, str | None]] = {}
    for family, models in families.items():
        out[family] = {}
        for method in ("full", "lora"):
            fitting = [m for m in models if (m, method) in by and by[(m, method)].peak_checkpointed_bytes]
            out[family][method] = fitting[-1] if fitting else None
    return out
