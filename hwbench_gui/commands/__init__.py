"""Subcommands of the ``hwbench`` CLI, one module each (no Qt here)."""
