"""Whisper's front end with torch: synthesised speech-like audio and its log-mel spectrogram, computed as OpenAI's
``whisper.audio.log_mel_spectrogram`` and transformers' ``WhisperFeatureExtractor`` compute it (a test holds the two
together): a 400-point STFT every 160 samples with a periodic Hann window, Slaney mel filters up to 8 kHz, log10,
floored 8 below the maximum and scaled to about [-1, 1].

The encoder's speed does not depend on what the audio says, but a window of real log-mel values keeps the run
honest about its input (never zeros) and lets a user see the whole path from samples to tokens.
"""

from __future__ import annotations

import math
from typing import Any

from hwbench_gui.engine.models.speech.architectures import HOP, N_FFT, SAMPLE_RATE, WINDOW_S

HARMONICS = 24


def _hz_to_mel(hz: Any) -> Any:
    """Slaney's mel scale: linear below 1 kHz, logarithmic above (librosa's default, htk=False)."""
    import torch

    hz = torch.as_tensor(hz, dtype=torch.float64)
    linear = hz / (200.0 / 3)
    log = 15.0 + torch.log(torch.clamp(hz, min=1e-10) / 1000.0) / (math.log(6.4) / 27.0)
    return torch.where(hz >= 1000.0, log, linear)


def _mel_to_hz(mel: Any) -> Any:
    import torch

    linear = mel * (200.0 / 3)
    log = 1000.0 * torch.exp((math.log(6.4) / 27.0) * (mel - 15.0))
    return torch.where(mel >= 15.0, log, linear)


def mel_filters(mels: int, sample_rate: int = SAMPLE_RATE, n_fft: int = N_FFT) -> Any:
    """[mels, n_fft // 2 + 1] triangular filters on Slaney's mel scale from 0 Hz to the Nyquist frequency, each
    normalised to unit area (Slaney's norm), in float64."""
    import torch

    fft_hz = torch.linspace(0.0, sample_rate / 2, n_fft // 2 + 1, dtype=torch.float64)
    edges = _mel_to_hz(torch.linspace(float(_hz_to_mel(0.0)), float(_hz_to_mel(sample_rate / 2)), mels + 2,
                                      dtype=torch.float64))
    lower = (fft_hz[None, :] - edges[:-2, None]) / (edges[1:-1] - edges[:-2])[:, None]
    upper = (edges[2:, None] - fft_hz[None, :]) / (edges[2:] - edges[1:-1])[:, None]
    weights = torch.clamp(torch.minimum(lower, upper), min=0.0)
    return weights * (2.0 / (edges[2:] - edges[:-2]))[:, None]


def log_mel(audio: Any, mels: int) -> Any:
    """[batch, mels, frames] float32 log-mel of ``audio`` [batch, samples] at 16 kHz (frames = samples / 160)."""
    import torch

    window = torch.hann_window(N_FFT, dtype=torch.float32, device=audio.device)
    spectrum = torch.stft(audio.float(), N_FFT, HOP, window=window, return_complex=True, pad_mode="reflect")
    power = spectrum[..., :-1].abs() ** 2
    filters = mel_filters(mels).to(device=audio.device, dtype=torch.float32)
    log = torch.clamp(filters @ power, min=1e-10).log10()
    log = torch.maximum(log, log.amax(dim=(-2, -1), keepdim=True) - 8.0)
    return (log + 4.0) / 4.0


def speech_like(batch: int, seed: int = 0, seconds: float = WINDOW_S, device: str = "cpu") -> Any:
    """[batch, samples] float32 audio: a voiced source (a 90-250 Hz fundamental gliding like intonation, with its
    harmonics shaped by three formants) switched on and off at a syllable rate of about 4 Hz, over
    quiet noise, made on ``device``. Not speech: a signal with speech's spectral shape and rhythm, different for each
    window."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    n = int(seconds * SAMPLE_RATE)
    t = torch.arange(n, dtype=torch.float64, device=device) / SAMPLE_RATE
    harmonics = torch.arange(1, HARMONICS + 1, dtype=torch.float64, device=device)[:, None]
    out = []
    for _ in range(batch):
        base = 90.0 + 160.0 * float(torch.rand(1, generator=generator, dtype=torch.float64))
        f0 = base * (1.0 + 0.15 * torch.sin(2 * math.pi * 0.3 * t))
        phase = (2 * math.pi * torch.cumsum(f0, 0) / SAMPLE_RATE).float()
        formants = (500.0 + 2000.0 * torch.rand(3, generator=generator, dtype=torch.float64)).tolist()
        # each harmonic's gain follows the formants at the mean fundamental (the glide moves it by 15 %)
        gain = sum(torch.exp(-((harmonics[:, 0] * base - f) / 150.0) ** 2) for f in formants) / harmonics[:, 0]
        voiced = (gain.float()[:, None] * torch.sin(harmonics.float() * phase[None, :])).sum(dim=0)
        syllables = (torch.sin(2 * math.pi * 4.0 * t + 6.28 * float(torch.rand(1, generator=generator)))
                     > -0.2).float()
        noise = 0.01 * torch.randn(n, generator=generator).to(device)
        out.append(0.3 * voiced * syllables + noise)
    return torch.stack(out)
