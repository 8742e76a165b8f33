"""One Book-SORT cell (spec §3.2–§3.5): excerpts, segment pairs, uniformity gates.

Published Book-SORT rows are reproducible only when every legacy ``RandomState`` call is made
in upstream's order (§3.4), so :func:`build_cell` follows that order literally. ``fast=True``
swaps in exact shortcuts from :mod:`.fastrng` and vectorised bookkeeping; ``fast=False`` is the
literal transcription kept for cross-checks. Both give identical rows for any seed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mindprobe.benchmarks.sort.fastrng import ArangeBuffer, first_valid
from mindprobe.benchmarks.sort.preprocess import Book
from mindprobe.errors import MindprobeError, UsageError

EXCERPT_LENGTHS: tuple[int, ...] = (250, 1000, 2500, 10000, 20000)
SEGMENT_LENGTHS: tuple[int, ...] = (20, 50)
CONDITIONS: tuple[tuple[int, int], ...] = tuple(
    (le, ls) for le in EXCERPT_LENGTHS for ls in SEGMENT_LENGTHS)
N_EXCERPTS = 110
EXTRA_EXCERPTS = 40  # X: the published data needs 40, upstream's run script says 50 (§3.6)
N_BINS = 4
MAX_EXCERPT_ATTEMPTS = 101
MAX_SEGMENT_TRIES = 10_001
GATE_ALPHA = 0.05

# Cells whose default seed fails the segment gate; the published files used these (§3.6).
SEED_OVERRIDES: dict[tuple[int, int, int], int] = {
    (72600, 250, 50): 8382,
    (72869, 250, 50): 2605,
}

#: Cells that fail a uniformity gate with their seed (the default, or SEED_OVERRIDES'), on the
#: nine pinned books (sha256-verified) with this algorithm: a fact of the data, so a build
#: skips them and a dry run counts the cells a build will give without building (86 cells in
#: the grid, 83 built; tests/sort/test_sort_estimated.py builds the grid and checks the list).
BUILD_FAILURES: frozenset[tuple[int, int, int]] = frozenset({
    (72869, 1000, 50),   # segment gate: KS p=0.0446
    (72578, 2500, 20),   # segment gate: KS p=0.0051
    (72869, 10000, 50),  # segment gate: KS p=0.0074
})

_EXEMPT = frozenset({"mr.", "mrs.", "dr."})

Progress = Callable[["CellProgress"], None]


@dataclass(frozen=True)
class CellProgress:
    """One progress tick: ``done`` of ``total`` work units of a cell (a bar per cell)."""

    book_idx: int
    excerpt_length: int
    segment_length: int
    stage: str  # "excerpts", "segments", "done" or "failed"
    done: int
    total: int


class CellFailed(MindprobeError):
    """A cell failed a uniformity gate (or had too many unusable excerpts) with its seed."""

    def __init__(self, book_idx: int, excerpt_length: int, segment_length: int, seed: int,
                 stage: str, detail: str) -> None:
        self.book_idx, self.excerpt_length, self.segment_length = (
            book_idx, excerpt_length, segment_length)
        self.seed, self.stage, self.detail = seed, stage, detail
        key = (book_idx, excerpt_length, segment_length)
        cell = f"{book_idx}·{excerpt_length}·{segment_length}"
        if key in SEED_OVERRIDES and SEED_OVERRIDES[key] != seed:
            hint = (f"the published Book-SORT cell used seed {SEED_OVERRIDES[key]}: "
                    f"--seed-override {book_idx}:{excerpt_length}:{segment_length}="
                    f"{SEED_OVERRIDES[key]}")
        else:
            hint = (f"retry with another seed: --seed-override "
                    f"{book_idx}:{excerpt_length}:{segment_length}=<seed>")
        super().__init__(f"cell {cell} (seed {seed}) failed at {stage}: {detail}; {hint}")


@dataclass
class CellResult:
    """One book×condition: 110 excerpts and 440 segment rows (spec §3.5 fields)."""

    book_idx: int
    book_title: str
    num_words: int
    excerpt_length: int
    segment_length: int
    seed: int
    excerpts: list[dict[str, Any]]
    segments: list[dict[str, Any]]
    excerpt_pvalue: float
    segment_pvalue: float
    excerpt_attempts: int = 1
    bad_excerpts: list[int] = field(default_factory=list)


def distance_edges(excerpt_length: int, segment_length: int) -> list[int]:
    """Bin edges e0..e4 (§3.2); bin k is (e_k, e_{k+1}), labelled by its right edge."""
    le = excerpt_length
    if le < 5000:
        return [segment_length, le // 4, le // 3, le // 2, int(le // 1.25)]
    return [segment_length, 1000, le // 4, le // 2, int(le // 1.25)]


def distance_bins(excerpt_length: int, segment_length: int) -> list[tuple[int, int]]:
    """The four (left, right) distance bins, ascending."""
    e = distance_edges(excerpt_length, segment_length)
    return [(e[k], e[k + 1]) for k in range(N_BINS)]


def has_sentence_marker(word: str) -> bool:
    """A word ends a sentence if it contains . ? ! or ; (``Mr.``, ``Mrs.``, ``Dr.`` exempt)."""
    if "." in word or "?" in word or "!" in word or ";" in word:
        return len(word) > 4 or word.lower() not in _EXEMPT
    return False


def sentence_markers(words: Sequence[str]) -> np.ndarray:
    """Boolean array: word i has a sentence marker."""
    return np.fromiter(map(has_sentence_marker, words), dtype=bool, count=len(words))


def sentence_starts(words: Sequence[str]) -> list[int]:
    """Indices that begin a sentence: 0 and every index after a marker word (§3.3)."""
    markers = sentence_markers(words)
    return [0, *(np.flatnonzero(markers[:-1]) + 1).tolist()] if len(words) else []


def default_seed(book_idx: int, excerpt_length: int, segment_length: int) -> int:
    """Upstream's per-cell seed."""
    return book_idx + excerpt_length + segment_length


