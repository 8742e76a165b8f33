"""SORT / Book-SORT (Pink et al. 2024): sequence order recall — data, prompts, scoring, metrics.

Modules: ``preprocess`` (Gutenberg → words), ``cell``/``build``/``fastrng``/``export``
(dataset creation), ``dataset`` (local loading), ``prompts``, ``scoring``, ``metrics``,
``retrieval``. Spec: shared/specs/sort.md.
"""
