"""Language models served over HTTP: an OpenAI-compatible streaming client and its load (``llm.endpoint``), the
latency limits a load is held to, and ``hwbench serve`` (hwbench's own engine behind the same API)."""
