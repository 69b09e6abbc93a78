"""Greedy transcription of a batch of 30-second windows with static buffers, as a fast engine runs Whisper: the
encoder once per window, the cross-attention's keys and values once per window, the forced prompt in one pass, then
one token per step with the self-attention's cache growing in place. Every buffer has a fixed shape, so on a GPU
each of the three parts can be captured once in a CUDA graph and replayed (the language models'
:func:`~..llm.generate.capture`), the blocks optionally compiled by torch.compile first.
"""

from __future__ import annotations

from typing import Any

from hwbench_gui.engine.models.llm.generate import FUSED_INDUCTOR_OPTIONS, RECOMPILE_LIMIT, capture
from hwbench_gui.engine.models.speech.arithmetic import PROMPT_TOKENS, cache_positions

#: How a window's parts run: eager kernels; "graph" each part captured in a CUDA graph; "compile" each block compiled
#: by torch.compile (default Inductor settings) and, on a GPU, captured likewise; "fused" the same with the decoder's
#: block compiled with the language models' :data:`FUSED_INDUCTOR_OPTIONS` (coordinate-descent-tuned one-row matmuls).
MODES = ("eager", "graph", "compile", "fused")


class Transcriber:
    """``batch`` windows of ``tokens`` transcribed tokens each on ``model``'s device: :meth:`encode`, :meth:`start`
    and :meth:`step`, or :meth:`greedy` for all of them, reading the log-mel in :attr:`mel`."""

    def __init__(self, torch: Any, model: Any, batch: int, tokens: int, mode: str = "eager"):
        if mode not in MODES:
            raise ValueError(f"mode {mode!r} is not one of {', '.join(MODES)}")
        a = model.arch
        weight = model.decoder.embed.weight
        device, dtype = weight.device, weight.dtype
        self.torch, self.model, self.batch, self.tokens_per_window = torch, model, batch, tokens
        self.mel = torch.zeros(batch, a.mels, a.frames, device=device, dtype=dtype)
        self.encoded = torch.zeros(batch, a.source_positions, a.d_model, device=device, dtype=dtype)
        self.cache = model.allocate(batch, cache_positions(tokens))
        # Whisper's forced start (<|startoftranscript|><|en|><|transcribe|><|notimestamps|> in large-v3's vocabulary),
        # kept inside any vocabulary: the speed does not depend on which ids they are.
        first = min(50258, a.vocab - PROMPT_TOKENS)
        self.prompt = torch.tensor([[first, first + 1, first + 2, first + 3]], device=device).repeat(batch, 1)
        self.prompt_positions = torch.arange(PROMPT_TOKENS, device=device)
        self.tokens = torch.zeros(batch, 1, dtype=torch.long, device=device)
        self.logits = torch.zeros(batch, a.vocab, dtype=torch.float32, device=device)
        self.position = torch.zeros((), dtype=torch.long, device=device)
        encoder_layer = decoder_layer = None
        if mode in ("compile", "fused"):
            from hwbench_gui.engine.models.speech.model import DecoderBlock, EncoderBlock

            # each batch compiles the blocks for its shapes again (and the decoder's for the prompt and the step):
            # past Dynamo's default of 8 recompilations it would fall back to eager kernels without saying so
            torch._dynamo.config.recompile_limit = max(torch._dynamo.config.recompile_limit, RECOMPILE_LIMIT)
            encoder_layer = torch.compile(EncoderBlock.forward, fullgraph=True, dynamic=False)
            decoder_layer = torch.compile(DecoderBlock.forward, fullgraph=True, dynamic=False,
                                          options=FUSED_INDUCTOR_OPTIONS if mode == "fused" else None)
        last = min(self.cache.positions, a.target_positions) - 1

        def encode() -> None:
            self.encoded.copy_(model.encoder(self.mel, layer=encoder_layer))

        def start() -> None:
            model.cross_cache(self.encoded, self.cache)
            logits = model.decoder(self.prompt, self.prompt_positions, self.cache, layer=decoder_layer)[:, -1]
            self._take(logits)
            self.position.fill_(PROMPT_TOKENS)

        def step() -> None:
            logits = model.decoder(self.tokens, self.position.view(1), self.cache, layer=decoder_layer)[:, -1]
            self._take(logits)
            self.position.add_(1)

        def at_last() -> None:
            # warm-up steps write the cache's last position, which every window writes again before reading it
            self.position.fill_(last)

        self._encode, self._start, self._step = encode, start, step
        if device.type == "cuda" and mode != "eager":
            self._encode = capture(torch, encode).replay
            self._start = capture(torch, start).replay
            self._step = capture(torch, step, before=at_last).replay
        elif mode in ("compile", "fused"):
            encode()  # compiled now, not inside the first timed window
            start()
            step()

    def _take(self, logits: Any) -> None:
        self.logits.copy_(logits)
        self.tokens.copy_(logits.argmax(dim=-1, keepdim=True))

    def encode(self) -> None:
        """The encoder on :attr:`mel`, into :attr:`encoded`."""
        self._encode()

    def start(self) -> None:
        """The cross-attention cache from :attr:`encoded` and the prompt's pass: the first transcribed token."""
        self._start()

    def step(self) -> None:
        """One more token of every window."""
        self._step()

    def decode(self) -> None:
        """A window's decoder work: :meth:`start`, then a step for each further token."""
        self.start()
        for _ in range(self.tokens_per_window - 1):
            self.step()

    def greedy(self) -> tuple[Any, Any]:
        """Every transcribed token [batch, tokens] and its logits [batch, tokens, vocab] of the window in :attr:`mel`
        (each token the argmax of its logits, fed back)."""
        self.encode()
        self.start()
        tokens, logits = [self.tokens.clone()], [self.logits.clone()]
        for _ in range(self.tokens_per_window - 1):
            self.step()
            tokens.append(self.tokens.clone())
            logits.append(self.logits.clone())
        return self.torch.cat(tokens, dim=1), self.torch.stack(logits, dim=1)