def cell_seed(book_idx: int, excerpt_length: int, segment_length: int,
              overrides: Mapping[tuple[int, int, int], int] | None = None) -> int:
    """Seed for a cell: an override when present, else the default."""
    table = SEED_OVERRIDES if overrides is None else overrides
    return table.get((book_idx, excerpt_length, segment_length),
                     default_seed(book_idx, excerpt_length, segment_length))


def wrap_segment(text: str) -> str:
    """Published form of a segment string."""
    return f"*{text}*"


def wrap_excerpt(text: str) -> str:
    """Published form of an excerpt string (the trailing blank line separates the prompt)."""
    return f"*{text}*\n\n"


def _ks_uniform(positions: list[float], upper: float) -> float:
    from scipy import stats

    return float(stats.kstest(positions, stats.uniform(0, upper).cdf).pvalue)


def _ks_two_sample(x: Sequence[int], y: np.ndarray) -> float:
    from scipy import stats

    return float(stats.kstest(np.asarray(x), y).pvalue)


class _Gate(Exception):
    """Internal: a gate failed; build_cell turns it into CellFailed naming the cell."""

    def __init__(self, stage: str, detail: str) -> None:
        super().__init__(stage, detail)
        self.stage, self.detail = stage, detail


class _Ticker:
    def __init__(self, progress: Progress | None, book: int, le: int, ls: int, total: int):
        self.progress, self.key, self.total, self.done = progress, (book, le, ls), total, 0

    def __call__(self, stage: str, step: int = 0) -> None:
        if self.progress is not None:
            self.done = min(self.total, self.done + step) if stage != "done" else self.total
            self.progress(CellProgress(*self.key, stage, self.done, self.total))


def _draw_excerpts(rs: np.random.RandomState, markers: np.ndarray, starts: np.ndarray,
                   n_words: int, le: int, m_total: int, fast: bool, buffer: ArangeBuffer,
                   tick: _Ticker) -> tuple[list[int], float, int]:
    """Step 1: M excerpt starts, redrawn as a whole until positions look uniform."""
    span = n_words - le
    p = 0.0
    for attempt in range(1, MAX_EXCERPT_ATTEMPTS + 1):
        if fast:  # the back-off to a sentence start draws nothing: do it once, vectorised
            raw = np.array([buffer.permutation_first(rs, span) for _ in range(m_total)])
            chosen = starts[np.searchsorted(starts, raw, side="right") - 1].tolist()
        else:
            chosen = []
            for _ in range(m_total):
                r = int(rs.permutation(span)[0])
                while r > 0 and not markers[r - 1]:
                    r -= 1
                chosen.append(r)
        tick("excerpts", m_total if attempt == 1 else 0)
        p = _ks_uniform([r / n_words for r in chosen], span / n_words)
        if p > GATE_ALPHA:
            return chosen, p, attempt
    raise _Gate("excerpt uniformity", f"KS p={p:.4g} <= {GATE_ALPHA} after "
                f"{MAX_EXCERPT_ATTEMPTS} attempts")


