"""Speech recognition models (Whisper): architectures declared once, the model, its arithmetic, the log-mel front
end and a user's Hugging Face folder read through safetensors."""
