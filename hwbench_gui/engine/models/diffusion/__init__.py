"""Text-to-image diffusion models (an SDXL-class UNet, a Flux-class MMDiT, tiny ones for tests), declared once."""
