"""Demos tab: one page per demo (snake, motion transfer, tracking), each in its own package."""
