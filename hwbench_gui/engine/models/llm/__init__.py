"""Decoder-only language models: architectures declared once (``architectures``), their arithmetic
(``arithmetic``: parameters, bytes and FLOPs per token, no torch), the PyTorch decoder (``model``) and
a user's Hugging Face folder loaded through safetensors (``weights``). Shared by inference and training."""
