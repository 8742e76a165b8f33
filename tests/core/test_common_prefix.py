"""The shared prefix a plan's prefill estimate subtracts: found by halving (C slice
comparisons), the same length `os.path.commonprefix` gives, at any size."""

from __future__ import annotations

import os
import random

from mindprobe.core.estimate import common_prefix_length


def test_same_as_commonprefix():
    rng = random.Random(3)
    for _ in range(500):
        base = "".join(rng.choice("ab") for _ in range(rng.randrange(0, 40)))
        a = base + "".join(rng.choice("abc") for _ in range(rng.randrange(0, 5)))
        b = base + "".join(rng.choice("abc") for _ in range(rng.randrange(0, 5)))
        assert common_prefix_length(a, b) == len(os.path.commonprefix([a, b]))


def test_long_texts_at_the_edges():
    text = "word " * 40_000
    assert common_prefix_length(text, text) == len(text)
    assert common_prefix_length(text, text + "more") == len(text)
    assert common_prefix_length(text, "X" + text) == 0
    assert common_prefix_length(text, text[:-1] + "!") == len(text) - 1
    assert common_prefix_length("", text) == 0
