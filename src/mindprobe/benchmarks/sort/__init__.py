"""SORT / Book-SORT (Pink et al. 2024): sequence order recall — data, prompts, scoring, metrics.

Modules: ``preprocess`` (Gutenberg → words), ``cell``/``build``/``fastrng``/``export``
(dataset creation), ``data`` (local loading), ``upstream`` (upstream's prompt YAMLs and
evaluation.py, read as pinned official data), ``prompts`` (rendered as upstream renders them),
``scoring``, ``metrics``, ``retrieval``, ``report`` (tables and plots), ``verbs`` (build,
sweep, export, analyse). Spec: shared/specs/sort.md; where it paraphrases a
template, upstream's files (``upstream``) are the authority.
"""