def _pick_plain(rs: np.random.RandomState, starts: list[int], left: int,
                right: int) -> tuple[int, int] | None:
    """Literal step 3 for one excerpt and bin: returns (s, o), or None when never found."""
    for _ in range(MAX_SEGMENT_TRIES):
        s = starts[rs.permutation(len(starts))[0]]
        cands = [x - s for x in starts if x != s and left < abs(x - s) <= right]
        if cands:
            return s, cands[rs.randint(0, len(cands))]
    return None


def _valid_starts(rel_starts: list[np.ndarray], left: int, right: int,
                  spread: int) -> list[np.ndarray]:
    """Per excerpt: which starts have another start at a distance in (left, right].

    All excerpts are searched at once by offsetting excerpt m by m·spread (> any distance).
    """
    flat = np.concatenate([s + m * spread for m, s in enumerate(rel_starts)])
    n = len(flat)
    # nearest start beyond s + left must be <= s + right; nearest below s - left >= s - right
    up = np.searchsorted(flat, flat + left, side="right")
    valid = flat[np.minimum(up, n - 1)] <= flat + right
    valid &= up < n
    down = np.searchsorted(flat, flat - left, side="left") - 1
    valid |= (down >= 0) & (flat[np.maximum(down, 0)] >= flat - right)
    cuts = np.cumsum([len(s) for s in rel_starts])[:-1]
    return np.split(valid, cuts)


def _pick_fast(rs: np.random.RandomState, starts: np.ndarray, valid: np.ndarray, left: int,
               right: int, buffer: ArangeBuffer) -> tuple[int, int] | None:
    """Step 3 with a precomputed validity mask: only the chosen start's list C is built."""
    idx, _ = first_valid(rs, valid, MAX_SEGMENT_TRIES, buffer)
    if idx is None:
        return None
    s = int(starts[idx])
    diffs = starts - s
    dist = np.abs(diffs)
    cands = diffs[(diffs != 0) & (dist > left) & (dist <= right)]
    return s, int(cands[rs.randint(0, len(cands))])


