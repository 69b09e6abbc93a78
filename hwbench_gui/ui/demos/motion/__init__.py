"""Demos → Motion transfer: the page, its controls, its image views and the job that runs the pipeline."""
