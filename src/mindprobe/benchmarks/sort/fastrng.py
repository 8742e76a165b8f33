"""Exact shortcuts for the legacy ``numpy.random.RandomState`` calls that Book-SORT makes.

Book-SORT is bit-exact only if every draw consumes the MT19937 stream exactly as upstream's
``permutation`` / ``randint`` calls did. What legacy numpy consumes:

* ``permutation(n)`` / ``shuffle`` run Fisher–Yates from the end: for i = n−1 … 1 one
  ``random_interval(i)``, i.e. 32-bit outputs masked to the next 2^k−1 ≥ i and rejected while
  > i. Element 0 is final only after all n−1 draws, so nothing can be skipped there.
* ``randint(0, high)`` (default int64) uses the same masked rejection on 32-bit outputs with
  ``high − 1`` as the bound, draws nothing when ``high == 1``, and with an *array* of highs it
  runs the whole sequence of bounded draws in one C loop.

So ``randint(0, [n, n−1, …, 2])`` consumes exactly what ``permutation(n)`` does and returns the
swap partners J; replaying J yields the permutation. That turns thousands of tiny Python-level
``permutation`` calls (the segment-start retries of §3.4 step 3) into a few vectorised calls.
The big excerpt draws stay on numpy's own shuffle — already the cheapest exact way — but reuse
one buffer instead of allocating ``arange`` each time.
"""

from __future__ import annotations

from typing import Any

import numpy as np

# Bulk consumption is done in chunks of about this many bounded draws (memory, not speed).
_CHUNK_DRAWS = 1 << 20


class ArangeBuffer:
    """Reusable ``arange`` copy for ``permutation(n)[0]`` without per-call allocation."""

    def __init__(self, size: int = 0) -> None:
        self._base = np.arange(size, dtype=np.int64)
        self._work = np.empty(size, dtype=np.int64)

    def permutation_first(self, rs: np.random.RandomState, n: int) -> int:
        """``rs.permutation(n)[0]`` with the identical stream consumption."""
        if n > len(self._base):
            self._base = np.arange(n, dtype=np.int64)
            self._work = np.empty(n, dtype=np.int64)
        work = self._work[:n]
        work[...] = self._base[:n]
        rs.shuffle(work)
        return int(work[0])


def swap_bounds(n: int) -> np.ndarray:
    """The ``randint`` highs [n, n−1, …, 2] that reproduce one ``permutation(n)``."""
    return np.arange(n, 1, -1, dtype=np.int64)


def consume_permutations(rs: np.random.RandomState, n: int, count: int) -> None:
    """Advance ``rs`` exactly as ``count`` calls of ``rs.permutation(n)`` would."""
    if n < 2 or count <= 0:
        return
    per_chunk = max(1, _CHUNK_DRAWS // (n - 1))
    bounds = swap_bounds(n)
    while count > 0:
        k = min(count, per_chunk)
        rs.randint(0, np.tile(bounds, k))
        count -= k


def first_elements(swaps: np.ndarray, n: int) -> np.ndarray:
    """Element 0 of each permutation given its swap partners (rows of ``swaps``, i = n−1…1)."""
    rows = swaps.shape[0]
    perm = np.tile(np.arange(n, dtype=np.int64), (rows, 1))
    ridx = np.arange(rows)
    for k, i in enumerate(range(n - 1, 0, -1)):
        j = swaps[:, k]
        tmp = perm[ridx, j].copy()
        perm[ridx, j] = perm[:, i]
        perm[:, i] = tmp
    return perm[:, 0]


def _get_state(rs: np.random.RandomState) -> dict[str, Any]:
    return rs.get_state(legacy=False)  # type: ignore[return-value]


def first_valid(rs: np.random.RandomState, valid: np.ndarray, max_tries: int,
                buffer: ArangeBuffer) -> tuple[int | None, int]:
    """Repeat ``rs.permutation(len(valid))[0]`` until it lands on a valid index.

    Returns (index or None, tries used); the stream ends exactly where the plain loop would
    leave it. No valid index: all ``max_tries`` draws are consumed in bulk. Few valid indices:
    draws are made in batches on a saved state, then replayed up to the first hit.
    """
    n = len(valid)
    n_valid = int(np.count_nonzero(valid))
    if n_valid == 0:
        consume_permutations(rs, n, max_tries)
        return None, max_tries
    if n == 1:
        return 0, 1
    tries = 0
    # Cheap path while a hit is likely within a few single draws.
    single = max_tries if n_valid * 4 >= n else 2
    while tries < min(single, max_tries):
        tries += 1
        idx = buffer.permutation_first(rs, n)
        if valid[idx]:
            return idx, tries
    bounds = swap_bounds(n)
    batch = int(min(max(8, 4 * n // n_valid), max(1, _CHUNK_DRAWS // (n - 1))))
    while tries < max_tries:
        k = min(batch, max_tries - tries)
        saved = _get_state(rs)
        swaps = rs.randint(0, np.tile(bounds, k)).reshape(k, n - 1)
        firsts = first_elements(swaps, n)
        hits = np.flatnonzero(valid[firsts])
        if hits.size:
            t = int(hits[0])
            rs.set_state(saved)
            consume_permutations(rs, n, t + 1)
            return int(firsts[t]), tries + t + 1
        tries += k
    return None, tries