def build_cell(book: Book, excerpt_length: int, segment_length: int, *,
               seed: int | None = None, n_excerpts: int = N_EXCERPTS,
               extra: int = EXTRA_EXCERPTS, fast: bool = True, wrap: bool = True,
               markers: np.ndarray | None = None, progress: Progress | None = None) -> CellResult:
    """Build one book×condition exactly as §3.4; raises :class:`CellFailed` on a gate failure.

    ``seed`` defaults to book_idx + L_E + L_S (no override applied here); ``wrap`` gives the
    published ``*…*`` strings; ``markers`` may pass a cached :func:`sentence_markers` array.
    """
    le, ls, words = excerpt_length, segment_length, book.words
    n_words = len(words)
    seed = default_seed(book.book_idx, le, ls) if seed is None else int(seed)
    edges = distance_edges(le, ls)
    if not edges[0] < edges[1] < edges[2] < edges[3] < edges[4]:
        raise UsageError(f"segment length {ls} is too long for excerpt length {le}: "
                         f"distance bin edges {edges} must increase")
    if n_words - le < 1:
        raise UsageError(f"book {book.book_idx} has {n_words} words, too few for excerpt "
                         f"length {le}")
    markers = sentence_markers(words) if markers is None else markers
    global_starts = np.concatenate(([0], np.flatnonzero(markers[:-1]) + 1))
    m_total = n_excerpts + extra
    tick = _Ticker(progress, book.book_idx, le, ls, m_total * (1 + N_BINS))
    rs = np.random.RandomState(seed)
    buffer = ArangeBuffer(n_words - le if fast else 0)
    try:
        chosen, p_exc, attempts = _draw_excerpts(rs, markers, global_starts, n_words, le,
                                                 m_total, fast, buffer, tick)
        plan = np.array([m % 2 for m in range(m_total)])
        rel_starts = []
        if fast:  # relative sentence starts usable as segment starts: < L_E - L_S
            bounds = np.searchsorted(global_starts, np.array(chosen + [r + le - ls
                                                                       for r in chosen]))
        for i, r in enumerate(chosen):
            if fast:
                rel_starts.append(global_starts[bounds[i]:bounds[i + m_total]] - r)
            else:
                rel_starts.append(np.array(
                    [k for k in range(le - ls) if k == 0 or markers[r + k - 1]], dtype=np.int64))
        bad: set[int] = set()
        pairs: list[dict[int, tuple[int, int, int]]] = []
        collected: list[np.ndarray] = []
        for left, right in distance_bins(le, ls):
            order = rs.permutation(plan)
            found: dict[int, tuple[int, int, int]] = {}
            if fast:
                valid = _valid_starts(rel_starts, left, right, 4 * le)
            for m in range(m_total):
                if fast:
                    pick = _pick_fast(rs, rel_starts[m], valid[m], left, right, buffer)
                else:
                    pick = _pick_plain(rs, rel_starts[m].tolist(), left, right)
                if pick is None or abs(pick[1]) >= right:
                    bad.add(m)
                    continue
                collected.append(rel_starts[m])
                found[m] = (pick[0], pick[0] + pick[1], int(order[m]))
            pairs.append(found)
            tick("segments", m_total)
        keep = _drop_extra(rs, m_total, extra, bad)
        kept = set(keep)
        first_listed = [min(a, b) if pi == 0 else max(a, b)
                        for found in pairs for m, (a, b, pi) in sorted(found.items())
                        if m in kept]
        p_seg = _ks_two_sample(first_listed, np.concatenate(collected))
        if p_seg <= GATE_ALPHA:
            raise _Gate("segment uniformity", f"KS p={p_seg:.4g} <= {GATE_ALPHA}")
    except _Gate as gate:
        tick("failed")
        raise CellFailed(book.book_idx, le, ls, seed, gate.stage, gate.detail) from None
    result = _rows(book, le, ls, seed, chosen, keep, pairs, edges, wrap)
    result.excerpt_pvalue, result.segment_pvalue = p_exc, p_seg
    result.excerpt_attempts, result.bad_excerpts = attempts, sorted(bad)
    tick("done")
    return result


def _drop_extra(rs: np.random.RandomState, m_total: int, extra: int, bad: set[int]) -> list[int]:
    """Step 4: drop exactly X excerpts (all bad ones first); survivors keep their order."""
    if len(bad) > extra:
        raise _Gate("segment sampling", f"{len(bad)} excerpts have no valid segment pair in "
                    f"some bin, more than the {extra} spare ones")
    if not bad:
        dropped = set(rs.permutation(m_total)[:extra].tolist())
    else:
        good = [m for m in range(m_total) if m not in bad]
        picked = rs.permutation(len(good))[:extra - len(bad)]
        dropped = bad | {good[i] for i in picked.tolist()}
    return [m for m in range(m_total) if m not in dropped]


def _rows(book: Book, le: int, ls: int, seed: int, chosen: list[int], keep: list[int],
          pairs: list[dict[int, tuple[int, int, int]]], edges: list[int],
          wrap: bool) -> CellResult:
    words, n_words = book.words, len(book.words)
    seg = wrap_segment if wrap else (lambda t: t)
    exc = wrap_excerpt if wrap else (lambda t: t)
    excerpts = [{"book_idx": book.book_idx, "excerpt_idx": k, "excerpt_pos": chosen[m] / n_words,
                 "excerpt_text": exc(" ".join(words[chosen[m]:chosen[m] + le]))}
                for k, m in enumerate(keep)]
    segments = []
    for b, found in enumerate(pairs):
        for k, m in enumerate(keep):
            a, c, pi = found[m]
            first, second = min(a, c), max(a, c)
            base = chosen[m]
            segments.append({
                "book_idx": book.book_idx, "excerpt_idx": k, "segment_idx": 0,
                "segment_1": seg(" ".join(words[base + first:base + first + ls])),
                "segment_2": seg(" ".join(words[base + second:base + second + ls])),
                "seg1_pos": first, "seg2_pos": second, "distance_bin": edges[b + 1],
                "present_seg1_first": 1 - pi,
            })
    return CellResult(book.book_idx, book.book_title, book.num_words, le, ls, seed,
                      excerpts, segments, 0.0, 0.0)
