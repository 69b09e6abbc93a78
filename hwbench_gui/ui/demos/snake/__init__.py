"""Demos → Snake: the page, its board, its controls and its training plots."""
