"""hwbench: what a deep-learning workstation really delivers, and where its data path chokes."""

__version__ = "0.1.0"
