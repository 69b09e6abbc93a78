"""The vocabulary every engine layer shares: what a benchmark declares (``benchmark``), precision
labels (``precision``) and device names (``device``). Declared once here; nothing below imports it."""
