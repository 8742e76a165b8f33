"""The exact legacy-RandomState shortcuts: same numbers, same stream position afterwards."""

from __future__ import annotations

import numpy as np
import pytest

from mindprobe.benchmarks.sort.fastrng import (
    ArangeBuffer,
    consume_permutations,
    first_elements,
    first_valid,
    swap_bounds,
)


def _same_stream(a: np.random.RandomState, b: np.random.RandomState) -> bool:
    return a.randint(0, 2**31, size=4).tolist() == b.randint(0, 2**31, size=4).tolist()


@pytest.mark.parametrize("n", [1, 2, 3, 17, 1000, 70000])
def test_buffer_permutation_first(n):
    plain, fast, buffer = np.random.RandomState(n), np.random.RandomState(n), ArangeBuffer(5)
    for _ in range(3):
        assert buffer.permutation_first(fast, n) == plain.permutation(n)[0]
    assert _same_stream(plain, fast)


def test_randint_with_swap_bounds_is_a_permutation():
    plain, fast = np.random.RandomState(11), np.random.RandomState(11)
    n = 40
    expected = [plain.permutation(n) for _ in range(5)]
    swaps = fast.randint(0, np.tile(swap_bounds(n), 5)).reshape(5, n - 1)
    assert first_elements(swaps, n).tolist() == [p[0] for p in expected]
    assert _same_stream(plain, fast)


@pytest.mark.parametrize("n,count", [(1, 5), (2, 3), (13, 10001), (300, 7)])
def test_consume_permutations(n, count):
    plain, fast = np.random.RandomState(5), np.random.RandomState(5)
    for _ in range(count):
        plain.permutation(n)
    consume_permutations(fast, n, count)
    assert _same_stream(plain, fast)


def test_first_valid_matches_the_retry_loop():
    gen = np.random.default_rng(0)
    buffer = ArangeBuffer()
    for _ in range(150):
        n = int(gen.integers(1, 40))
        valid = gen.random(n) < gen.choice([0.0, 0.03, 0.2, 0.9])
        max_tries = int(gen.choice([3, 60, 10001]))
        seed = int(gen.integers(0, 2**31))
        plain, fast = np.random.RandomState(seed), np.random.RandomState(seed)
        expected: tuple[int | None, int] = (None, max_tries)
        for t in range(1, max_tries + 1):
            idx = int(plain.permutation(n)[0])
            if valid[idx]:
                expected = (idx, t)
                break
        assert first_valid(fast, valid, max_tries, buffer) == expected
        assert _same_stream(plain, fast)
