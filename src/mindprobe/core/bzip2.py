"""bzip2 decompressed block by block in threads: the same bytes as `bz2.decompress`, on every core.

libbz2 releases the GIL and a bzip2 stream's blocks are independent (each starts with a 48-bit
magic at any bit offset and carries its own CRC), so each block is re-framed as a one-block
stream of its own and decompressed in a thread pool; a caller parses block i while the next
ones decode. The official WorldSense file (3.3 MB, 80 blocks) costs a first run seconds of
libbz2 on one core otherwise. Anything unusual (a magic found inside the compressed data, a
block that fails, trailing bytes) falls back to plain `bz2.decompress`, which raises as before.
"""

from __future__ import annotations

import bz2
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

from mindprobe.core.process import usable_cpus

_BLOCK_MAGIC = 0x314159265359
_END_MAGIC = 0x177245385090
_MASK32 = 0xFFFFFFFF


def _find_magic(data: bytes, magic: int) -> list[int]:
    """Bit offsets of a 48-bit magic anywhere in `data` (at each of the 8 bit alignments,
    the 5 whole bytes it covers are searched with `bytes.find`, then its partial edges checked)."""
    hits: list[int] = []
    for shift in range(8):
        pattern = (magic << (8 - shift)).to_bytes(7, "big")  # magic after `shift` bits
        inner = pattern[1:6] if shift else pattern[:6]
        start = 0
        while (at := data.find(inner, start)) >= 0:
            start = at + 1
            first = at - 1 if shift else at
            if first < 0 or first + 6 + (shift > 0) > len(data):
                continue
            window = int.from_bytes(data[first:first + 7].ljust(7, b"\0"), "big")
            if (window >> (8 - shift)) & ((1 << 48) - 1) == magic:
                hits.append(first * 8 + shift)
    return sorted(hits)


def _bits(data: bytes, start: int, end: int) -> int:
    """Bits [start, end) of `data` as an integer."""
    lo, hi = start // 8, (end + 7) // 8
    value = int.from_bytes(data[lo:hi], "big")
    return (value >> (hi * 8 - end)) & ((1 << (end - start)) - 1)


def one_block_streams(data: bytes) -> list[bytes] | None:
    """Each block of a single bzip2 stream as a standalone one-block stream, in order, or None
    when `data` is not exactly one well-formed stream whose blocks are found unambiguously: the
    block CRCs found must combine into the stream's stored CRC, which a magic found inside the
    compressed data, or a missed one, would break."""
    if len(data) < 14 or data[:3] != b"BZh" or data[3] not in b"123456789":
        return None
    starts = _find_magic(data, _BLOCK_MAGIC)
    ends = _find_magic(data, _END_MAGIC)
    if len(ends) != 1 or not starts or starts[0] != 32 or starts[-1] >= ends[0]:
        return None
    end = ends[0]
    if (end + 48 + 32 + 7) // 8 != len(data):  # trailing bytes: another stream, or junk
        return None
    stored = _bits(data, end + 48, end + 80)
    header = int.from_bytes(data[:4], "big")
    combined, out = 0, []
    for a, b in zip(starts, [*starts[1:], end], strict=True):
        crc = _bits(data, a + 48, a + 80)
        combined = (((combined << 1) | (combined >> 31)) & _MASK32) ^ crc
        n = 32 + (b - a) + 48 + 32
        pad = -n % 8
        value = (((header << (b - a) | _bits(data, a, b)) << 48 | _END_MAGIC) << 32 | crc) << pad
        out.append(value.to_bytes((n + pad) // 8, "big"))
    return out if combined == stored else None


def decompress_pieces(data: bytes, threads: int | None = None) -> Iterator[bytes]:
    """The decompressed bytes of `data` (one or more bzip2 streams) in order, in pieces whose
    concatenation equals `bz2.decompress(data)`: a block per piece, decoded `threads` at a time
    ahead of the caller, or one piece from `bz2.decompress` where the blocks cannot be framed.
    Errors are `bz2.decompress`'s (OSError, ValueError for a cut file)."""
    blocks = one_block_streams(data)
    if blocks is None or len(blocks) < 2:
        yield bz2.decompress(data)
        return
    done = 0
    pool = ThreadPoolExecutor(max_workers=max(1, min(threads or usable_cpus(), len(blocks))))
    try:
        for piece in pool.map(bz2.decompress, blocks):
            done += len(piece)
            yield piece
        return
    except (OSError, EOFError, ValueError, RuntimeError):  # a block misframed, or no thread
        pass  # to be had (a limit, interpreter shutdown): the plain way, from here
    finally:  # a caller that stops early (a bad line) does not wait for the blocks left
        pool.shutdown(wait=True, cancel_futures=True)
    yield bz2.decompress(data)[done:]
