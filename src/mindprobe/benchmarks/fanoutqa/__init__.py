"""FanOutQA (Zhu et al., ACL 2024): multi-hop, multi-document fan-out questions over Wikipedia.

Benchmark-side, model-agnostic parts only: the nov23 data (read from the ``fanoutqa==1.1.1`` wheel
without importing it), the paper's closed-book / open-book / evidence-provided prompts, the
chunker and BM25+ retrieval, and the exact metrics (accuracy, ROUGE, BLEURT hook, GPT judge).
"""
