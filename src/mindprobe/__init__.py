"""mindprobe: faithful, resumable runs of published LLM cognition benchmarks."""

__version__ = "0.1.0"
